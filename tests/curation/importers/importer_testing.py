"""Helpers for the importer tests: our own fixtures, the real data in ../shared/data, parse shortcuts.

Imported by name (pytest puts this folder on sys.path; the tests folders have no __init__.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.importers import ParsedRow, get_importer
from curation.records import ProblemRecord

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "importers"
SHARED_DATA = ROOT.parent / "shared" / "data"


def shared_file(relative: str) -> Path:
    """A file under ../shared/data, or skip the test saying what is missing."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"real data not available: {path} is missing (see ../shared/README.md)")
    return path


def parse_all(fmt: str, path: Path) -> list[ParsedRow]:
    return list(get_importer(fmt).parse(path))


def records(fmt: str, path: Path) -> list[ProblemRecord]:
    """Every record of ``path``; fails the test if any row was rejected."""
    rows = parse_all(fmt, path)
    errors = [str(r.error) for r in rows if r.error]
    assert not errors, errors
    return [r.record for r in rows if r.record is not None]


def errors(fmt: str, path: Path) -> list[str]:
    return [str(r.error) for r in parse_all(fmt, path) if r.error]
