"""The import pipeline on the real shared data (skipped when ../shared/data is absent)."""

from __future__ import annotations

import json

import pytest

from curation.export import iter_jsonl
from curation.models import Problem
from curation.records import ProblemRecord
from curation.services import problem_import, problems_check_constraints, problems_normalize, release_create

from .conftest import shared_file

pytestmark = pytest.mark.django_db


def test_it_imports_the_leetcodedataset_test_split_with_all_its_real_tests() -> None:
    path = shared_file("leetcodedataset", "LeetCodeDataset-v0.3.1-test.jsonl.gz")
    batch = problem_import(path=path, format="leetcodedataset")
    assert (batch.status, batch.imported_count, batch.rejected_count) == ("succeeded", 228, 0)
    # 24,246 pairs less the 1,012 whose expected output is the dataset generator's own error
    assert sum(Problem.objects.values_list("test_count", flat=True)) == 24246 - 1012
    assert set(Problem.objects.values_list("difficulty", flat=True)) == {"easy", "medium", "hard"}


def test_it_takes_codecontests_problems_through_the_pipeline_to_a_release() -> None:
    path = shared_file("codecontests-sample", "code_contests_sample.jsonl")
    batch = problem_import(path=path, format="codecontests")
    assert batch.rejected_count == 0 and batch.imported_count == 20
    problems_normalize()
    problems_check_constraints()
    release = release_create(name="cc", filter_spec={})
    rows = [json.loads(line) for line in b"".join(iter_jsonl(release)).splitlines()]
    stored = dict(Problem.objects.values_list("external_id", "content_hash"))
    assert {r["external_id"]: ProblemRecord.from_export_dict(r).content_hash() for r in rows} == {
        ext: stored[ext] for ext in (r["external_id"] for r in rows)
    }
