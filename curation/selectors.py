"""Reads: problem lists and details, release filters, import batches.

List querysets never load statements, starter code, signatures or tests (``Problem.objects.list_fields``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from datetime import date
from typing import Any

from django.db import connection
from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet

from curation.models import (
    ConstraintResult,
    DatasetRelease,
    Difficulty,
    DuplicateLink,
    ImportBatch,
    IOMode,
    Problem,
    ProblemVersion,
    ReferenceSolution,
    Stage,
    TestCase,
)
from curation.selectors_search import problem_order, problem_search

_BUCKETS = set(Difficulty.values)
_STAGES = set(Stage.values)
_IO_MODES = set(IOMode.values)


def tag_filter(tag: str) -> Q:
    """Problems whose ``tags`` list contains ``tag`` exactly. PostgreSQL uses jsonb containment; SQLite
    (no JSON containment) matches the quoted element inside the stored JSON text."""
    if connection.vendor == "postgresql":
        return Q(tags__contains=[tag])
    return Q(tags__icontains=json.dumps(tag))


def problem_list(*, filters: dict[str, Any] | None = None) -> QuerySet[Problem]:
    """Problems for list pages, filtered by ``platform``, ``difficulty``, ``stage``, ``io_mode``, ``tag``,
    ``contest_date_from`` / ``contest_date_to`` (ISO dates) and ``q`` (full-text search over title and
    statement, see ``curation.selectors_search``), ordered by ``sort`` (``selectors_search.SORTS``; an
    unknown key raises ``ValueError``). Empty values are ignored; unknown choice values match nothing
    (rather than everything)."""
    qs = Problem.objects.list_fields()
    f = {k: v for k, v in (filters or {}).items() if v not in (None, "")}
    if "platform" in f:
        qs = qs.filter(platform__name=f["platform"])
    if "difficulty" in f:
        qs = qs.filter(difficulty="" if f["difficulty"] == "unknown" else f["difficulty"])
    if "stage" in f:
        qs = qs.filter(stage=f["stage"])
    if "io_mode" in f:
        qs = qs.filter(io_mode=f["io_mode"])
    if "tag" in f:
        qs = qs.filter(tag_filter(str(f["tag"])))
    if "contest_date_from" in f:
        qs = qs.filter(contest_date__gte=f["contest_date_from"])
    if "contest_date_to" in f:
        qs = qs.filter(contest_date__lte=f["contest_date_to"])
    if "q" in f:
        qs = problem_search(qs, str(f["q"]))
    return problem_order(qs, str(f.get("sort", "")), searching="q" in f)


def problem_detail(*, problem_id: int) -> Problem:
    """One problem with what its page shows: results, duplicate links both ways, versions (without
    their blobs), solutions."""
    return (
        Problem.objects.select_related("platform", "import_batch")
        .prefetch_related(
            Prefetch("constraint_results", queryset=ConstraintResult.objects.order_by("kind", "name")),
            Prefetch("duplicate_links", queryset=DuplicateLink.objects.select_related("duplicate_of__platform")),
            Prefetch("duplicated_by", queryset=DuplicateLink.objects.select_related("problem__platform")),
            Prefetch("versions", queryset=ProblemVersion.objects.defer("record_z").order_by("-version")),
            "solutions",
        )
        .defer("minhash")
        .get(pk=problem_id)
    )


def problem_sample_tests(*, problem: Problem, limit: int = 5) -> list[dict[str, Any]]:
    """The first ``limit`` tests (public ones first), decoded, for pages and API details."""
    rows = TestCase.objects.filter(problem=problem).order_by("-public", "order")[:limit]
    return [{"order": t.order, "public": t.public, "input": t.input, "output": t.output} for t in rows]


def reference_solutions_to_verify(
    *, problem_ids: list[int] | None = None,
    languages: tuple[str, ...] = ("python", "python3", "c", "cpp", "c++"),
) -> QuerySet[ReferenceSolution]:
    """Reference solutions in a judgeable language that the evaluator has not judged yet, by problem.
    The "verify reference solutions" job judges each with ``problem_judge_case(problem, solution.code)``
    and reports back through ``problem_set_reference_verdict``."""
    qs = ReferenceSolution.objects.filter(verdict="", language__in=languages).select_related("problem")
    if problem_ids is not None:
        qs = qs.filter(problem_id__in=problem_ids)
    return qs.order_by("problem_id", "order")


def import_batch_list() -> QuerySet[ImportBatch]:
    return ImportBatch.objects.select_related("user").defer("errors")


def release_list() -> QuerySet[DatasetRelease]:
    return DatasetRelease.objects.select_related("created_by")


# ------------------------------------------------------------------------------------ release filter


@dataclass(frozen=True)
class ReleaseFilter:
    """Which problems a release takes (all conditions AND-ed; an empty tuple means "any").

    ``tags`` matches problems having at least one of the tags. The contest-date range is inclusive and,
    for contamination cut-offs, excludes undated problems unless ``include_undated``.
    ``exclude_duplicates`` drops problems linked as duplicates of another problem.
    """

    platforms: tuple[str, ...] = ()
    difficulties: tuple[str, ...] = ()
    stages: tuple[str, ...] = ()
    io_modes: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    contest_date_from: date | None = None
    contest_date_to: date | None = None
    include_undated: bool = False
    exclude_duplicates: bool = True

    def __post_init__(self) -> None:
        for name, allowed in (("difficulties", _BUCKETS | {"unknown"}), ("stages", _STAGES), ("io_modes", _IO_MODES)):
            bad = sorted(set(getattr(self, name)) - allowed)
            if bad:
                raise ValueError(f"{name}: unknown value(s) {bad}; valid: {sorted(v for v in allowed if v)}")
        if self.contest_date_from and self.contest_date_to and self.contest_date_from > self.contest_date_to:
            raise ValueError("contest_date_from must not be after contest_date_to")

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> ReleaseFilter:
        """Parse a JSON filter spec; raise ``ValueError`` naming the bad key or value."""
        if not isinstance(spec, dict):
            raise ValueError("the filter spec must be a JSON object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise ValueError(f"unknown filter key(s) {unknown}; valid: {sorted(known)}")
        values: dict[str, Any] = {}
        for key, raw in spec.items():
            if key in ("platforms", "difficulties", "stages", "io_modes", "tags"):
                if raw is not None and not isinstance(raw, str | list | tuple):  # 5, {...}: not a list
                    raise ValueError(f"{key} must be a list of strings")
                items = [raw] if isinstance(raw, str) else list(raw or [])
                if not all(isinstance(x, str) for x in items):
                    raise ValueError(f"{key} must be a list of strings")
                values[key] = tuple(sorted({x.strip() for x in items if x.strip()}))
            elif key in ("contest_date_from", "contest_date_to"):
                if raw in (None, ""):
                    values[key] = None
                elif isinstance(raw, date):
                    values[key] = raw
                else:
                    try:
                        values[key] = date.fromisoformat(str(raw))
                    except ValueError as exc:
                        raise ValueError(f"{key} must be an ISO date YYYY-MM-DD, got {raw!r}") from exc
            else:
                if not isinstance(raw, bool):
                    raise ValueError(f"{key} must be true or false")
                values[key] = raw
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """Canonical JSON form (stored on the release)."""
        d = asdict(self)
        for key in ("platforms", "difficulties", "stages", "io_modes", "tags"):
            d[key] = list(d[key])
        for key in ("contest_date_from", "contest_date_to"):
            d[key] = d[key].isoformat() if d[key] else None
        return d


def problems_for_release(spec: ReleaseFilter) -> QuerySet[Problem]:
    """The problems ``spec`` selects, ordered by id."""
    qs = Problem.objects.all()
    if spec.platforms:
        qs = qs.filter(platform__name__in=spec.platforms)
    if spec.difficulties:
        qs = qs.filter(difficulty__in=["" if d == "unknown" else d for d in spec.difficulties])
    if spec.stages:
        qs = qs.filter(stage__in=spec.stages)
    if spec.io_modes:
        qs = qs.filter(io_mode__in=spec.io_modes)
    if spec.tags:
        any_tag = Q()
        for tag in spec.tags:
            any_tag |= tag_filter(tag)
        qs = qs.filter(any_tag)
    if spec.contest_date_from or spec.contest_date_to:
        dated = Q()
        if spec.contest_date_from:
            dated &= Q(contest_date__gte=spec.contest_date_from)
        if spec.contest_date_to:
            dated &= Q(contest_date__lte=spec.contest_date_to)
        qs = qs.filter(dated | Q(contest_date__isnull=True)) if spec.include_undated else qs.filter(dated)
    if spec.exclude_duplicates:
        qs = qs.exclude(Exists(DuplicateLink.objects.filter(problem=OuterRef("pk"))))
    return qs.order_by("id")
