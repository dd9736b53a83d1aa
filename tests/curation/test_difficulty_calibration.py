"""Pass-rate sets and calibrations: parsing, the fit, measured rates winning, applied buckets, the trace."""

from __future__ import annotations

import json
from typing import Any

import pytest

from curation.models import CalibratedDifficulty, Problem
from curation.services.calibration import calibration_apply, calibration_create, pass_rate_set_upload

from .difficulty_support import catalogue, scored

pytestmark = pytest.mark.django_db


def _lines(rows: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(r) for r in rows]


def _rates(problems: list[Problem], *, skip: int = 0) -> list[str]:
    """Odd (tree DP) problems mostly fail, even (sums) mostly pass; the first ``skip`` get no rate."""
    numbered = [(int(p.external_id[1:]), p) for p in problems]
    return _lines([
        {"platform": "leetcode", "external_id": p.external_id, "passed": 1 if i % 2 else 7, "attempts": 8}
        for i, p in numbered if i >= skip
    ])


@pytest.fixture
def calibrated(import_records: Any, curator: Any) -> Any:
    problems = catalogue(import_records, n=12)
    job = scored(curator)
    rates = pass_rate_set_upload(name="qwen", target_model="Qwen3-8B", lines=_rates(problems, skip=2), user=curator)
    return calibration_create(name="cal", scoring_id=job.pk, pass_rate_set_id=rates.pk, method="isotonic", user=curator)


def test_it_matches_uploaded_rows_to_problems_and_lists_the_unknown_ones(import_records: Any) -> None:
    problems = catalogue(import_records, n=2)
    rows = _rates(problems) + _lines([{"platform": "leetcode", "external_id": "nope", "passed": 0, "attempts": 1}])
    prs = pass_rate_set_upload(name="r", target_model="m", lines=rows)
    assert (prs.rates.count(), prs.unmatched_count, prs.unmatched) == (2, 1, ["leetcode:nope"])


def test_it_reads_the_short_problem_key_form_of_a_pass_rate_row(import_records: Any) -> None:
    catalogue(import_records, n=1)
    prs = pass_rate_set_upload(name="r", target_model="m",
                               lines=[json.dumps({"problem": "leetcode:p0", "passed": 2, "attempts": 4})])
    assert list(prs.rates.values_list("passed", "attempts")) == [(2, 4)]


