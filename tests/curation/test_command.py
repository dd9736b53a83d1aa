"""``manage.py import_problems``."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from curation.importers import FORMATS
from curation.models import Problem

from .conftest import make_record

pytestmark = pytest.mark.django_db


def _run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_problems", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_prints_a_summary_and_each_row_error(jsonl_file: Any) -> None:
    path = jsonl_file([make_record("p1"), make_record("p2").to_export_dict() | {"title": ""}])
    out, err = _run("--format", "microcoder", str(path))
    assert "1 imported, 0 unchanged, 0 updated, 1 rejected (2 rows)" in out
    assert err.strip() == "row 2 (p2): empty or missing title"


def test_it_reports_unchanged_problems_on_a_second_run(jsonl_file: Any) -> None:
    path = jsonl_file([make_record("p1")])
    _run("--format", "microcoder", str(path))
    out, _ = _run("--format", "microcoder", str(path))
    assert "0 imported, 1 unchanged" in out


def test_it_detects_the_format_when_none_is_given(jsonl_file: Any) -> None:
    out, _ = _run(str(jsonl_file([make_record("p1")])))
    assert out.startswith("detected format: microcoder")


def test_it_runs_the_pipeline_on_request(jsonl_file: Any) -> None:
    out, _ = _run("--pipeline", "--format", "microcoder", str(jsonl_file([make_record("p1")])))
    assert "stages: constraints_pending 1" in out
    assert Problem.objects.get().stage == "constraints_pending"


def test_it_lists_every_format_in_its_help(capsys: Any) -> None:
    with pytest.raises(SystemExit):
        call_command("import_problems", "--help")
    help_text = capsys.readouterr().out
    assert all(name in help_text for name in FORMATS)


def test_it_fails_clearly_on_a_missing_path() -> None:
    with pytest.raises(CommandError, match="does not exist"):
        _run("--format", "microcoder", "/nonexistent/file.jsonl")
