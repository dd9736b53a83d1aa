"""Checkpoints and the run's JSONL logs, written so that a killed run resumes exactly.

Layout under ``output_dir``::

    checkpoints/checkpoint-00000050/model/      weights + tokenizer (loadable by from_pretrained)
    checkpoints/checkpoint-00000050/trainer_state.pt   optimizer, RNG states, step, policy state
    checkpoints/checkpoint-00000050/COMPLETE    written last: a directory without it is ignored
    checkpoints/latest                          name of the newest complete checkpoint
    metrics.jsonl, samples.jsonl                one JSON object per line, each with "step"

A checkpoint is first written to a temporary directory and then renamed into place (atomic on one
filesystem), and ``latest`` is replaced atomically, so a kill at any moment leaves either the old or
the new checkpoint, never a half-written one. On resume the JSONL logs are cut back to the
checkpoint's step (``JsonlLog.truncate_after``), so steps after it are neither lost (they are
recomputed) nor duplicated.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

PREFIX = "checkpoint-"
STATE_FILE = "trainer_state.pt"
MARKER = "COMPLETE"


def checkpoint_name(step: int) -> str:
    return f"{PREFIX}{step:08d}"


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (temp file in the same directory + rename)."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def rng_state() -> dict[str, Any]:
    """Every global RNG the run touches (python, numpy, torch CPU and CUDA)."""
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(
    output_dir: str | Path,
    step: int,
    *,
    model: Any,
    tokenizer: Any,
    optimizer: torch.optim.Optimizer,
    state: dict[str, Any],
    keep: int = 2,
) -> Path:
    """Write checkpoint ``step`` atomically, point ``latest`` at it and keep the newest ``keep``."""
    root = Path(output_dir) / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    final = root / checkpoint_name(step)
    tmp = root / f".tmp-{checkpoint_name(step)}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    model.save_pretrained(tmp / "model", safe_serialization=True)
    if tokenizer is not None:
        tokenizer.save_pretrained(tmp / "model")
    payload = {"step": step, "optimizer": optimizer.state_dict(), "rng": rng_state(), **state}
    with (tmp / STATE_FILE).open("wb") as fh:
        torch.save(payload, fh)
        fh.flush()
        os.fsync(fh.fileno())
    (tmp / MARKER).write_text(json.dumps({"step": step}), encoding="utf-8")
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    _fsync_dir(root)
    write_text_atomic(root / "latest", final.name)
    _prune(root, keep)
    return final


def _complete_checkpoints(root: Path) -> list[Path]:
    found = []
    for p in root.glob(f"{PREFIX}*"):
        if p.is_dir() and (p / MARKER).is_file():
            try:
                int(p.name[len(PREFIX) :])
            except ValueError:
                continue
            found.append(p)
    return sorted(found, key=lambda p: int(p.name[len(PREFIX) :]))


def _prune(root: Path, keep: int) -> None:
    for old in _complete_checkpoints(root)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    for tmp in root.glob(".tmp-*"):
        if str(os.getpid()) not in tmp.name:
            shutil.rmtree(tmp, ignore_errors=True)


def latest_checkpoint(output_dir: str | Path) -> Path | None:
    """The newest complete checkpoint directory, or None."""
    root = Path(output_dir) / "checkpoints"
    if not root.is_dir():
        return None
    pointer = root / "latest"
    if pointer.is_file():
        candidate = root / pointer.read_text(encoding="utf-8").strip()
        if (candidate / MARKER).is_file():
            return candidate
    complete = _complete_checkpoints(root)
    return complete[-1] if complete else None


def load_trainer_state(checkpoint: str | Path) -> dict[str, Any]:
    """The trainer_state payload (optimizer, rng, step, ...). Our own file, so full unpickling is fine."""
    with (Path(checkpoint) / STATE_FILE).open("rb") as fh:
        return dict(torch.load(fh, map_location="cpu", weights_only=False))


class JsonlLog:
    """Append-only JSONL file of per-step records; every record carries an integer ``step``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def append(self, record: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            fh.flush()

    def read(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        out = []
        with self.path.open(encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    break  # a line cut short by a kill: everything after it is untrustworthy
        return out

    def truncate_after(self, step: int) -> None:
        """Keep only records with ``step <= step`` (atomically); used when resuming from a checkpoint."""
        if not self.path.exists():
            return
        kept = [r for r in self.read() if int(r.get("step", 0)) <= step]
        write_text_atomic(self.path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept))


__all__ = [
    "JsonlLog",
    "checkpoint_name",
    "latest_checkpoint",
    "load_trainer_state",
    "restore_rng_state",
    "rng_state",
    "save_checkpoint",
    "write_text_atomic",
]
