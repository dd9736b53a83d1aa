"""The write path of an import: one chunk of validated records -> problems, versions, tests, solutions.

Called by ``curation.services.imports.problem_import`` inside one transaction per chunk. Per chunk a
fixed number of queries (lookup of existing problems and slugs, then bulk inserts; tests go in with
one ``COPY`` on PostgreSQL); no per-row queries.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from datetime import date
from typing import Any

from django.db import connection
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from curation.buckets import bucket_from_platform
from curation.models import (
    ConstraintResult,
    DuplicateLink,
    ImportBatch,
    Problem,
    ProblemVersion,
    ReferenceSolution,
    SourcePlatform,
    Stage,
    TestCase,
    compress_json,
    compress_text,
)
from curation.records import EXPORT_SCHEMA_VERSION, ProblemRecord

#: Problem columns an update rewrites (bulk_update field list).
_UPDATE_FIELDS = [
    "title", "statement", "io_mode", "fn_name", "starter_code", "time_limit_s", "memory_mb", "tags",
    "difficulty_label", "rating", "difficulty", "difficulty_source", "contest_date", "url", "license",
    "checker", "content_hash", "version", "stage", "test_count", "public_test_count", "train_test_limit",
    "statement_hash", "minhash", "normalized_at", "constraints_checked_at", "import_batch", "updated_at",
]


@dataclass
class Item:
    row: int
    record: ProblemRecord
    export: dict[str, Any]  # record_dicts(record)[0]
    content_hash: str


@dataclass
class ChunkResult:
    imported: int = 0
    unchanged: int = 0
    updated: int = 0


@dataclass
class ImportState:
    seen: dict[tuple[str, str], int] = field(default_factory=dict)  # (platform, external_id) -> row
    platforms: dict[str, int] = field(default_factory=dict)  # name -> id


# -------------------------------------------------------------------------------------------- writes


def write_items(items: list[Item], batch: ImportBatch, state: ImportState) -> ChunkResult:
    result = ChunkResult()
    platform_ids = _platform_ids({i.record.platform for i in items}, state)
    existing = _existing_problems(items, platform_ids)
    now = timezone.now()
    new_items: list[Item] = []
    changed: list[tuple[Problem, Item]] = []
    for item in items:
        current = existing.get((platform_ids[item.record.platform], item.record.external_id))
        if current is None:
            new_items.append(item)
        elif current.content_hash == item.content_hash:
            result.unchanged += 1
        else:
            changed.append((current, item))

    slugs = _assign_slugs([(platform_ids[i.record.platform], i.record) for i in new_items])
    created = [
        Problem(
            platform_id=platform_ids[item.record.platform],
            external_id=item.record.external_id,
            slug=slug,
            content_hash=item.content_hash,
            version=1,
            stage=Stage.IMPORTED,
            import_batch=batch,
            **problem_fields(item.record),
        )
        for item, slug in zip(new_items, slugs)
    ]
    Problem.objects.bulk_create(created)

    updated: list[Problem] = []
    for problem, item in changed:
        for name, value in problem_fields(item.record).items():
            setattr(problem, name, value)
        problem.content_hash = item.content_hash
        problem.version += 1
        problem.stage = Stage.IMPORTED
        problem.statement_hash, problem.minhash = "", None
        problem.normalized_at = problem.constraints_checked_at = None
        problem.train_test_limit = None
        problem.import_batch = batch
        problem.updated_at = now
        updated.append(problem)
    if updated:
        Problem.objects.bulk_update(updated, _UPDATE_FIELDS)
        _forget_findings([p.pk for p in updated])

    pairs = list(zip(created, new_items)) + [(p, item) for p, item in changed]
    ProblemVersion.objects.bulk_create(
        [
            ProblemVersion(
                problem=p, version=p.version, content_hash=item.content_hash, title=p.title,
                test_count=len(item.record.tests), record_z=compress_json(item.export),
                import_batch=batch,
            )
            for p, item in pairs
        ],
        batch_size=200,
    )
    _insert_tests(pairs)
    ReferenceSolution.objects.bulk_create(
        [
            ReferenceSolution(problem=p, order=i, language=s.language, code=s.code)
            for p, item in pairs
            for i, s in enumerate(item.record.solutions)
        ],
        batch_size=500,
    )
    result.imported, result.updated = len(created), len(updated)
    return result


def _insert_tests(pairs: list[tuple[Problem, Item]]) -> None:
    """Insert the ``TestCase`` rows of ``pairs``. Hundreds of thousands of rows are common (100+ tests
    per problem), so this skips model instances: PostgreSQL gets one ``COPY``, other databases one
    ``executemany``. Runs inside the batch's transaction like every other write."""
    rows = (
        (p.pk, order, t.public, compress_text(t.input), compress_text(t.output))
        for p, item in pairs
        for order, t in enumerate(item.record.tests)
    )
    meta, ops = TestCase._meta, connection.ops
    table = ops.quote_name(meta.db_table)
    columns = ", ".join(
        ops.quote_name(meta.get_field(name).column) for name in ("problem", "order", "public", "input_z", "output_z")
    )
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES (%s, %s, %s, %s, %s)", list(rows))


