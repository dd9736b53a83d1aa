"""APPS / TACO rows."""

from __future__ import annotations

import json
from pathlib import Path

from importer_testing import FIXTURES, errors, records

APPS = FIXTURES / "apps"


def test_a_stdin_problem_joins_line_lists_and_converts_its_html_statement() -> None:
    rec = records("apps", APPS / "apps.jsonl")[0]
    assert (rec.platform, rec.external_id, rec.io_mode) == ("codeforces", "1901B", "stdin")
    assert [(t.input, t.output) for t in rec.tests] == [("2 3\n", "6\n"), ("4 5", "20")]
    assert "```\n2 3\n```" in rec.statement and "<p>" not in rec.statement


def test_fn_name_problems_get_one_json_argument_per_line_and_unwrapped_outputs() -> None:
    rec = records("apps", APPS / "apps.jsonl")[1]
    assert (rec.platform, rec.external_id, rec.io_mode, rec.fn_name) == (
        "codewars",
        "5a1b2c3d4e5f",
        "call",
        "add_lists",
    )
    assert [(t.input, t.output) for t in rec.tests] == [("[1, 2]\n[3, 4]", "[4, 6]"), ("[]\n[]", "[]")]


def test_taco_fields_fill_title_tags_limits_and_date() -> None:
    rec = records("apps", APPS / "apps.jsonl")[2]
    assert (rec.platform, rec.external_id, rec.title) == ("codechef", "TRINUM", "Triangle Numbers")
    assert (rec.tags, rec.time_limit_s, rec.contest_date) == (["Mathematics", "Sequences"], 1.0, "2021-03-04")
    assert rec.license.startswith("Apache-2.0")


def test_an_implausible_memory_limit_falls_back_to_the_default_and_is_kept_aside() -> None:
    rec = records("apps", APPS / "apps.jsonl")[2]
    assert rec.memory_mb == 256 and rec.extra["memory_limit_ignored"] == "50000 bytes"


def test_a_json_array_file_is_read_and_an_id_without_url_uses_the_problem_id() -> None:
    (rec,) = records("apps", APPS / "apps_array.json")
    assert (rec.platform, rec.external_id) == ("apps", "apps-4003")


def test_broken_input_output_json_is_reported(tmp_path: Path) -> None:
    row = json.loads((APPS / "apps.jsonl").read_text().splitlines()[0])
    row["input_output"] = '{"inputs": ["1"'
    path = tmp_path / "apps.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert errors("apps", path)[0].startswith("row 1 (1901B): field 'input_output' is not valid JSON")


def test_more_inputs_than_outputs_is_reported(tmp_path: Path) -> None:
    row = json.loads((APPS / "apps.jsonl").read_text().splitlines()[0])
    row["input_output"] = json.dumps({"inputs": ["1", "2"], "outputs": ["1"]})
    path = tmp_path / "apps.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert errors("apps", path) == ["row 1 (1901B): input_output has 2 inputs but 1 outputs"]
