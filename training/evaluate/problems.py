"""Evaluation problems: read a release, apply the contamination guard, build each sample's request.

Rows are release export rows (docs/export-schema.md). The key of a problem is ``platform:external_id``.
The cut-off (``EvalSettings.after``) keeps problems whose ``contest_date`` is strictly later than it;
problems without a date cannot be shown to be newer, so they are excluded and counted
(``no_contest_date``), like those on or before the cut-off (``before_cutoff``). With a contamination
report, ``exclude_contaminated`` also drops the flagged problems (``contaminated``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from curation.records import ProblemRecord
from training.evaluate.contamination import problem_key
from training.evaluate.settings import parse_date

BUCKETS = ("easy", "medium", "hard")


def load_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a release JSONL file, in file order; a clear error names a bad line."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such release file (export one with /api/releases/<id>/export)")
    rows = []
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{p}:{lineno}: not JSON ({exc.msg})") from exc
            if not isinstance(row, dict) or not row.get("platform") or not row.get("external_id"):
                raise ValueError(f"{p}:{lineno}: a release row needs platform and external_id")
            rows.append(row)
    return rows


def to_record(row: Mapping[str, Any]) -> ProblemRecord:
    """The row as a ``ProblemRecord`` (the form the prompt builder and the judge read)."""
    data = {k: v for k, v in row.items() if k != "id"}
    data.setdefault("title", "")
    data.setdefault("statement", "")
    try:
        return ProblemRecord.from_export_dict(data)
    except TypeError as exc:
        raise ValueError(f"{problem_key(row)}: not a release export row ({exc})") from exc


def difficulty_bucket(row: Mapping[str, Any]) -> str:
    """easy / medium / hard from the release's curation bucket, else the platform label; else unknown."""
    curation = (row.get("extra") or {}).get("curation") or {}
    for label in (curation.get("difficulty"), row.get("difficulty")):
        if isinstance(label, str) and label.strip().lower() in BUCKETS:
            return label.strip().lower()
    return "unknown"


def select_problems(
    rows: Sequence[Mapping[str, Any]],
    *,
    after: date | None = None,
    contamination: Mapping[str, Any] | None = None,
    exclude_contaminated: bool = False,
) -> tuple[list[Mapping[str, Any]], dict[str, int], dict[str, str]]:
    """(kept rows in input order, excluded counts by reason, excluded id -> reason)."""
    kept: list[Mapping[str, Any]] = []
    counts = {"no_contest_date": 0, "before_cutoff": 0, "contaminated": 0}
    reasons: dict[str, str] = {}
    seen: set[str] = set()
    for row in rows:
        key = problem_key(row)
        if key in seen:
            raise ValueError(f"problem {key} appears twice in the release")
        seen.add(key)
        reason = ""
        if after is not None:
            raw = row.get("contest_date")
            if not raw:
                reason = "no_contest_date"
            elif parse_date(str(raw), field=f"{key} contest_date") <= after:
                reason = "before_cutoff"
        if not reason and exclude_contaminated and contamination and key in contamination:
            reason = "contaminated"
        if reason:
            counts[reason] += 1
            reasons[key] = reason
        else:
            kept.append(row)
    return kept, counts, reasons


__all__ = ["BUCKETS", "difficulty_bucket", "load_rows", "select_problems", "to_record"]