def record_dicts(rec: ProblemRecord) -> tuple[dict[str, Any], str]:
    """``(rec.to_export_dict(), rec.content_hash())`` computed in one pass.

    ``dataclasses.asdict`` deep-copies recursively and dominated import time on test-heavy files (it
    ran twice per record, once per method); this builds the same dicts from the dataclass fields one
    level deep (tests and solutions hold only scalars) and hashes them exactly as ``content_hash``
    does. ``tests/curation/test_import_service.py`` checks both results against the record's methods.
    """
    export: dict[str, Any] = {}
    for f in dataclass_fields(rec):
        value = getattr(rec, f.name)
        if f.name in ("tests", "solutions"):
            value = [{g.name: getattr(x, g.name) for g in dataclass_fields(x)} for x in value]
        elif isinstance(value, dict | list):
            value = copy.deepcopy(value)
        export[f.name] = value
    content = {k: v for k, v in export.items() if k != "extra"}
    content["solutions"] = [{k: v for k, v in s.items() if k != "verified"} for s in export["solutions"]]
    blob = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    export["schema_version"] = EXPORT_SCHEMA_VERSION
    return export, hashlib.sha256(blob.encode("utf-8")).hexdigest()


def problem_fields(rec: ProblemRecord) -> dict[str, Any]:
    """The ``Problem`` columns that mirror a record (identity, hash, stage and version excluded)."""
    title = rec.title if len(rec.title) <= 500 else rec.title[:499] + "…"
    return {
        "title": title,
        "statement": rec.statement,
        "io_mode": rec.io_mode,
        "fn_name": rec.fn_name,
        "starter_code": rec.starter_code,
        "time_limit_s": float(rec.time_limit_s),
        "memory_mb": int(rec.memory_mb),
        "tags": list(rec.tags),
        "difficulty_label": rec.difficulty,
        "rating": rec.rating,
        "difficulty": bucket_from_platform(rec.difficulty, rec.rating),
        "difficulty_source": "platform",
        "contest_date": date.fromisoformat(rec.contest_date) if rec.contest_date else None,
        "url": rec.url,
        "license": rec.license,
        "checker": dict(rec.checker),
        "test_count": len(rec.tests),
        "public_test_count": sum(1 for t in rec.tests if t.public),
    }


def _platform_ids(names: set[str], state: ImportState) -> dict[str, int]:
    missing = names - set(state.platforms)
    if missing:
        for p in SourcePlatform.objects.filter(name__in=missing):
            state.platforms[p.name] = p.pk
        for name in missing - set(state.platforms):
            state.platforms[name] = SourcePlatform.objects.create(name=name, display_name=name).pk
    return state.platforms


def _existing_problems(items: list[Item], platform_ids: dict[str, int]) -> dict[tuple[int, str], Problem]:
    by_platform: dict[int, list[str]] = {}
    for item in items:
        by_platform.setdefault(platform_ids[item.record.platform], []).append(item.record.external_id)
    query = Q()
    for pid, ext_ids in by_platform.items():
        query |= Q(platform_id=pid, external_id__in=ext_ids)
    # full rows: an update rewrites most columns and bulk_update needs the loaded instances
    return {(p.platform_id, p.external_id): p for p in Problem.objects.filter(query).defer("minhash")}


def _slug_base(platform: str, external_id: str) -> str:
    base = slugify(f"{platform}-{external_id}")[:200].strip("-")
    return base or _hashed_slug(platform, external_id, "problem")


def _hashed_slug(platform: str, external_id: str, base: str) -> str:
    digest = hashlib.sha1(f"{platform}/{external_id}".encode()).hexdigest()[:10]
    return f"{base[:200]}-{digest}"


def _assign_slugs(records: list[tuple[int, ProblemRecord]]) -> list[str]:
    """Readable unique slugs (``leetcode-two-sum``); a slug already taken in the database or earlier in
    the batch gets a stable hash suffix instead."""
    bases = [_slug_base(r.platform, r.external_id) for _, r in records]
    taken = set(Problem.objects.filter(slug__in=bases).values_list("slug", flat=True))
    out: list[str] = []
    for base, (_, rec) in zip(bases, records):
        slug = base if base not in taken else _hashed_slug(rec.platform, rec.external_id, base)
        taken.add(slug)
        out.append(slug)
    return out


def _forget_findings(problem_ids: list[int]) -> None:
    """A changed problem's tests, solutions, constraint results and duplicate links describe the old
    content. Problems that were linked as duplicates *of* it go back to ``imported`` so the next
    normalize run re-examines them."""
    TestCase.objects.filter(problem_id__in=problem_ids).delete()
    ReferenceSolution.objects.filter(problem_id__in=problem_ids).delete()
    ConstraintResult.objects.filter(problem_id__in=problem_ids).delete()
    dependants = list(
        DuplicateLink.objects.filter(duplicate_of_id__in=problem_ids).values_list("problem_id", flat=True)
    )
    DuplicateLink.objects.filter(Q(problem_id__in=problem_ids) | Q(duplicate_of_id__in=problem_ids)).delete()
    if dependants:
        Problem.objects.filter(pk__in=dependants).exclude(pk__in=problem_ids).update(
            stage=Stage.IMPORTED, normalized_at=None, constraints_checked_at=None
        )
