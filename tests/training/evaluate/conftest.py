"""Fixtures of the model-evaluation tests: the toy release as rows and a scripted model source."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from training.evaluate import EvalSettings, Generation, SampleRequest
from training.tiny import TOY_TASKS, toy_completion, toy_problems

#: the right program of each toy problem, by key
RIGHT = {f"toy:{ext_id}": program for ext_id, _, program in TOY_TASKS}
WRONG = "print(0)"


class ScriptedSource:
    """A model source whose answer is a function of (problem key, sample index); counts its calls."""

    engine = "scripted"
    model = "scripted"

    def __init__(self, answer: Callable[[str, int], str | Generation], *, batch_size: int = 4) -> None:
        self.answer = answer
        self.batch_size = batch_size
        self.calls: list[list[tuple[str, int]]] = []

    def generate(self, requests: Sequence[SampleRequest], settings: EvalSettings) -> list[Generation]:
        self.calls.append([(r.key, r.index) for r in requests])
        out = []
        for r in requests:
            a = self.answer(r.key, r.index)
            out.append(a if isinstance(a, Generation) else Generation(text=a))
        return out

    def close(self) -> None:
        return None


@pytest.fixture
def toy_rows() -> list[dict[str, Any]]:
    return [p.to_export_dict() for p in toy_problems()]


@pytest.fixture
def right_on_even() -> Callable[[str, int], str]:
    """Even sample indices answer with the right program, odd ones with a wrong one."""
    return lambda key, index: toy_completion(RIGHT[key] if index % 2 == 0 else WRONG)
