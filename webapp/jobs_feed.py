"""The jobs view's live feed and per-job log: :func:`job_changed`, the hook every job kind's progress
publication calls (``curation.services.imports._publish``, ``curation.services.difficulty._publish``,
``evaluator.services.jobs.publish_progress``, ``training.services.evaluations.publish_progress``,
``training.services.runs._publish_status`` and ``training.services.metrics.metrics_record``).

On each call it compares the job with the last line of its log (``webapp.models.JobEvent``) and writes
what happened since: a status change ("started", "succeeded: ...", "failed: <reason>"), a progress
milestone (every 10 % of a known total; 100, 200, 500, 1,000, 2,000 ... of an unknown one), a new
reason while running ("cancel requested by ann"), or the caller's ``note``. Then it publishes the job's
row, with the new lines, to the ``jobs`` group after commit (``webapp.realtime.JOBS_UPDATE``).

Like ``realtime.publish`` it is best effort: any failure is logged and never raised into the job,
and its writes sit in a savepoint so a failed write cannot poison the caller's transaction.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from django.db import transaction

from webapp import realtime
from webapp.jobs import FAILED, QUEUED, RUNNING, TERMINAL, JobKind, JobRow
from webapp.jobs_kinds import KINDS, kind_of
from webapp.models import JobEvent

log = logging.getLogger(__name__)

_STEPS = (1, 2, 5)


def milestone(row: JobRow) -> int:
    """How many progress milestones ``row`` has passed (see the module docstring)."""
    if row.total is not None:
        return int(math.floor(10 * min(row.done, row.total) / row.total)) if row.total > 0 else 0
    if row.done < 100:
        return 0
    decade = int(math.floor(math.log10(row.done))) - 2  # 100..999 -> decade 0
    lead = row.done / 10 ** (decade + 2)
    return 3 * decade + sum(1 for s in _STEPS if lead >= s)


def _status_line(row: JobRow, note: str) -> tuple[str, str]:
    """(level, message) of the line for a job that just entered ``row.status``."""
    extra = f" ({note})" if note and note not in (row.status, "queued") else ""
    if row.status == QUEUED:
        return "info", f"queued{extra}"
    if row.status == RUNNING:
        return "info", f"started{extra}"
    reason = row.reason or (note if note != row.status else "")  # "cancelled: cancelled" says nothing
    done = f"{row.progress_text}"
    if row.status == FAILED:
        return "error", f"failed after {done}: {reason or 'no reason recorded'}"
    return "info", f"{row.status} after {done}" + (f": {reason}" if reason else "")


def _new_lines(kind: JobKind, row: JobRow, note: str) -> list[JobEvent]:
    last = JobEvent.objects.filter(kind=row.kind, job_id=row.id).order_by("-id").first()
    mark = milestone(row)
    base = {"kind": row.kind, "job_id": row.id, "status": row.status, "milestone": mark, "reason": row.reason}
    lines: list[JobEvent] = []
    if last is None and row.status not in (QUEUED,) and row.status not in TERMINAL:
        # first seen while already running (a job older than the log): say so before the rest
        lines.append(JobEvent(**base, message="started"))
    if last is None and row.status == QUEUED:
        lines.append(JobEvent(**base, message=_status_line(row, note)[1]))
        return lines
    if last is not None and last.status == row.status and row.status in TERMINAL:
        return lines  # an ended job republished (e.g. cancelling a finished one): nothing new
    if last is None and row.status in TERMINAL or last is not None and last.status != row.status:
        level, message = _status_line(row, note)
        lines.append(JobEvent(**base, level=level, message=message))
        return lines
    previous = last.milestone if last is not None else 0
    if mark > previous:
        pct = f"{row.percent:g} %: " if row.percent is not None else ""
        lines.append(
            JobEvent(**base, message=f"{pct}{row.progress_text}" + (f" ({row.reason})" if row.reason else ""))
        )
    elif row.reason and (last is None or row.reason != last.reason):
        lines.append(JobEvent(**base, message=row.reason))
    elif note and (last is None or note != last.message):
        lines.append(JobEvent(**base, message=note))
    return lines


def job_changed(job: Any, *, kind: str | None = None, note: str = "") -> None:
    """Log and publish the new state of ``job`` (a job object, or its pk with ``kind`` given: the row is
    then read fresh). ``note`` is the caller's own account of the change (e.g. "running on gpu-3").
    A job that belongs to another (a sweep's run) changes that one too: it is logged and published next."""
    try:
        adapter = KINDS[kind] if kind is not None else kind_of(job)
        obj = adapter.get(int(job)) if isinstance(job, int) else job
        row = adapter.row(obj)
        with transaction.atomic():
            lines = _new_lines(adapter, row, note)
            JobEvent.objects.bulk_create(lines)
        parent = adapter.parent(obj) if adapter.parent is not None else None
    except Exception:  # noqa: BLE001 - best effort, see the module docstring
        log.exception("recording the progress of %s %r failed", kind or type(job).__name__, job)
        return
    data = {**row.event(), "log": [line.as_dict() for line in lines]}
    realtime.publish_on_commit(realtime.JOBS_GROUP, realtime.JOBS_UPDATE, data)
    if parent is not None:
        job_changed(parent[1], kind=parent[0])


def job_log(*, kind: str, job_id: int, limit: int = 500) -> list[JobEvent]:
    """The newest ``limit`` lines of a job's log, oldest first."""
    rows = list(JobEvent.objects.filter(kind=kind, job_id=job_id).order_by("-id")[:limit])
    rows.reverse()
    return rows
