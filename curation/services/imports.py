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

import logging
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone
from django.utils.text import slugify

from curation.importers import ParsedRow, get_importer
from curation.importers.limits import MIB, ReadLimits, limits_applied
from curation.models import ImportBatch, ImportStatus
from curation.records import ProblemRecord
from curation.services.import_count import count_rows
from curation.services.import_text import record_text_problem, report_text
from curation.services.import_writes import (
    ChunkResult,
    ImportState,
    Item,
    problem_fields,
    record_dicts,
    write_items,
)
from webapp.jobs_feed import job_changed
from webapp.realtime import IMPORT_PROGRESS, import_group, publish_on_commit

__all__ = [
    "ChunkResult", "failure_message", "import_batch_finish", "import_read_limits", "problem_fields", "problem_import",
    "record_dicts", "validate_record",
]

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 500
#: rejected rows kept with their reason on the batch; beyond this only ``rejected_count`` grows, so a
#: file in the wrong shape cannot grow the report (rewritten after every batch) without bound
MAX_REPORTED_ERRORS = 1000
_INT32 = 2**31 - 1
#: (field, max length) of the text columns a record must fit; longer values are rejected, not cut.
_MAX_LENGTHS = (("external_id", 255), ("fn_name", 255), ("difficulty", 64), ("url", 1000), ("license", 255))


def import_read_limits() -> ReadLimits:
    """The configured bounds of one import (settings ``IMPORT_MAX_*``, see the README)."""
    return ReadLimits(
        max_decompressed_bytes=int(settings.IMPORT_MAX_DECOMPRESSED_MB) * MIB,
        max_ratio=float(settings.IMPORT_MAX_COMPRESSION_RATIO),
        max_row_bytes=int(settings.IMPORT_MAX_ROW_MB) * MIB,
        max_entries=int(settings.IMPORT_MAX_ARCHIVE_ENTRIES),
        max_depth=int(settings.IMPORT_MAX_ARCHIVE_DEPTH),
        max_seconds=float(settings.IMPORT_UNPACK_TIME_LIMIT_S),
    )


