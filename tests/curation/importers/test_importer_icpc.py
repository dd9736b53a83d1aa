"""ICPC / Kattis problem packages."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from importer_testing import FIXTURES, parse_all, records

from curation.importers.base import RowRejected
from curation.importers.icpc import parse_validator_flags

PACKAGES = FIXTURES / "icpc" / "packages"


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "packages"
    shutil.copytree(PACKAGES, target)
    return target


def test_a_folder_of_packages_yields_one_row_per_package_in_name_order() -> None:
    rows = parse_all("icpc", PACKAGES)
    assert [(r.row, r.record.external_id if r.record else None) for r in rows] == [
        (1, "circlearea"),
        (2, "hello"),
    ]


def test_a_single_package_folder_is_one_problem() -> None:
    (rec,) = records("icpc", PACKAGES / "hello")
    assert (rec.platform, rec.external_id, rec.title, rec.io_mode) == ("icpc", "hello", "Hello Name", "stdin")


def test_samples_are_public_and_secret_groups_private_with_line_endings_normalized() -> None:
    (rec,) = records("icpc", PACKAGES / "hello")
    assert [(t.input, t.output, t.public) for t in rec.tests] == [
        ("Ada\n", "Hello, Ada!\n", True),
        ("Grace\n", "Hello, Grace!\n", False),
        ("bob\n", "Hello, bob!\n", False),
    ]


def test_float_tolerance_flags_become_an_icpc_checker() -> None:
    (rec,) = records("icpc", PACKAGES / "circlearea")
    assert rec.checker == {"kind": "icpc", "float_tolerance": 1e-6}
    assert (rec.title, rec.memory_mb, rec.time_limit_s) == ("Circle Area", 512, 2.0)


def test_boolean_flags_limits_and_license_come_from_the_package() -> None:
    (rec,) = records("icpc", PACKAGES / "hello")
    assert rec.checker == {"kind": "icpc", "case_sensitive": True}
    assert (rec.time_limit_s, rec.memory_mb, rec.license) == (1.5, 1024, "cc by-sa")
    assert rec.extra["time_limit_source"] == ".timelimit"


def test_only_accepted_python_submissions_become_reference_solutions() -> None:
    (rec,) = records("icpc", PACKAGES / "hello")
    assert [s.code for s in rec.solutions] == ['print(f"Hello, {input().strip()}!")\n']


def test_a_latex_statement_is_converted_without_its_comments() -> None:
    (rec,) = records("icpc", PACKAGES / "hello")
    assert rec.statement.startswith("Given a name, greet it. Capitalisation *matters*")
    assert (
        "## Input" in rec.statement
        and "comment" not in rec.statement
        and "\\problemname" not in rec.statement
    )


def test_an_interactive_package_without_a_validator_is_a_row_error_and_the_others_still_import(
    tmp_path: Path,
) -> None:
    root = _copy(tmp_path)
    (root / "hello" / "data" / "sample" / "1.interaction").write_text("<1\n>2\n")
    rows = parse_all("icpc", root)
    assert rows[0].record is not None
    assert (
        str(rows[1].error)
        == "row 2 (hello): the package needs a custom output validator but has no output_validator(s)/ sources"
    )


def test_custom_validation_without_validator_sources_is_a_row_error(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    yaml_path = root / "circlearea" / "problem.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("validation: default", "validation: custom"))
    assert "has no output_validator(s)/ sources" in str(parse_all("icpc", root / "circlearea")[0].error)


def test_an_input_without_its_answer_file_is_a_row_error(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "circlearea" / "data" / "secret" / "a.ans").unlink()
    (row,) = parse_all("icpc", root / "circlearea")
    assert str(row.error) == "row 1 (circlearea): data/secret/a.in has no matching .ans"


def test_a_package_folder_without_problem_yaml_is_reported(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "hello" / "problem.yaml").unlink()
    rows = parse_all("icpc", root)
    assert str(rows[1].error) == "row 2 (hello): no problem.yaml"


def test_validator_flags_parse_numbers_and_reject_unknown_flags() -> None:
    assert parse_validator_flags("space_change_sensitive float_relative_tolerance 1e-4") == {
        "space_change_sensitive": True,
        "float_relative_tolerance": 1e-4,
    }
    with pytest.raises(RowRejected, match="unknown output validator flag 'ignore_case'"):
        parse_validator_flags("ignore_case")
    with pytest.raises(RowRejected, match="needs a number"):
        parse_validator_flags("float_tolerance")
