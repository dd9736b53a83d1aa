"""The import service: a file or folder in a registered format -> problems, versions, tests, solutions.

Contract of ``problem_import``:

- Rows are parsed by ``curation.importers`` and written in batches of ``batch_size`` rows, one
  transaction per batch: a database failure rolls that whole batch back (nothing half written) and
  every row of it is reported as rejected with the database's reason; other batches are unaffected.
- Each rejected row is reported as ``{"row", "reason", "external_id"}`` in ``ImportBatch.errors``.
- A problem is identified by ``(platform, external_id)``. The same content (``content_hash``) imported
  again changes nothing; different content creates a new ``ProblemVersion`` (the old ones are kept),
  replaces the current tests and solutions, and sends the problem back to stage ``imported``.
- Speed: per batch a fixed number of queries (lookup of existing problems and slugs, then bulk
  inserts; tests go in with one ``COPY`` on PostgreSQL); no per-row queries. Tests are compressed
  once and stored as ``TestCase`` rows plus inside the version blob.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from datetime import date
from itertools import islice
from pathlib import Path
from typing import Any

from django.db import DatabaseError, connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from curation.buckets import bucket_from_platform
from curation.importers import ParsedRow, get_importer
from curation.models import (
    ConstraintResult,
    DuplicateLink,
    ImportBatch,
    ImportStatus,
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
from webapp.realtime import IMPORT_PROGRESS, import_group, publish_on_commit

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 500
#: rejected rows kept with their reason on the batch; beyond this only ``rejected_count`` grows, so a
#: file in the wrong shape cannot grow the report (rewritten after every batch) without bound
MAX_REPORTED_ERRORS = 1000
_INT32 = 2**31 - 1
#: (field, max length) of the text columns a record must fit; longer values are rejected, not cut.
_MAX_LENGTHS = (("external_id", 255), ("fn_name", 255), ("difficulty", 64), ("url", 1000), ("license", 255))
#: Problem columns an update rewrites (bulk_update field list).
_UPDATE_FIELDS = [
    "title", "statement", "io_mode", "fn_name", "starter_code", "time_limit_s", "memory_mb", "tags",
    "difficulty_label", "rating", "difficulty", "difficulty_source", "contest_date", "url", "license",
    "checker", "content_hash", "version", "stage", "test_count", "public_test_count", "train_test_limit",
    "statement_hash", "minhash", "normalized_at", "constraints_checked_at", "import_batch", "updated_at",
]


@dataclass
class _Item:
    row: int
    record: ProblemRecord
    export: dict[str, Any]  # record_dicts(record)[0]
    content_hash: str


@dataclass
class ChunkResult:
    imported: int = 0
    unchanged: int = 0
    updated: int = 0


def problem_import(
    *,
    path: str | Path,
    format: str,  # noqa: A002 - the public name is "format", as in ``import_problems --format``
    user: Any = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    batch: ImportBatch | None = None,
) -> ImportBatch:
    """Import every row of ``path`` (``format`` is a key of ``curation.importers.FORMATS``).

    Created and updated problems point at the batch (``Problem.import_batch``), which is how the
    pipeline stages find what to process next. Returns the finished ``ImportBatch`` (``succeeded`` even when some rows were rejected; ``failed``
    when the input could not be read at all — batches committed before that point stay). Pass an
    existing pending ``batch`` to fill it in (the upload flow does). Deliberately not atomic as a
    whole: one transaction per ``batch_size`` rows keeps memory and lock time bounded on big files.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    importer = get_importer(format)  # unknown formats raise before anything is written
    path = Path(path)
    if batch is None:
        batch = ImportBatch.objects.create(format=format, filename=path.name, path=str(path), user=user)
    batch.status, batch.started_at = ImportStatus.RUNNING, timezone.now()
    batch.errors, batch.message = [], ""
    batch.total_rows = batch.imported_count = batch.unchanged_count = batch.updated_count = 0
    batch.rejected_count = 0
    batch.save()
    state = _ImportState()
    try:
        for chunk in _chunks(importer.parse(path), batch_size):
            _import_chunk(chunk, batch, state)
            _save_progress(batch)
    except Exception as exc:  # noqa: BLE001 - any reader failure ends the batch; it is reported, not raised
        log.exception("import #%s of %s failed", batch.pk, path)
        batch.status = ImportStatus.FAILED
        batch.message = f"could not read {path.name} as {format}: {type(exc).__name__}: {exc}"
    else:
        batch.status = ImportStatus.SUCCEEDED
        batch.message = batch.summary()
    batch.finished_at = timezone.now()
    batch.save()
    _publish(batch)
    return batch


@dataclass
class _ImportState:
    seen: dict[tuple[str, str], int] = field(default_factory=dict)  # (platform, external_id) -> row
    platforms: dict[str, int] = field(default_factory=dict)  # name -> id


