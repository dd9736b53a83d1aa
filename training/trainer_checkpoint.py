"""Checkpoint save and resume of the training loop (mixed into ``training.trainer.Trainer``).

A checkpoint holds weights, optimizer, RNG and loop state (step, tokens seen, the temperature policy),
so a resumed run continues exactly where it was taken; single-process checkpoints are plain HF model
folders plus ``trainer_state``, torchrun ones add each rank's FSDP2 shards (``training.checkpoint``).
Restoring cuts the JSONL logs back to the checkpoint's step and tells ``on_resume``.

This module imports nothing from Django.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from training.checkpoint import (
    JsonlLog,
    is_sharded,
    load_sharded_state,
    load_trainer_state,
    restore_rng_state,
    save_checkpoint,
    save_sharded_checkpoint,
)
from training.config import GRPOConfig
from training.distributed import DistContext
from training.temperature import TemperaturePolicy

logger = logging.getLogger("training")


class TrainerCheckpoints:
    """``checkpoint()`` and ``_restore(ckpt)`` over the trainer's state (the attributes below are set by
    ``Trainer.__init__`` and ``Trainer.setup``)."""

    config: GRPOConfig
    dist: DistContext
    model: torch.nn.Module
    tokenizer: Any
    optimizer: torch.optim.Optimizer
    output_dir: Path
    step: int
    num_tokens: int
    temperature_policy: TemperaturePolicy
    resumed_from: int | None
    write_logs: bool
    metrics_log: JsonlLog
    samples_log: JsonlLog
    on_resume: Callable[[int], None] | None

    def _restore(self, ckpt: Path) -> None:
        state = load_trainer_state(ckpt)
        if is_sharded(ckpt):
            load_sharded_state(ckpt, self.model, self.optimizer)
        elif self.dist.is_distributed:
            raise ValueError(f"{ckpt} was written by a single process: resume it without torchrun")
        else:
            self.optimizer.load_state_dict(state["optimizer"])
        self.step = int(state["step"])
        self.num_tokens = int(state.get("num_tokens", 0))
        self.temperature_policy.load_state_dict(state.get("temperature_policy", {}))
        restore_rng_state(state["rng"])
        self.resumed_from = self.step
        if self.write_logs:
            self.metrics_log.truncate_after(self.step)
            self.samples_log.truncate_after(self.step)
        if self.on_resume is not None:
            self.on_resume(self.step)
        logger.info("resumed from %s at step %d", ckpt, self.step)

    def checkpoint(self) -> Path:
        """Save weights, optimizer, RNG and loop state at ``self.step`` (sharded under torchrun)."""
        state = {
            "num_tokens": self.num_tokens,
            "temperature_policy": self.temperature_policy.state_dict(),
            "config": self.config.to_dict(),
        }
        common = {
            "model": self.model,
            "tokenizer": self.tokenizer,
            "optimizer": self.optimizer,
            "state": state,
            "keep": self.config.checkpoint_keep,
        }
        if self.dist.is_distributed:
            return save_sharded_checkpoint(self.output_dir, self.step, dist=self.dist, **common)
        return save_checkpoint(self.output_dir, self.step, **common)

__all__ = ["TrainerCheckpoints"]