def problem_import(
    *,
    path: str | Path,
    format: str,  # noqa: A002 - the public name is "format", as in ``import_problems --format``
    user: Any = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    batch: ImportBatch | None = None,
    on_progress: Callable[[ImportBatch], None] | None = None,
) -> ImportBatch:
    """Import every row of ``path`` (``format`` is a key of ``curation.importers.FORMATS``).

    Created and updated problems point at the batch (``Problem.import_batch``), which is how the
    pipeline stages find what to process next. Deliberately not atomic as a whole: one transaction
    per ``batch_size`` rows keeps memory and lock time bounded on big files. Pass an existing batch to
    fill it in (the upload flow does; its counts start over).

    Always returns the batch in a terminal state: ``succeeded`` (even when some rows were rejected) or
    ``failed`` with the reason in ``message``, when the input stopped being readable part-way (a
    truncated gzip, a limit, a bug). A failed batch keeps every chunk committed before the failure:
    ``last_committed_row`` is the last row of the last committed chunk (its progress is written in
    the same transaction as its rows, so it is exact), nothing after it was written, and importing
    the same (complete) file again finishes the job: committed rows come back ``unchanged``.
    ``on_progress(batch)`` (the command's progress bar) is called after each chunk.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    importer = get_importer(format)  # unknown formats raise before anything is written
    path = Path(path)
    if batch is None:
        batch = ImportBatch.objects.create(format=format, filename=path.name, path=str(path), user=user)
    now = timezone.now()
    batch.status, batch.started_at, batch.heartbeat_at, batch.finished_at = ImportStatus.RUNNING, now, now, None
    batch.errors, batch.message, batch.last_committed_row = [], "", None
    batch.total_rows = batch.imported_count = batch.unchanged_count = batch.updated_count = 0
    batch.rejected_count = 0
    batch.save()
    state = ImportState()
    limits = import_read_limits()
    batch.expected_rows = count_rows(path, max_bytes=limits.max_decompressed_bytes)
    batch.save(update_fields=["expected_rows"])
    try:
        with limits_applied(limits):  # every import, uploaded or from the command line
            for chunk in _chunks(importer.parse(path), batch_size):
                _import_chunk(chunk, batch, state)
                if on_progress is not None:
                    on_progress(batch)
    except Exception as exc:  # noqa: BLE001 - any reader failure ends the batch; it is reported, not raised
        log.exception("import #%s of %s failed", batch.pk, path)
        message = f"could not read {path.name} as {format} past row {batch.total_rows}: {failure_message(batch, exc)}"
        return import_batch_finish(batch=batch, status=ImportStatus.FAILED, message=message)
    return import_batch_finish(batch=batch, status=ImportStatus.SUCCEEDED, message=batch.summary())


def failure_message(batch: ImportBatch, exc: BaseException) -> str:
    """The reason a batch stopped, and exactly what it left behind."""
    where = (
        f"rows 1-{batch.last_committed_row} were committed ({batch.summary()}); nothing after row "
        f"{batch.last_committed_row} was written"
        if batch.last_committed_row else "nothing was written"
    )
    return (f"{type(exc).__name__}: {exc}. {where}. Import the same (complete) file again to finish: committed "
            "rows come back unchanged.")


def import_batch_finish(*, batch: ImportBatch, status: Any, message: str) -> ImportBatch:
    """Record the terminal ``status`` (an ``ImportStatus``) with ``message`` and publish it. The report is stored escaped
    (``report_text``); should saving it still fail, the status and message are written without the
    row report, so the batch never stays ``running``."""
    batch.status, batch.message = status, report_text(message)
    batch.finished_at = batch.heartbeat_at = timezone.now()
    try:
        batch.save()
    except DatabaseError:
        log.exception("import #%s: saving the report failed; recording the status without it", batch.pk)
        batch.errors = []
        ImportBatch.objects.filter(pk=batch.pk).update(
            status=status, message=batch.message[:10_000], finished_at=batch.finished_at, errors=[]
        )
    _publish(batch)
    return batch


def _chunks(rows: Iterable[ParsedRow], size: int) -> Iterator[list[ParsedRow]]:
    it = iter(rows)
    while chunk := list(islice(it, size)):
        yield chunk


def _import_chunk(chunk: list[ParsedRow], batch: ImportBatch, state: ImportState) -> None:
    """Validate and write one chunk; its rows and the batch's progress commit together."""
    total = batch.total_rows + len(chunk)
    items: list[Item] = []
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
        items.append(Item(parsed.row, rec, export, content_hash))
    last_row = chunk[-1].row
    if items:
        try:
            with transaction.atomic():
                result = write_items(items, batch, state)
                fields = _progress(batch, total, last_row, result)
                ImportBatch.objects.filter(pk=batch.pk).update(**fields)
        except DatabaseError as exc:
            state.platforms.clear()  # platforms created inside the rolled-back transaction are gone too
            first, last = items[0].row, items[-1].row
            for item in items:
                _reject(
                    batch, item.row,
                    f"database error; rows {first}-{last} were rolled back together: {type(exc).__name__}: {exc}",
                    item.record.external_id,
                )
        else:
            _apply(batch, fields)
            return
    fields = _progress(batch, total, last_row, ChunkResult())
    ImportBatch.objects.filter(pk=batch.pk).update(**fields)
    _apply(batch, fields)


def _progress(batch: ImportBatch, total: int, last_row: int, result: ChunkResult) -> dict[str, Any]:
    return {
        "total_rows": total, "imported_count": batch.imported_count + result.imported,
        "unchanged_count": batch.unchanged_count + result.unchanged,
        "updated_count": batch.updated_count + result.updated, "rejected_count": batch.rejected_count,
        "errors": batch.errors, "last_committed_row": last_row, "heartbeat_at": timezone.now(),
    }


def _apply(batch: ImportBatch, fields: dict[str, Any]) -> None:
    for name, value in fields.items():
        setattr(batch, name, value)
    _publish(batch)


def _reject(batch: ImportBatch, row: int, reason: str, external_id: str) -> None:
    if len(batch.errors) < MAX_REPORTED_ERRORS:
        batch.errors.append({"row": row, "reason": report_text(reason), "external_id": report_text(external_id)})
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
    return record_text_problem(rec)


# ---------------------------------------------------------------------------------------- progress


def _publish(batch: ImportBatch) -> None:
    publish_on_commit(import_group(batch.pk), IMPORT_PROGRESS, batch.progress_event())
    job_changed(batch)  # the jobs view's log and live list
