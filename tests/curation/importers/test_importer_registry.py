"""The format registry and format detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from importer_testing import FIXTURES, shared_file

from curation.importers import FORMATS, Importer, detect_format, get_importer

FIXTURE_FORMATS = {
    "leetcodedataset/v031_test_layout.jsonl": "leetcodedataset",
    "leetcodedataset/v020_train_layout.jsonl": "leetcodedataset",
    "codecontests/deepmind.jsonl": "codecontests",
    "codecontests/sandbox.jsonl": "codecontests",
    "livecodebench/release.jsonl": "livecodebench",
    "livecodebench/sandbox.jsonl": "livecodebench",
    "apps/apps.jsonl": "apps",
    "apps/apps_array.json": "apps",
    "humaneval/humaneval.jsonl": "humaneval",
    "mbpp/mbpp.jsonl": "mbpp",
    "icpc/packages": "icpc",
    "icpc/packages/hello": "icpc",
}

REAL_FORMATS = {
    "leetcodedataset/LeetCodeDataset-v0.3.1-test.jsonl.gz": "leetcodedataset",
    "leetcodedataset/LeetCodeDataset-v0.2.0-train.jsonl.gz": "leetcodedataset",
    "codecontests-sample/code_contests_sample.jsonl": "codecontests",
    "livecodebench-sample/livecodebench_v1_sample.jsonl": "livecodebench",
}


def test_it_registers_every_issue_format_under_its_own_name() -> None:
    expected = {
        "leetcodedataset",
        "codecontests",
        "livecodebench",
        "apps",
        "humaneval",
        "mbpp",
        "icpc",
        "microcoder",
    }
    assert set(FORMATS) == expected
    assert all(imp.name == name for name, imp in FORMATS.items())


def test_every_importer_satisfies_the_importer_protocol() -> None:
    for imp in FORMATS.values():
        assert isinstance(imp, Importer)
        assert imp.description and isinstance(imp.platforms, tuple)


def test_get_importer_lists_the_known_formats_for_an_unknown_name() -> None:
    with pytest.raises(KeyError, match="known formats: apps, codecontests"):
        get_importer("csv")


@pytest.mark.parametrize(("relative", "fmt"), sorted(FIXTURE_FORMATS.items()))
def test_it_detects_the_format_of_each_fixture(relative: str, fmt: str) -> None:
    assert detect_format(FIXTURES / relative) == fmt


@pytest.mark.parametrize(("relative", "fmt"), sorted(REAL_FORMATS.items()))
def test_it_detects_the_format_of_the_real_files(relative: str, fmt: str) -> None:
    assert detect_format(shared_file(relative)) == fmt


def test_it_detects_a_microcoder_export(tmp_path: Path) -> None:
    from curation.records import ProblemRecord

    path = tmp_path / "release.jsonl"
    path.write_text(json.dumps(ProblemRecord("codeforces", "1A", "T", "S").to_export_dict()) + "\n")
    assert detect_format(path) == "microcoder"


def test_it_detects_nothing_in_unrelated_or_unreadable_files(tmp_path: Path) -> None:
    unrelated = tmp_path / "people.jsonl"
    unrelated.write_text('{"name": "Ada", "born": 1815}\n')
    corrupt = tmp_path / "broken.jsonl.gz"
    corrupt.write_bytes(b"not gzip at all")
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    assert detect_format(unrelated) is None
    assert detect_format(corrupt) is None
    assert detect_format(empty_dir) is None
    assert detect_format(tmp_path / "missing.jsonl") is None
