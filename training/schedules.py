"""Learning-rate schedules: linear warm-up, then constant, linear decay or cosine decay.

``learning_rate_at(step, ...)`` is a pure function of the (1-based) training step, so a resumed run
gets exactly the learning rate it would have had. With ``warmup_steps = W``:

- steps 1..W: ``peak * step / W`` (linear warm-up from 0; step W reaches the peak);
- after warm-up, with progress ``x = (step - W) / (max_steps - W)`` in [0, 1]:
  - ``constant``: ``peak`` (DAPO, arXiv 2503.14476, Sec. 4.1: constant 1e-6 after a 20-step warm-up);
  - ``linear``: ``peak * (1 - (1 - min_ratio) * x)``;
  - ``cosine``: ``peak * (min_ratio + (1 - min_ratio) * (1 + cos(pi * x)) / 2)``;
  so the last step (``max_steps``) trains at ``peak * min_ratio`` for the decaying schedules.

This module imports nothing from Django or torch.
"""

from __future__ import annotations

import math
from typing import Literal

Schedule = Literal["constant", "linear", "cosine"]
SCHEDULES: tuple[Schedule, ...] = ("constant", "linear", "cosine")


def learning_rate_at(
    step: int,
    *,
    peak: float,
    schedule: str,
    warmup_steps: int,
    max_steps: int,
    min_ratio: float = 0.0,
) -> float:
    """The learning rate of training step ``step`` (1-based)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown learning-rate schedule {schedule!r}; choose one of {', '.join(SCHEDULES)}")
    if step < 1:
        raise ValueError(f"training steps are 1-based, got {step}")
    if warmup_steps > 0 and step <= warmup_steps:
        return peak * step / warmup_steps
    if schedule == "constant":
        return peak
    span = max_steps - warmup_steps
    progress = min(1.0, (step - warmup_steps) / span) if span > 0 else 1.0
    floor = peak * min_ratio
    if schedule == "linear":
        return peak - (peak - floor) * progress
    return floor + (peak - floor) * (1.0 + math.cos(math.pi * progress)) / 2.0


__all__ = ["SCHEDULES", "Schedule", "learning_rate_at"]
