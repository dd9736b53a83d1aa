"""The row types every importer yields (kept apart so the readers and the importers share them)."""

from __future__ import annotations

from dataclasses import dataclass

from curation.records import ProblemRecord


@dataclass
class RowError:
    """Why one row was rejected. ``reason`` is a sentence without the row prefix; ``str()`` adds it."""

    row: int
    reason: str
    external_id: str = ""

    def __str__(self) -> str:
        where = f"row {self.row}" + (f" ({self.external_id})" if self.external_id else "")
        return f"{where}: {self.reason}"


@dataclass
class ParsedRow:
    """One parsed row: exactly one of ``record`` and ``error`` is set."""

    row: int
    record: ProblemRecord | None
    error: RowError | None
