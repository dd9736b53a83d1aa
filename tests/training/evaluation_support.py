"""Helpers of the model evaluation tests: toy releases in the database and fake model sources.

The toy task (``training.tiny``): stdin problems "read n, print f(n)" with a known program each, judged
by the real evaluator. ``FakeSource`` answers with a known-correct or known-wrong program per request,
so pass counts are deterministic, and records every request it generated (resume tests count them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from training.tiny import TOY_TASKS, toy_completion, toy_problems, write_release

PROGRAMS = {ext: program for ext, _what, program in TOY_TASKS}
WRONG = "print(0)"


def toy_records(dates: dict[str, str | None] | None = None, *, platform: str = "toy") -> list[Any]:
    """The toy problems, with contest dates per external id (default: all in 2025-03)."""
    dates = dates or {}
    return [
        dataclasses.replace(p, platform=platform, contest_date=dates.get(p.external_id, "2025-03-01"))
        for p in toy_problems()
    ]


def make_release(tmp_path: Path, records: Sequence[Any], *, name: str = "toy-eval") -> Any:
    """Import ``records`` and freeze them (all of their platforms) into a release."""
    from curation.services import problem_import, release_create

    path = write_release(records, tmp_path / f"{name}.jsonl")
    batch = problem_import(path=path, format="microcoder")
    assert batch.status == "succeeded", batch.message
    platforms = sorted({r.platform for r in records})
    return release_create(name=name, filter_spec={"platforms": platforms, "include_undated": True})


def ext_id(key: str) -> str:
    return key.split(":", 1)[1]


class FakeSource:
    """A model source whose answer to each request is ``answer(key, index)`` -> program (None: no code).

    ``requests`` lists every (key, index) it generated, in order; ``closed`` tells whether the job closed it.
    """

    engine = "fake"
    model = "fake-model"

    def __init__(self, answer: Callable[[str, int], str | None], *, batch_size: int = 4,
                 fail_after: int | None = None) -> None:
        self.answer = answer
        self.batch_size = batch_size
        self.fail_after = fail_after
        self.requests: list[tuple[str, int]] = []
        self.closed = False

    def generate(self, requests: Sequence[Any], settings: Any) -> list[Any]:
        from training.evaluate import Generation

        out = []
        for req in requests:
            if self.fail_after is not None and len(self.requests) >= self.fail_after:
                raise RuntimeError("the fake model crashed")
            self.requests.append((req.key, req.index))
            program = self.answer(req.key, req.index)
            out.append(Generation(text="I have no idea." if program is None else toy_completion(program)))
        return out

    def close(self) -> None:
        self.closed = True


def always_right(key: str, index: int) -> str:
    return PROGRAMS[ext_id(key)]


def always_wrong(key: str, index: int) -> str:
    return WRONG


def right_on_even_indices(key: str, index: int) -> str:
    return PROGRAMS[ext_id(key)] if index % 2 == 0 else WRONG


def solves(*external_ids: str) -> Callable[[str, int], str]:
    """Right on every sample of the named problems, wrong on the others."""
    return lambda key, index: PROGRAMS[ext_id(key)] if ext_id(key) in external_ids else WRONG