def _chunks(rows: Iterable[ParsedRow], size: int) -> Iterator[list[ParsedRow]]:
    it = iter(rows)
    while chunk := list(islice(it, size)):
        yield chunk


def _import_chunk(chunk: list[ParsedRow], batch: ImportBatch, state: _ImportState) -> None:
    batch.total_rows += len(chunk)
    items: list[_Item] = []
    for parsed in chunk:
        if parsed.error is not None or parsed.record is None:
            err = parsed.error
            _reject(batch, parsed.row, err.reason if err else "unreadable row", err.external_id if err else "")
            continue
        rec = parsed.record
        reason = validate_record(rec)
        key = (rec.platform, rec.external_id)
        if reason is None and key in state.seen:
            reason = f"duplicate of row {state.seen[key]} in this file ({rec.platform}/{rec.external_id})"
        if reason is not None:
            _reject(batch, parsed.row, reason, rec.external_id)
            continue
        state.seen[key] = parsed.row
        # One numeric type for the limit, so a Parquet export (float64 column) re-imports to the same hash.
        rec.time_limit_s = float(rec.time_limit_s)
        export, content_hash = record_dicts(rec)
        items.append(_Item(parsed.row, rec, export, content_hash))
    if not items:
        return
    try:
        with transaction.atomic():
            result = _write_items(items, batch, state)
    except DatabaseError as exc:
        state.platforms.clear()  # platforms created inside the rolled-back transaction are gone too
        first, last = items[0].row, items[-1].row
        for item in items:
            _reject(
                batch, item.row,
                f"database error; rows {first}-{last} were rolled back together: {type(exc).__name__}: {exc}",
                item.record.external_id,
            )
        return
    batch.imported_count += result.imported
    batch.unchanged_count += result.unchanged
    batch.updated_count += result.updated


def _reject(batch: ImportBatch, row: int, reason: str, external_id: str) -> None:
    if len(batch.errors) < MAX_REPORTED_ERRORS:
        batch.errors.append({"row": row, "reason": reason, "external_id": external_id})
    batch.rejected_count += 1


def validate_record(rec: ProblemRecord) -> str | None:
    """Why a (shape-checked) record cannot be stored, or ``None``: the column limits the database
    would otherwise enforce by failing the whole batch."""
    if len(rec.platform) > 64 or slugify(rec.platform) != rec.platform:
        return f"platform {rec.platform[:80]!r} must be a lowercase slug of at most 64 characters"
    for name, limit in _MAX_LENGTHS:
        if len(getattr(rec, name)) > limit:
            return f"{name} is longer than {limit} characters"
    for name in ("memory_mb", "rating"):
        value = getattr(rec, name)
        if value is not None and abs(value) > _INT32:
            return f"{name} {value} is out of range"
    for name in ("title", "statement", "starter_code", "fn_name", "external_id"):
        if "\x00" in getattr(rec, name):
            return f"{name} contains a NUL character"
    if any("\x00" in t for t in rec.tags) or any("\x00" in s.code for s in rec.solutions):
        return "tags or solutions contain a NUL character"
    return None


# -------------------------------------------------------------------------------------------- writes


def _write_items(items: list[_Item], batch: ImportBatch, state: _ImportState) -> ChunkResult:
    result = ChunkResult()
    platform_ids = _platform_ids({i.record.platform for i in items}, state)
    existing = _existing_problems(items, platform_ids)
    now = timezone.now()
    new_items: list[_Item] = []
    changed: list[tuple[Problem, _Item]] = []
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


def _insert_tests(pairs: list[tuple[Problem, _Item]]) -> None:
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


def _platform_ids(names: set[str], state: _ImportState) -> dict[str, int]:
    missing = names - set(state.platforms)
    if missing:
        for p in SourcePlatform.objects.filter(name__in=missing):
            state.platforms[p.name] = p.pk
        for name in missing - set(state.platforms):
            state.platforms[name] = SourcePlatform.objects.create(name=name, display_name=name).pk
    return state.platforms


def _existing_problems(items: list[_Item], platform_ids: dict[str, int]) -> dict[tuple[int, str], Problem]:
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


# ---------------------------------------------------------------------------------------- progress


def _save_progress(batch: ImportBatch) -> None:
    ImportBatch.objects.filter(pk=batch.pk).update(
        total_rows=batch.total_rows, imported_count=batch.imported_count, unchanged_count=batch.unchanged_count,
        updated_count=batch.updated_count, rejected_count=batch.rejected_count, errors=batch.errors,
    )
    _publish(batch)


def _publish(batch: ImportBatch) -> None:
    publish_on_commit(
        import_group(batch.pk), IMPORT_PROGRESS,
        {"batch_id": batch.pk, "status": batch.status, "rows": batch.total_rows, "errors": batch.rejected_count},
    )
