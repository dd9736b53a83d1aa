"""Calibration math on hand-computed cases (isotonic, logistic, CV error, buckets)."""

from __future__ import annotations

import math

import pytest

from curation.difficulty.calibrate import (
    CalibrationFit,
    Thresholds,
    bucket_for,
    calibrated_difficulty,
    fit_calibration,
)


def test_it_fits_a_decreasing_isotonic_curve_and_interpolates_between_points() -> None:
    scores = [1, 2, 3, 4, 5, 6]
    passed = [5, 4, 3, 2, 1, 0]  # rates 1.0, 0.8, ... 0.0 over 5 attempts each
    fit = fit_calibration(scores, passed, [5] * 6, method="isotonic", folds=3)
    assert fit.predict_pass_rate(2) == pytest.approx(0.8)
    assert fit.predict_pass_rate(2.5) == pytest.approx(0.7)
    assert fit.predict_pass_rate(0) == pytest.approx(1.0)  # clipped beyond the data
    assert fit.n == 6


def test_it_pools_violators_weighted_by_attempts() -> None:
    # scores 1 and 2 have rates 0.2 and 0.6 (a harder score passing more): pooled (2 + 6) / 20 = 0.4
    scores = [1, 2, 3, 4, 5]
    passed = [2, 6, 3, 1, 0]
    attempts = [10, 10, 10, 10, 10]
    fit = fit_calibration(scores, passed, attempts, method="isotonic")
    assert fit.predict_pass_rate(1) == pytest.approx(0.4)
    assert fit.predict_pass_rate(2) == pytest.approx(0.4)
    assert fit.predict_pass_rate(3) == pytest.approx(0.3)


def test_it_recovers_a_logistic_curve_from_binomial_counts() -> None:
    # p = sigmoid(3 - 0.6 x), 100,000 attempts per point: the fit returns those parameters
    xs = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    attempts = [100_000] * len(xs)
    passed = [round(a / (1 + math.exp(-(3 - 0.6 * x)))) for a, x in zip(attempts, xs)]
    fit = fit_calibration(xs, passed, attempts, method="logistic")
    assert fit.params["intercept"] == pytest.approx(3.0, abs=0.05)
    assert fit.params["coef"] == pytest.approx(-0.6, abs=0.01)


def test_it_weights_logistic_points_by_attempts() -> None:
    # identical rates but one point with many attempts pulls the fit to its rate
    few = fit_calibration([1, 2, 3, 4, 5], [1, 1, 1, 1, 1], [1, 2, 2, 2, 2], method="logistic")
    many = fit_calibration([1, 2, 3, 4, 5], [1000, 1, 1, 1, 1], [1000, 2, 2, 2, 2], method="logistic")
    assert many.predict_pass_rate(1) > few.predict_pass_rate(1)


def test_it_reports_zero_cv_error_and_brier_a_quarter_for_a_constant_half_rate() -> None:
    # every problem passes 1 of 2: any fold predicts 0.5 -> MAE 0; Brier per attempt (0.5)^2 = 0.25
    fit = fit_calibration([1, 2, 3, 4, 5, 6], [1] * 6, [2] * 6, method="isotonic", folds=3)
    assert fit.cv_mae == pytest.approx(0.0)
    assert fit.cv_brier == pytest.approx(0.25)


def test_it_refuses_too_few_problems_with_attempts() -> None:
    with pytest.raises(ValueError, match="at least 5 problems"):
        fit_calibration([1, 2, 3, 4, 5], [1, 1, 1, 1, 0], [2, 2, 2, 2, 0])


def test_it_refuses_more_passes_than_attempts() -> None:
    with pytest.raises(ValueError, match="passed <= attempts"):
        fit_calibration([1, 2, 3, 4, 5], [3, 1, 1, 1, 1], [2, 2, 2, 2, 2])


def test_it_round_trips_a_fit_through_json_safe_dicts() -> None:
    fit = fit_calibration([1, 2, 3, 4, 5, 6], [5, 4, 4, 2, 1, 0], [5] * 6, method="logistic")
    again = CalibrationFit.from_dict(fit.to_dict())
    assert again.predict_pass_rate(3.3) == pytest.approx(fit.predict_pass_rate(3.3))
    assert again.curve == fit.curve and len(fit.curve) == 46


def test_it_prefers_the_measured_rate_for_calibrated_difficulty() -> None:
    fit = fit_calibration([1, 2, 3, 4, 5, 6], [5, 4, 3, 2, 1, 0], [5] * 6)
    assert calibrated_difficulty(fit, 2.0) == pytest.approx(0.2)
    assert calibrated_difficulty(fit, 2.0, measured=(1, 4)) == pytest.approx(0.75)
    assert calibrated_difficulty(fit, 2.0, measured=(0, 0)) == pytest.approx(0.2)


def test_it_buckets_by_thresholds() -> None:
    t = Thresholds(easy_below=0.3, hard_from=0.7)
    assert [bucket_for(d, t) for d in (0.0, 0.29, 0.3, 0.69, 0.7, 1.0)] == [
        "easy",
        "easy",
        "medium",
        "medium",
        "hard",
        "hard",
    ]


def test_it_refuses_crossed_thresholds() -> None:
    with pytest.raises(ValueError, match="easy_below <= hard_from"):
        Thresholds(easy_below=0.8, hard_from=0.2)
