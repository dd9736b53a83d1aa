"""The "constraints" stage and the evaluator's way back in (reference verdicts).

``problems_check_constraints`` evaluates ``curation.constraints.check_all`` on stored problems and
replaces their ``ConstraintResult`` rows. ``problem_set_reference_verdict`` is called by the
evaluator's "verify reference solutions" job with the judge's verdict; it is the only way the
``reference_passes`` hard constraint leaves ``pending``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from itertools import islice

from django.db import transaction
from django.utils import timezone

from curation.constraints import (
    ConstraintConfig,
    Outcome,
    ProblemFacts,
    SolutionFacts,
    check_all,
    stage_from_outcomes,
    training_test_limit,
)
from curation.models import (
    ConstraintResult,
    DuplicateLink,
    Problem,
    ReferenceSolution,
    Stage,
    TestCase,
    decompress_text,
)

CHUNK_SIZE = 200


def derive_stage(*, normalized: bool, duplicate: bool, outcomes: list[Outcome] | None) -> str:
    """The stage a problem is in given what the pipeline found: not normalized -> ``imported``;
    linked as a duplicate -> ``duplicate``; normalized but unchecked -> ``normalized``; otherwise what
    its hard constraints say (``stage_from_outcomes``)."""
    if not normalized:
        return str(Stage.IMPORTED)
    if duplicate:
        return str(Stage.DUPLICATE)
    if outcomes is None:
        return str(Stage.NORMALIZED)
    return stage_from_outcomes(outcomes)


def problems_check_constraints(
    *, problem_ids: Iterable[int] | None = None, config: ConstraintConfig | None = None
) -> dict[str, int]:
    """Check constraints on ``problem_ids`` (default: every normalized problem not checked since its
    last change). Returns how many problems ended in each stage. One transaction per chunk."""
    config = config or ConstraintConfig.from_settings()
    if problem_ids is None:
        ids = list(
            Problem.objects.filter(normalized_at__isnull=False, constraints_checked_at__isnull=True)
            .order_by("id").values_list("id", flat=True)
        )
    else:
        ids = sorted(set(problem_ids))
    counts: dict[str, int] = defaultdict(int)
    for chunk in _chunks(ids, CHUNK_SIZE):
        with transaction.atomic():
            for stage in _check_chunk(chunk, config):
                counts[stage] += 1
    return dict(counts)


def _chunks(ids: list[int], size: int) -> Iterator[list[int]]:
    it = iter(ids)
    while chunk := list(islice(it, size)):
        yield chunk


def _check_chunk(ids: list[int], config: ConstraintConfig) -> list[str]:
    problems = list(
        Problem.objects.filter(pk__in=ids).only(
            "id", "io_mode", "fn_name", "statement", "time_limit_s", "memory_mb", "tags", "public_test_count",
            "checker", "normalized_at", "stage", "test_count",
        )
    )
    tests: dict[int, list[tuple[str, str]]] = defaultdict(list)
    rows = TestCase.objects.filter(problem_id__in=ids).order_by("problem_id", "order")
    for pid, inp, out in rows.values_list("problem_id", "input_z", "output_z").iterator(chunk_size=5000):
        tests[pid].append((decompress_text(inp), decompress_text(out)))
    solutions: dict[int, list[SolutionFacts]] = defaultdict(list)
    for s in ReferenceSolution.objects.filter(problem_id__in=ids).defer("code"):
        solutions[s.problem_id].append(
            SolutionFacts(s.language, judged=s.judged, verified=s.verified, verdict=s.verdict, reason=s.verdict_reason)
        )
    duplicates = set(DuplicateLink.objects.filter(problem_id__in=ids).values_list("problem_id", flat=True))

    now = timezone.now()
    results: list[ConstraintResult] = []
    stages: list[str] = []
    for p in problems:
        facts = ProblemFacts(
            io_mode=p.io_mode, fn_name=p.fn_name, statement=p.statement, time_limit_s=p.time_limit_s,
            memory_mb=p.memory_mb, tags=tuple(p.tags or ()), tests=tuple(tests.get(p.pk, ())),
            public_test_count=p.public_test_count, checker_kind=str((p.checker or {}).get("kind", "lenient")),
            solutions=tuple(solutions.get(p.pk, ())),
        )
        outcomes = check_all(facts, config)
        results.extend(
            ConstraintResult(problem_id=p.pk, name=o.name, kind=o.kind, status=o.status, reason=o.reason)
            for o in outcomes
        )
        p.stage = derive_stage(normalized=p.normalized_at is not None, duplicate=p.pk in duplicates, outcomes=outcomes)
        p.train_test_limit = training_test_limit(len(facts.tests), config)
        p.constraints_checked_at = now
        stages.append(p.stage)
    ConstraintResult.objects.filter(problem_id__in=ids).delete()
    ConstraintResult.objects.bulk_create(results, batch_size=1000)
    Problem.objects.bulk_update(problems, ["stage", "train_test_limit", "constraints_checked_at"])
    return stages


@transaction.atomic
def problem_set_reference_verdict(
    *, problem_id: int, passed: bool, verdict: str, reason: str = "", solution_id: int | None = None
) -> Problem:
    """Record the evaluator's verdict on a reference solution and re-check the problem's constraints.

    ``solution_id`` picks the solution; by default the first one not judged yet (else the first).
    ``passed`` means accepted on *all* tests. The ``reference_passes`` constraint becomes ``passed``
    when any judgeable solution is verified and ``failed`` when all were rejected; the stage follows.
    Raises ``ReferenceSolution.DoesNotExist`` when the problem has no (such) solution.
    """
    solutions = ReferenceSolution.objects.select_for_update().filter(problem_id=problem_id)
    if solution_id is not None:
        solution = solutions.get(pk=solution_id)
    else:
        solution = solutions.filter(verdict="").order_by("order").first() or solutions.order_by("order").first()
        if solution is None:
            raise ReferenceSolution.DoesNotExist(f"problem {problem_id} has no reference solution")
    solution.verified = bool(passed)
    solution.verdict = (verdict or ("AC" if passed else "WA"))[:8]
    solution.verdict_reason = reason
    solution.verified_at = timezone.now()
    solution.save(update_fields=["verified", "verdict", "verdict_reason", "verified_at"])
    _check_chunk([problem_id], ConstraintConfig.from_settings())
    return Problem.objects.get(pk=problem_id)