@pytest.mark.parametrize("row, message", [
    ({"platform": "leetcode", "external_id": "p0", "passed": 3, "attempts": 2}, "line 1: passed .* exceeds"),
    ({"platform": "leetcode", "external_id": "p0", "passed": "3", "attempts": 4}, "line 1: passed must"),
    ({"external_id": "p0", "passed": 1, "attempts": 4}, "line 1: platform is missing"),
])
def test_it_rejects_a_bad_pass_rate_row_naming_the_line_and_field(row: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pass_rate_set_upload(name="r", target_model="m", lines=[json.dumps(row)])


def test_it_fits_a_versioned_calibration_with_a_cross_validated_error(calibrated: Any) -> None:
    assert calibrated.version == 1 and calibrated.n_points == 10
    assert 0.0 <= calibrated.cv_mae <= 1.0 and calibrated.fit["curve"]
    assert sum(calibrated.counts_by_bucket.values()) == 12


def test_it_lets_a_measured_pass_rate_decide_the_difficulty(calibrated: Any) -> None:
    measured = CalibratedDifficulty.objects.get(calibration=calibrated, problem__external_id="p3")
    assert (measured.measured_passed, measured.measured_attempts) == (1, 8)
    assert measured.difficulty == pytest.approx(1 - 1 / 8) and measured.bucket == "hard"
    unmeasured = CalibratedDifficulty.objects.get(calibration=calibrated, problem__external_id="p1")
    assert unmeasured.measured_attempts is None
    assert unmeasured.difficulty == pytest.approx(1 - unmeasured.predicted_pass_rate)


def test_it_writes_calibrated_buckets_to_problems_when_applied(calibrated: Any, curator: Any) -> None:
    assert calibration_apply(calibration_id=calibrated.pk, user=curator) == 12
    expected = dict(CalibratedDifficulty.objects.filter(calibration=calibrated).values_list("problem_id", "bucket"))
    assert dict(Problem.objects.values_list("pk", "difficulty")) == expected
    assert set(Problem.objects.values_list("difficulty_source", flat=True)) == {"calibrated"}
    assert Problem.objects.get(external_id="p5").difficulty == "hard"
    assert Problem.objects.get(external_id="p4").difficulty == "easy"


def test_it_refuses_a_calibration_with_too_few_measured_problems(import_records: Any) -> None:
    problems = catalogue(import_records, n=6)
    job = scored()
    rates = pass_rate_set_upload(name="r", target_model="m", lines=_rates(problems, skip=3))
    with pytest.raises(ValueError, match="^pass_rate_set: only 3"):
        calibration_create(name="c", scoring_id=job.pk, pass_rate_set_id=rates.pk)


def test_it_numbers_calibration_versions_per_name(calibrated: Any) -> None:
    again = calibration_create(name="cal", scoring_id=calibrated.scoring_id,
                               pass_rate_set_id=calibrated.pass_rate_set_id, method="logistic")
    assert again.version == 2 and again.method == "logistic"


def test_it_shows_samples_score_pass_rate_and_bucket_on_the_problem_page(
    calibrated: Any, client_as: Any, viewer: Any, curator: Any
) -> None:
    calibration_apply(calibration_id=calibrated.pk, user=curator)
    problem = Problem.objects.get(external_id="p3")
    row = CalibratedDifficulty.objects.get(calibration=calibrated, problem=problem)
    html = client_as(viewer).get(f"/curation/problems/{problem.pk}/").content.decode()
    assert "Difficulty: how this bucket was reached" in html
    assert f"{row.score:.3f}" in html and "1/8" in html and "bucket <strong>hard</strong>" in html
    assert html.count("<summary>answer</summary>") == 3


def test_it_draws_the_fit_as_an_svg_chart_on_the_calibration_page(
    calibrated: Any, client_as: Any, viewer: Any
) -> None:
    html = client_as(viewer).get(f"/curation/calibrations/{calibrated.pk}/").content.decode()
    assert "<svg" in html and 'class="fit"' in html and html.count('class="point"') == 10


def test_it_takes_pass_rates_from_a_model_evaluation(import_records: Any, trainer: Any, curator: Any) -> None:
    from curation.services import release_create
    from curation.services.calibration import pass_rate_set_from_evaluation
    from training.models import ModelEvaluationProblem
    from training.services.evaluations import model_evaluation_create

    problems = catalogue(import_records, n=3)
    release = release_create(name="r", filter_spec={})
    evaluation = model_evaluation_create(user=trainer, engine="transformers", model="fake", release_id=release.pk, k=4)
    ModelEvaluationProblem.objects.bulk_create([
        ModelEvaluationProblem(evaluation=evaluation, problem=p, key=f"leetcode:{p.external_id}", platform="leetcode",
                               external_id=p.external_id, attempts=4 if i else 0, passed=i)
        for i, p in enumerate(problems)
    ])
    prs = pass_rate_set_from_evaluation(evaluation_id=evaluation.pk, user=curator)
    assert prs.source == "evaluation" and "fake" in prs.target_model
    assert sorted(prs.rates.values_list("passed", "attempts")) == [(0, 0), (1, 4), (2, 4)]


def test_it_names_the_field_for_an_unknown_evaluation() -> None:
    from curation.services.calibration import pass_rate_set_from_evaluation

    with pytest.raises(ValueError, match="^evaluation_id: "):
        pass_rate_set_from_evaluation(evaluation_id=424242)
