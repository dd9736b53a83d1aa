"""problem_import: per-row errors, atomic batches, idempotence and versioning."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from django.db import IntegrityError

from curation.models import (
    ImportStatus,
    Problem,
    ProblemVersion,
    ReferenceSolution,
    Stage,
    TestCase,
    compress_text,
    decompress_text,
)
from curation.records import TestRecord
from curation.services import problem_import
from curation.services.imports import record_dicts

from .conftest import make_record

pytestmark = pytest.mark.django_db


def test_it_imports_problems_with_tests_solutions_and_a_first_version(import_records: Any) -> None:
    batch = import_records([make_record("p1", tests=4), make_record("p2")])
    p1 = Problem.objects.get(external_id="p1")
    assert (batch.status, batch.imported_count, p1.version, p1.stage) == ("succeeded", 2, 1, Stage.IMPORTED)
    assert [t.output for t in TestCase.objects.filter(problem=p1)] == ["1\n", "3\n", "5\n", "7\n"]
    assert ReferenceSolution.objects.filter(problem=p1).count() == 1
    assert p1.versions.get().record().content_hash() == p1.content_hash


def test_it_derives_the_difficulty_bucket_from_the_platform_label(import_records: Any) -> None:
    import_records([make_record("p1", difficulty="Hard")])
    assert Problem.objects.get().difficulty == "hard"


def test_it_gives_problems_readable_unique_slugs(import_records: Any) -> None:
    import_records([make_record("Two Sum"), make_record("two-sum")])
    assert sorted(Problem.objects.values_list("slug", flat=True))[0] == "leetcode-two-sum"
    assert Problem.objects.filter(slug__startswith="leetcode-two-sum-").count() == 1


def test_it_reports_each_rejected_row_with_its_number_and_reason(import_records: Any) -> None:
    bad = make_record("p2").to_export_dict() | {"io_mode": "interactive"}
    batch = import_records([make_record("p1"), bad, "{not json", make_record("p3")])
    assert batch.imported_count == 2
    assert [(e["row"], e["external_id"]) for e in batch.errors] == [(2, "p2"), (3, "")]
    assert "io_mode must be 'stdin' or 'call'" in batch.errors[0]["reason"]
    assert batch.errors[1]["reason"].startswith("invalid JSON at line 3")


def test_it_rejects_a_second_row_for_the_same_problem_in_one_file(import_records: Any) -> None:
    batch = import_records([make_record("p1"), make_record("p1", tests=2)])
    assert batch.errors == [
        {"row": 2, "reason": "duplicate of row 1 in this file (leetcode/p1)", "external_id": "p1"}
    ]


def test_it_rejects_a_field_too_long_for_its_column_instead_of_failing_the_batch(import_records: Any) -> None:
    batch = import_records([make_record("x" * 300), make_record("p2")])
    assert (batch.imported_count, batch.errors[0]["reason"]) == (1, "external_id is longer than 255 characters")


def test_it_changes_nothing_when_the_same_content_is_imported_again(import_records: Any) -> None:
    import_records([make_record("p1"), make_record("p2")])
    again = import_records([make_record("p1"), make_record("p2")])
    assert (again.imported_count, again.unchanged_count, again.updated_count) == (0, 2, 0)
    assert ProblemVersion.objects.count() == 2


def test_it_keeps_the_previous_version_when_a_problem_changes(import_records: Any) -> None:
    import_records([make_record("p1", tests=3)])
    old_hash = Problem.objects.get().content_hash
    batch = import_records([make_record("p1", tests=5)])
    problem = Problem.objects.get()
    assert (batch.updated_count, problem.version, problem.test_count) == (1, 2, 5)
    assert list(problem.versions.values_list("version", "content_hash")) == [
        (2, problem.content_hash), (1, old_hash)
    ]
    assert problem.versions.get(version=1).record().tests[2].output == "5\n"


def test_it_replaces_the_tests_of_a_changed_problem(import_records: Any) -> None:
    import_records([make_record("p1", tests=3)])
    record = make_record("p1", tests=1)
    record.tests = [TestRecord("9 9\n", "18\n")]
    import_records([record])
    assert [t.output for t in TestCase.objects.all()] == ["18\n"]


def test_it_sends_a_changed_problem_back_to_the_first_stage(import_records: Any) -> None:
    import_records([make_record("p1")])
    Problem.objects.update(stage=Stage.CONSTRAINTS_PASSED)
    import_records([replace(make_record("p1"), title="Renamed")])
    assert Problem.objects.get().stage == Stage.IMPORTED


def test_it_rolls_back_a_whole_batch_when_the_database_fails(import_records: Any, monkeypatch: Any) -> None:
    real = ReferenceSolution.objects.bulk_create  # the last write of a batch: everything before it must go too
    calls = {"n": 0}

    def flaky(objs: Any, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:  # the second batch of rows
            raise IntegrityError("simulated failure")
        return real(objs, *args, **kwargs)

    monkeypatch.setattr(ReferenceSolution.objects, "bulk_create", flaky)
    batch = import_records([make_record(f"p{i}") for i in range(1, 6)], batch_size=2)
    assert sorted(Problem.objects.values_list("external_id", flat=True)) == ["p1", "p2", "p5"]
    assert (ProblemVersion.objects.count(), TestCase.objects.count()) == (3, 18)
    assert [e["row"] for e in batch.errors] == [3, 4]
    assert "rows 3-4 were rolled back together: IntegrityError: simulated failure" in batch.errors[0]["reason"]


def test_it_marks_the_batch_failed_when_the_input_cannot_be_read(tmp_path: Path) -> None:
    batch = problem_import(path=tmp_path / "missing.jsonl", format="microcoder")
    assert batch.status == ImportStatus.FAILED
    assert "could not read missing.jsonl as microcoder" in batch.message


def test_it_refuses_an_unknown_format_before_writing_anything(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="unknown import format 'nope'"):
        problem_import(path=tmp_path / "x.jsonl", format="nope")


def test_it_keeps_statements_and_tests_out_of_list_queries(import_records: Any) -> None:
    import_records([make_record("p1")])
    problem = Problem.objects.list_fields().get()
    assert {"statement", "starter_code", "minhash"} <= problem.get_deferred_fields()


def test_it_computes_the_export_dict_and_content_hash_exactly_as_the_record_does() -> None:
    rec = make_record("p1", rating=1900, contest_date=None)
    rec.checker = {"kind": "icpc", "float_tolerance": 1e-6, "case_sensitive": True}
    rec.extra = {"source": "x", "nested": {"a": [1, 2]}}
    rec.solutions[0].verified = True
    assert record_dicts(rec) == (rec.to_export_dict(), rec.content_hash())


@pytest.mark.parametrize("text", ["", "3 4\n", "x" * 5000, "ünïcödé " * 40])
def test_it_stores_short_and_long_texts_reversibly(text: str) -> None:
    assert decompress_text(compress_text(text)) == text


def test_it_keeps_row_errors_up_to_the_cap_and_counts_the_rest(import_records: Any, monkeypatch: Any) -> None:
    from curation.services import imports

    monkeypatch.setattr(imports, "MAX_REPORTED_ERRORS", 3)
    batch = import_records(["{not json"] * 5 + [make_record("ok")])
    assert (batch.imported_count, batch.rejected_count, len(batch.errors)) == (1, 5, 3)
    assert [e["row"] for e in batch.errors] == [1, 2, 3]
