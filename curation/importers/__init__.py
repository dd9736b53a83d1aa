"""Problem importers: one small module per source format, behind a registry.

``FORMATS`` maps each ``--format`` name to its importer; ``get_importer(name)`` looks one up and
``detect_format(path)`` guesses the format of a file or folder (best effort: it reads one row).
Every importer streams ``ParsedRow`` objects from ``parse(path)``; a bad row becomes a ``RowError``
with its row number and reason and parsing continues. The import service (Django side) consumes these;
nothing in this package imports Django.

Formats: ``leetcodedataset``, ``codecontests``, ``livecodebench``, ``apps``, ``humaneval``, ``mbpp``,
``icpc``, ``microcoder`` (our own export, re-importable with identical content hashes).
"""

from __future__ import annotations

from pathlib import Path

from curation.importers import (
    apps,
    codecontests,
    humaneval,
    icpc,
    leetcodedataset,
    livecodebench,
    mbpp,
    microcoder,
)
from curation.importers.base import Importer, ParsedRow, RowError, first_raw_row

# Order matters for detection only: the more specific signatures come first (an export row also has
# "platform"; a LeetCodeDataset row also has "task_id" and "entry_point" like HumanEval).
FORMATS: dict[str, Importer] = {
    imp.name: imp
    for imp in (
        microcoder.IMPORTER,
        leetcodedataset.IMPORTER,
        humaneval.IMPORTER,
        mbpp.IMPORTER,
        livecodebench.IMPORTER,
        codecontests.IMPORTER,
        apps.IMPORTER,
        icpc.IMPORTER,
    )
}


def get_importer(name: str) -> Importer:
    """The importer registered as ``name``; ``KeyError`` naming the known formats otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        raise KeyError(
            f"unknown import format {name!r}; known formats: {', '.join(sorted(FORMATS))}"
        ) from None


def detect_format(path: Path | str) -> str | None:
    """Best-effort guess of ``path``'s format name, or ``None`` when nothing matches.

    Folders are checked for problem packages; files by the keys of their first JSON/Parquet row.
    """
    path = Path(path)
    sample = first_raw_row(path) if path.is_file() else None
    for name, imp in FORMATS.items():
        if imp.sniff(path, sample):
            return name
    return None


__all__ = ["FORMATS", "Importer", "ParsedRow", "RowError", "detect_format", "get_importer"]
