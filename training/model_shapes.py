"""Model shapes for the memory planner (``training.memory_plan``): what memory depends on in a
decoder-only transformer, read from a Hugging Face ``config.json`` (a local model directory or the Hugging
Face cache, nothing downloaded) or built in for the Qwen3 models the product suggests.

This module imports nothing from Django or torch.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ModelShape:
    """What memory depends on in a decoder-only transformer (a Hugging Face ``config.json``'s fields)."""

    name: str
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    intermediate_size: int
    tie_word_embeddings: bool = True

    @property
    def layer_params(self) -> int:
        h, q, kv = self.hidden_size, self.num_heads * self.head_dim, self.num_kv_heads * self.head_dim
        attention = h * q + 2 * h * kv + q * h + 2 * self.head_dim  # q, k, v, o and the q/k norms
        return attention + 3 * h * self.intermediate_size + 2 * h  # gate, up, down and two RMSNorms

    @property
    def kv_bytes_per_token(self) -> int:
        """vLLM's bfloat16 K and V cache per token, all layers."""
        return 2 * self.num_layers * self.num_kv_heads * self.head_dim * 2

    @property
    def params(self) -> int:
        embeddings = self.vocab_size * self.hidden_size * (1 if self.tie_word_embeddings else 2)
        return self.num_layers * self.layer_params + embeddings + self.hidden_size

    @classmethod
    def from_hf_config(cls, name: str, data: dict[str, Any]) -> ModelShape:
        """From a ``config.json`` mapping; raises ValueError naming the missing field."""
        try:
            h = int(data["hidden_size"])
            heads = int(data["num_attention_heads"])
            return cls(
                name=name,
                hidden_size=h,
                num_layers=int(data["num_hidden_layers"]),
                num_heads=heads,
                num_kv_heads=int(data.get("num_key_value_heads") or heads),
                head_dim=int(data.get("head_dim") or h // heads),
                vocab_size=int(data["vocab_size"]),
                intermediate_size=int(data["intermediate_size"]),
                tie_word_embeddings=bool(data.get("tie_word_embeddings", False)),
            )
        except KeyError as exc:
            raise ValueError(f"{name}: config.json has no {exc.args[0]!r}") from exc


#: shapes of the models the product suggests, from their published config.json files.
KNOWN_SHAPES: dict[str, ModelShape] = {
    "qwen/qwen3-0.6b": ModelShape("Qwen/Qwen3-0.6B", 1024, 28, 16, 8, 128, 151936, 3072, True),
    "qwen/qwen3-1.7b": ModelShape("Qwen/Qwen3-1.7B", 2048, 28, 16, 8, 128, 151936, 6144, True),
    "qwen/qwen3-4b": ModelShape("Qwen/Qwen3-4B", 2560, 36, 32, 8, 128, 151936, 9728, True),
    "qwen/qwen3-8b": ModelShape("Qwen/Qwen3-8B", 4096, 36, 32, 8, 128, 151936, 12288, False),
}


def _hf_cache_dirs() -> list[Path]:
    hub = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if hub:
        return [Path(hub)]
    home = os.environ.get("HF_HOME") or str(Path.home() / ".cache" / "huggingface")
    return [Path(home) / "hub"]


def _config_json(name: str) -> Path | None:
    local = Path(name).expanduser()
    if (local / "config.json").is_file():
        return local / "config.json"
    if "/" not in name or name.startswith(("/", ".", "~")):
        return None
    folder = "models--" + name.replace("/", "--")
    for cache in _hf_cache_dirs():
        snapshots = cache / folder / "snapshots"
        if snapshots.is_dir():
            found = sorted(snapshots.glob("*/config.json"), key=lambda p: p.stat().st_mtime, reverse=True)
            if found:
                return found[0]
    return None


def model_shape(name: str) -> ModelShape:
    """The shape of ``name``: a local directory's or the HF cache's config.json, else a known Qwen3 shape.

    Raises ValueError saying where it looked when the shape is unknown (nothing is downloaded)."""
    path = _config_json(name)
    if path is not None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: cannot read the model's config.json ({exc})") from exc
        if isinstance(data.get("text_config"), dict):  # multimodal wrappers keep the LM's shape inside
            data = data["text_config"]
        return ModelShape.from_hf_config(name, data)
    key = name.strip().lower()
    for known, shape in KNOWN_SHAPES.items():
        if key == known or key.startswith(known + "-"):  # Qwen/Qwen3-4B-Instruct-2507 has 4B's shape
            return shape
    raise ValueError(
        f"unknown model shape for {name!r}: not a local directory with a config.json, not in the Hugging "
        f"Face cache, and not one of {', '.join(s.name for s in KNOWN_SHAPES.values())}"
    )


__all__ = ["KNOWN_SHAPES", "ModelShape", "model_shape"]
