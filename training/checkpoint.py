"""Checkpoints and the run's JSONL logs, written so that a killed run resumes exactly.

Layout under ``output_dir``::

    checkpoints/checkpoint-00000050/model/      weights + tokenizer (loadable by from_pretrained)
    checkpoints/checkpoint-00000050/trainer_state.pt   optimizer, RNG states, step, policy state
    checkpoints/checkpoint-00000050/COMPLETE    written last: a directory without it is ignored
    checkpoints/checkpoint-00000050/distributed/  (torchrun runs) model + optimizer shards written by
                                                every rank with torch.distributed.checkpoint (DCP);
                                                trainer_state.pt then holds no optimizer
    checkpoints/latest                          name of the newest complete checkpoint
    metrics.jsonl, samples.jsonl                one JSON object per line, each with "step"

A checkpoint is first written to a temporary directory and then renamed into place (atomic on one
filesystem), and ``latest`` is replaced atomically, so a kill at any moment leaves either the old or
the new checkpoint, never a half-written one. On resume the JSONL logs are cut back to the
checkpoint's step (``JsonlLog.truncate_after``), so steps after it are neither lost (they are
recomputed) nor duplicated.

A multi-process run (``training.distributed``) saves with ``save_sharded_checkpoint``: every rank writes
its own shards of the FSDP2 model and optimizer state (DCP), rank 0 also writes the full weights under
``model/`` (so a checkpoint stays loadable by ``from_pretrained`` for evaluation and export) and the
trainer state. ``load_sharded_state`` restores the shards, whatever the number of processes now (DCP
reshards on load; one process works too).
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
DCP_DIR = "distributed"
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


def _dcp() -> Any:
    import torch.distributed.checkpoint as dcp

    return dcp


def save_sharded_checkpoint(
    output_dir: str | Path,
    step: int,
    *,
    model: torch.nn.Module,
    tokenizer: Any,
    optimizer: torch.optim.Optimizer,
    state: dict[str, Any],
    dist: Any,
    keep: int = 2,
) -> Path:
    """``save_checkpoint`` for an FSDP2-sharded run; called by EVERY rank (it holds collectives).

    The checkpoint is assembled in a temporary directory and renamed into place by rank 0 once every
    rank's shards are written, so a kill leaves either the old or the new checkpoint, as for one process.
    Multi-node runs need ``output_dir`` on a filesystem every node shares."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict, get_state_dict

    root = Path(output_dir) / "checkpoints"
    final = root / checkpoint_name(step)
    tmp = root / f".tmp-{checkpoint_name(step)}-dist"
    if dist.is_main:
        root.mkdir(parents=True, exist_ok=True)
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
    dist.barrier()
    model_sd, optim_sd = get_state_dict(model, optimizer)
    _dcp().save({"model": model_sd, "optimizer": optim_sd}, checkpoint_id=str(tmp / DCP_DIR))
    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if dist.is_main:
        model.save_pretrained(tmp / "model", state_dict=full, safe_serialization=True)  # type: ignore[operator]
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp / "model")
        payload = {"step": step, "rng": rng_state(), "world_size": dist.world_size, **state}
        with (tmp / STATE_FILE).open("wb") as fh:
            torch.save(payload, fh)
            fh.flush()
            os.fsync(fh.fileno())
        (tmp / MARKER).write_text(json.dumps({"step": step, "world_size": dist.world_size}), encoding="utf-8")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        _fsync_dir(root)
        write_text_atomic(root / "latest", final.name)
        _prune(root, keep)
    dist.barrier()
    return final


def is_sharded(checkpoint: str | Path) -> bool:
    """Whether ``checkpoint`` was written by a multi-process run (its optimizer state is in DCP shards)."""
    return (Path(checkpoint) / DCP_DIR).is_dir()


def load_sharded_state(
    checkpoint: str | Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer
) -> None:
    """Load a sharded checkpoint's model and optimizer state into ``model`` / ``optimizer`` (sharded or
    not; every rank calls it)."""
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    model_sd, optim_sd = get_state_dict(model, optimizer)
    target: dict[str, Any] = {"model": model_sd, "optimizer": optim_sd}
    _dcp().load(target, checkpoint_id=str(Path(checkpoint) / DCP_DIR))
    set_state_dict(model, optimizer, model_state_dict=target["model"], optim_state_dict=target["optimizer"])


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
    "is_sharded",
    "latest_checkpoint",
    "load_sharded_state",
    "load_trainer_state",
    "restore_rng_state",
    "rng_state",
    "save_checkpoint",
    "save_sharded_checkpoint",
    "write_text_atomic",
]
