"""Sections of the run configuration that say what a run reads and runs on: the dataset, the rollout
engine, prompt rendering and the held-out evaluation (the method's sections are in
``training.config_sections``). Import them from ``training.config``.

This module imports nothing from Django.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from training.config_sections import _help, _require


@dataclass(frozen=True)
class DatasetConfig:
    release: str = field(
        default="",
        metadata=_help("Path of a dataset release JSONL file (one exported problem per line)."),
    )
    max_problems: int | None = field(
        default=None, metadata=_help("Use only the first N problems of the release; empty = all.")
    )

    def __post_init__(self) -> None:
        _require(
            self.max_problems is None or self.max_problems >= 1, "dataset.max_problems must be >= 1 or empty."
        )


@dataclass(frozen=True)
class RolloutConfig:
    engine: Literal["transformers", "vllm"] = field(
        default="transformers",
        metadata=_help(
            "Rollout engine: 'transformers' (CPU or GPU, batched KV-cache sampling) or 'vllm' "
            "(GPU only; the policy weights are synced into it after each update)."
        ),
    )
    batch_size: int = field(
        default=0,
        metadata=_help(
            "Sequences generated together by the transformers engine; 0 = the whole step at once."
        ),
    )
    gpu_memory_utilization: float = field(
        default=0.35,
        metadata=_help(
            "vLLM: share of GPU memory for its weights and KV cache (it shares the GPU with training)."
        ),
    )
    enforce_eager: bool = field(
        default=False, metadata=_help("vLLM: disable CUDA graphs (slower, less memory).")
    )
    sleep_level: int = field(
        default=2,
        metadata=_help(
            "vLLM sleep mode between rollouts: 2 frees the KV cache and discards the weights (re-synced "
            "from the policy after each update), 1 offloads the weights to CPU memory instead, 0 keeps "
            "both on the GPU through the update."
        ),
    )

    def __post_init__(self) -> None:
        _require(
            self.engine in ("transformers", "vllm"),
            f"rollout.engine must be transformers or vllm, got {self.engine!r}.",
        )
        _require(self.batch_size >= 0, "rollout.batch_size must be >= 0 (0 = all at once).")
        _require(
            self.sleep_level in (0, 1, 2), f"rollout.sleep_level must be 0, 1 or 2, got {self.sleep_level}."
        )
        _require(
            0.05 <= self.gpu_memory_utilization <= 0.95,
            f"rollout.gpu_memory_utilization must be in [0.05, 0.95], got {self.gpu_memory_utilization}.",
        )


@dataclass(frozen=True)
class PromptConfig:
    chat_template: Literal["auto", "on", "off"] = field(
        default="auto",
        metadata=_help("Wrap the problem in the tokenizer's chat template: 'auto' = when it has one."),
    )
    system_prompt: str = field(default="", metadata=_help("Optional system message (chat template only)."))
    enable_thinking: bool | None = field(
        default=None,
        metadata=_help("Passed to Qwen3 chat templates as enable_thinking; empty = template default."),
    )

    def __post_init__(self) -> None:
        _require(self.chat_template in ("auto", "on", "off"), "prompt.chat_template must be auto, on or off.")


@dataclass(frozen=True)
class EvalConfig:
    """Held-out evaluation during training (``training.heldout``): the paper's test-accuracy curve."""

    release: str = field(
        default="",
        metadata=_help(
            "Held-out release JSONL (an export, never the training release) evaluated with the policy's "
            "current weights through the run's own rollout engine; empty = no held-out evaluation. "
            "Logs eval/pass@1 and eval/pass@k beside reward."
        ),
    )
    every_n_steps: int = field(
        default=50,
        metadata=_help("Evaluate after every N training steps, and after the last step."),
    )
    k: int = field(
        default=4,
        metadata=_help(
            "Samples per held-out problem: eval/pass@1 is the unbiased estimate from k samples, eval/pass@k "
            "the chance one of k passes. Small k keeps evaluation cheap."
        ),
    )
    max_problems: int | None = field(
        default=64,
        metadata=_help("Evaluate only the first N problems of eval.release; empty = all of them."),
    )
    temperature: float = field(
        default=0.6,
        metadata=_help(
            "Sampling temperature of the evaluation (fixed, so steps compare at equal settings; 0.6 is the "
            "usual LiveCodeBench setting for Qwen3). Every evaluation reuses the same per-sample seeds."
        ),
    )
    max_tokens: int | None = field(
        default=None,
        metadata=_help("Token cap of an evaluation sample; empty = max_response_length."),
    )

    def __post_init__(self) -> None:
        _require(self.every_n_steps >= 1, f"eval.every_n_steps must be >= 1, got {self.every_n_steps}.")
        _require(self.k >= 1, f"eval.k must be >= 1 samples per problem, got {self.k}.")
        _require(
            self.max_problems is None or self.max_problems >= 1, "eval.max_problems must be >= 1 or empty."
        )
        _require(
            0.0 < self.temperature <= 4.0,
            f"eval.temperature must be in (0, 4], got {self.temperature}; 0.6 is the usual setting.",
        )
        _require(self.max_tokens is None or self.max_tokens >= 1, "eval.max_tokens must be >= 1 or empty.")
