"""Reads of the jobs view: one page of every kind's jobs, newest first, with the filters of the URL."""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404, QueryDict

from webapp.jobs import ACTIVE, STATUSES, JobKind, JobRow
from webapp.jobs_kinds import KINDS

PER_PAGE = 25
#: the deepest page served: each page reads its offset's worth of rows from every kind
MAX_PAGE = 400


class JobFilterError(ValueError):
    """A filter value the jobs view does not know (the message names the accepted values)."""


@dataclass(frozen=True)
class JobFilters:
    kind: str = ""
    status: str = ""
    mine: bool = False
    page: int = 1

    @classmethod
    def from_query(cls, query: QueryDict) -> JobFilters:
        kind = query.get("kind", "").strip()
        if kind and kind not in KINDS:
            raise JobFilterError(f"kind must be one of: {', '.join(KINDS)} (got {kind!r})")
        status = query.get("status", "").strip()
        if status and status not in (ACTIVE, *STATUSES):
            raise JobFilterError(f"status must be one of: {', '.join((ACTIVE, *STATUSES))} (got {status!r})")
        mine = query.get("mine", "") in ("1", "on", "true", "yes")
        raw_page = query.get("page", "1").strip() or "1"
        if not raw_page.isdigit() or not 1 <= int(raw_page) <= MAX_PAGE:
            raise JobFilterError(f"page must be a whole number from 1 to {MAX_PAGE} (got {raw_page!r})")
        return cls(kind=kind, status=status, mine=mine, page=int(raw_page))

    def query(self, **changes: Any) -> str:
        """The URL query of these filters (``page`` left out when 1), with ``changes`` applied."""
        values = {
            "kind": self.kind,
            "status": self.status,
            "mine": "1" if self.mine else "",
            "page": self.page,
        }
        values.update(changes)
        if values["page"] == 1:
            values["page"] = ""
        return "&".join(f"{k}={v}" for k, v in values.items() if v not in ("", None))


@dataclass(frozen=True)
class JobPage:
    rows: list[JobRow]
    count: int
    number: int
    per_page: int

    @property
    def num_pages(self) -> int:
        return max(1, -(-self.count // self.per_page))

    @property
    def has_next(self) -> bool:
        return self.number < self.num_pages

    @property
    def has_previous(self) -> bool:
        return self.number > 1


def _kinds(filters: JobFilters) -> list[JobKind]:
    return [KINDS[filters.kind]] if filters.kind else list(KINDS.values())


def job_page(*, filters: JobFilters, user: Any, per_page: int = PER_PAGE) -> JobPage:
    """Page ``filters.page`` of the jobs matching ``filters`` (``mine``: created by ``user``), newest first
    across kinds. Each kind contributes at most ``page * per_page`` rows, merged by creation time."""
    owner_id = getattr(user, "pk", None) if filters.mine else None
    end = filters.page * per_page
    streams: list[list[tuple[Any, int, JobRow]]] = []
    count = 0
    for kind in _kinds(filters):
        qs = (
            kind.filtered(status=filters.status, owner_id=owner_id)
            if not (filters.mine and owner_id is None)
            else (kind.queryset().none())
        )
        count += qs.count()
        rows = [kind.row(obj) for obj in qs[:end]]
        streams.append([(row.created_at, row.id, row) for row in rows])
    merged = heapq.merge(*streams, key=lambda item: (item[0], item[1]), reverse=True)
    rows = [row for _, _, row in merged][end - per_page : end]
    return JobPage(rows=rows, count=count, number=filters.page, per_page=per_page)


def job_row(*, kind: str, job_id: int) -> JobRow:
    """One job's row (``KeyError`` for an unknown kind, the model's ``DoesNotExist`` for an unknown id)."""
    adapter = KINDS[kind]
    return adapter.row(adapter.get(job_id))


def job_row_or_404(kind: str, job_id: int) -> JobRow:
    """``job_row`` for the page and the API: an unknown kind or job is a 404 naming it."""
    if kind not in KINDS:
        raise Http404(f"no job kind {kind!r}")
    try:
        return job_row(kind=kind, job_id=job_id)
    except ObjectDoesNotExist as exc:
        raise Http404(f"no {kind} job #{job_id}") from exc
