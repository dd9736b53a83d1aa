"""Metadata and pickles that stand for exponentially more than their size are refused in bounded work:
a YAML alias bomb in ``problem.yaml``, and a pickle whose memo shares containers level after level."""

from __future__ import annotations

import base64
import io
import pickle
import shutil
import zlib
from pathlib import Path

import pytest
from importer_testing import FIXTURES, parse_all

from curation.importers.base import RowRejected
from curation.importers.icpc import MAX_YAML_BYTES
from curation.importers.livecodebench import PlainChecker, _NoGlobalsUnpickler, decode_private_tests

BILLION_LAUGHS = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]" for i in range(8)]
    + ["name: *i"]
)


def _package(tmp_path: Path, problem_yaml: str) -> Path:
    target = tmp_path / "hello"
    shutil.copytree(FIXTURES / "icpc" / "packages" / "hello", target)
    (target / "problem.yaml").write_text(problem_yaml)
    return target


def test_it_refuses_a_problem_yaml_alias_bomb_naming_the_alias(tmp_path: Path) -> None:
    (row,) = parse_all("icpc", _package(tmp_path, BILLION_LAUGHS))
    assert row.record is None and row.error is not None
    assert "problem.yaml is not valid YAML: aliases are not allowed (*a at line 2)" in row.error.reason


def test_it_refuses_an_oversized_problem_yaml_before_parsing_it(tmp_path: Path) -> None:
    (row,) = parse_all("icpc", _package(tmp_path, "name: x\n" + "# pad\n" * (MAX_YAML_BYTES // 6 + 1)))
    assert row.error is not None and "metadata larger than" in row.error.reason


def _shared_levels(levels: int) -> bytes:
    value: list = ["leaf"]
    for _ in range(levels):
        value = [value, value]  # 2**levels paths to the leaf, one object per level
    return pickle.dumps(value, protocol=4)


def test_it_refuses_a_pickle_of_shared_references_after_work_linear_in_its_size() -> None:
    data = _shared_levels(40)
    checker = PlainChecker(max_visits=len(data))
    with pytest.raises(pickle.UnpicklingError, match="shares a container"):
        checker.check(_NoGlobalsUnpickler(io.BytesIO(data)).load())
    assert len(data) < 1000 and checker.visits <= len(data)


def test_it_rejects_the_row_whose_private_tests_are_such_a_pickle() -> None:
    with pytest.raises(RowRejected, match="unpickling private tests refused or failed: pickle shares a container"):
        decode_private_tests(base64.b64encode(zlib.compress(_shared_levels(40))).decode())


def test_it_decodes_plain_test_data_visiting_each_value_once() -> None:
    value = {"input_output": '{"inputs": ["1\\n"], "outputs": ["2\\n"]}', "more": [[1, 2], (3, "x")]}
    data = pickle.dumps(value, protocol=4)
    checker = PlainChecker(max_visits=len(data))
    checker.check(_NoGlobalsUnpickler(io.BytesIO(data)).load())
    assert checker.visits == 11  # the dict, 2 keys, 2 values, [1, 2], 1, 2, (3, "x"), 3, "x"
