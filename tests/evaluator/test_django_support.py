"""Shared fixtures of the evaluator's Django tests (imported by the ``test_django_*`` modules; this
module holds no tests itself).

Problems are stored through curation's own import service (a MicroCoder JSONL file), normalized and
constraint-checked, so the reference constraint starts ``pending`` exactly as in production.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

#: a statement long enough for the soft statement-length constraint
STATEMENT = (
    "Read two integers a and b from one line of standard input and print their sum on one line. "
    "Both integers lie between minus one billion and one billion, so the sum fits in a machine word."
)
ADD_TESTS = (("1 2\n", "3\n"), ("10 -4\n", "6\n"), ("0 0\n", "0\n"), ("7 8\n", "15\n"), ("-5 -6\n", "-11\n"))
CORRECT_ADD = "a, b = map(int, input().split())\nprint(a + b)\n"
WRONG_ADD = "a, b = map(int, input().split())\nprint(a - b)\n"


@pytest.fixture(autouse=True)
def _eager_and_in_memory(settings: Any) -> Iterator[None]:
    """Unit tests never touch a real broker or Redis channel layer, even when ``REDIS_URL`` is set for
    the integration tests of the same pytest run: Celery runs tasks in-process and the channel layer
    lives in memory."""
    from webapp.celery import app

    saved = {key: app.conf[key] for key in ("task_always_eager", "task_eager_propagates")}
    app.conf.update(task_always_eager=True, task_eager_propagates=True)
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    yield
    app.conf.update(saved)


@pytest.fixture
def make_problem(tmp_path: Path) -> Callable[..., Any]:
    """``make_problem(external_id, tests=..., solutions=[code, ...], language="python", ...)`` -> the
    stored, normalized, constraint-checked ``curation.Problem``."""
    from curation.models import Problem
    from curation.records import ProblemRecord, SolutionRecord, TestRecord
    from curation.services import problem_import, problems_check_constraints, problems_normalize

    def make(
        external_id: str = "add",
        *,
        tests: Sequence[tuple[str, str]] = ADD_TESTS,
        solutions: Sequence[str] = (CORRECT_ADD,),
        language: str = "python",
        io_mode: str = "stdin",
        fn_name: str = "",
        checker: dict[str, Any] | None = None,
        title: str | None = None,
    ) -> Any:
        record = ProblemRecord(
            platform="testing",
            external_id=external_id,
            title=title or f"Sum of two ({external_id})",
            statement=f"{STATEMENT} Variant {external_id}.",
            io_mode=io_mode,  # type: ignore[arg-type]
            fn_name=fn_name,
            tags=["math"],
            tests=[TestRecord(i, o, public=(n == 0)) for n, (i, o) in enumerate(tests)],
            solutions=[SolutionRecord(code, language=language) for code in solutions],
            checker=checker or {"kind": "lenient"},
        )
        path = tmp_path / f"{external_id}.jsonl"
        path.write_text(json.dumps(record.to_export_dict()) + "\n", encoding="utf-8")
        batch = problem_import(path=path, format="microcoder")
        assert batch.status == "succeeded", batch.errors
        problem = Problem.objects.get(platform__name="testing", external_id=external_id)
        problems_normalize(problem_ids=[problem.pk])
        problems_check_constraints(problem_ids=[problem.pk])
        problem.refresh_from_db()
        return problem

    return make


@pytest.fixture
def problem(make_problem: Any) -> Any:
    """The default stored problem (a + b, correct reference solution)."""
    return make_problem()


@pytest.fixture
def job(problem: Any, trainer: Any) -> Any:
    """A submission job of ``CORRECT_ADD`` by the trainer persona, not yet run."""
    from evaluator.services import evaluation_submit

    return evaluation_submit(problem_id=problem.pk, code=CORRECT_ADD, user=trainer, enqueue=False)


def ie_verdicts(cases: list[dict[str, Any]], **_: Any) -> list[dict[str, Any]]:
    """A stand-in for ``judge_batch`` whose judge could not run anything (every case ``IE``)."""
    return [
        {"id": c["id"], "verdict": "IE", "passed": 0, "total": len(c["tests"]), "method": None, "tests": [],
         "elapsed_s": 0.0, "message": "sandbox worker died while starting"}
        for c in cases
    ]


def reference_status(problem: Any) -> str:
    """The status of curation's ``reference_passes`` hard constraint on ``problem``."""
    from curation.models import ConstraintResult

    return ConstraintResult.objects.get(problem=problem, name="reference_passes").status


def verdict_of(job: Any) -> dict[str, Any]:
    """The stored verdict of a judged submission job (fails the test when there is none)."""
    verdict = job.verdict
    assert verdict is not None, f"job {job.pk} ({job.status}) has no verdict: {job.error or job.results}"
    return dict(verdict)
