"""Calibrate matrix scores against a target model's measured pass rates (scikit-learn).

A problem contributes ``(score, passed, attempts)``; problems with no attempts carry no information
and are left out. Two fits of score -> pass rate:

- ``isotonic``: ``IsotonicRegression(increasing=False)`` on the per-problem rates, weighted by
  attempts (a harder score never predicts a higher pass rate); between fitted points it interpolates
  linearly and beyond them it clips, so ``params`` (the thresholds) reproduce it exactly.
- ``logistic``: one-feature logistic regression on the binomial counts: each problem is a "passed"
  row weighted by ``passed`` and a "failed" row weighted by ``attempts - passed`` (so a problem with
  16 attempts counts 16 times as much as one with 1); ``p = 1 / (1 + exp(-(intercept + coef*score)))``.

The reported error is K-fold cross-validated (shuffled with ``seed``): ``cv_mae`` = mean absolute
difference between the predicted and measured pass rate per held-out problem, ``cv_brier`` = Brier
score per held-out attempt. Calibrated difficulty is ``1 - pass rate``, a measured rate winning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .core import SCALE

METHODS = ("isotonic", "logistic")
#: fewer problems than this cannot give a fit and a cross-validated error worth storing
MIN_POINTS = 5
EASY, MEDIUM, HARD = "easy", "medium", "hard"


@dataclass
class CalibrationFit:
    """A stored calibration: enough to predict (``params``), judge (``cv_*``) and draw (``curve``)."""

    method: str
    n: int
    cv_mae: float
    cv_brier: float | None
    params: dict[str, Any]
    curve: list[tuple[float, float]] = field(default_factory=list)

    def predict_pass_rate(self, score: float) -> float:
        return float(_predict(self.method, self.params, np.array([float(score)]))[0])

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "n": self.n,
            "cv_mae": self.cv_mae,
            "cv_brier": self.cv_brier,
            "params": self.params,
            "curve": [[x, y] for x, y in self.curve],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CalibrationFit:
        return cls(
            method=str(d["method"]),
            n=int(d["n"]),
            cv_mae=float(d["cv_mae"]),
            cv_brier=None if d.get("cv_brier") is None else float(d["cv_brier"]),
            params=dict(d["params"]),
            curve=[(float(x), float(y)) for x, y in d.get("curve", [])],
        )


def _predict(method: str, params: Mapping[str, Any], x: np.ndarray) -> np.ndarray:
    if method == "isotonic":
        xs, ys = np.asarray(params["x"], float), np.asarray(params["y"], float)
        return np.clip(np.interp(x, xs, ys), 0.0, 1.0)  # np.interp clips beyond the ends
    if method == "logistic":
        z = float(params["intercept"]) + float(params["coef"]) * x
        return 1.0 / (1.0 + np.exp(-z))
    raise ValueError(f"unknown calibration method {method!r}; choose one of {', '.join(METHODS)}")


def _fit(method: str, x: np.ndarray, passed: np.ndarray, attempts: np.ndarray) -> dict[str, Any]:
    rate = passed / attempts
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(increasing=False, y_min=0.0, y_max=1.0, out_of_bounds="clip")
        iso.fit(x, rate, sample_weight=attempts)
        return {"x": [float(v) for v in iso.X_thresholds_], "y": [float(v) for v in iso.y_thresholds_]}
    if method == "logistic":
        if passed.sum() == 0 or passed.sum() == attempts.sum():
            # One outcome only: the maximum-likelihood slope is infinite; predict the pooled rate.
            pooled = float(passed.sum() / attempts.sum())
            pooled = min(max(pooled, 1e-6), 1 - 1e-6)
            return {"intercept": math.log(pooled / (1 - pooled)), "coef": 0.0}
        from sklearn.linear_model import LogisticRegression

        xx = np.concatenate([x, x]).reshape(-1, 1)
        yy = np.concatenate([np.ones_like(x), np.zeros_like(x)])
        ww = np.concatenate([passed, attempts - passed])
        keep = ww > 0
        model = LogisticRegression(C=1e4, max_iter=1000)
        model.fit(xx[keep], yy[keep], sample_weight=ww[keep])
        return {"intercept": float(model.intercept_[0]), "coef": float(model.coef_[0][0])}
    raise ValueError(f"unknown calibration method {method!r}; choose one of {', '.join(METHODS)}")


def fit_calibration(
    scores: Sequence[float],
    passed: Sequence[int],
    attempts: Sequence[int],
    *,
    method: str = "isotonic",
    folds: int = 5,
    seed: int = 0,
) -> CalibrationFit:
    """Fit score -> pass rate and its K-fold cross-validated error (see the module docstring).

    Raises ``ValueError`` naming the problem: unequal lengths, a negative count, ``passed > attempts``,
    a non-finite score, an unknown method, or fewer than ``MIN_POINTS`` problems with attempts."""
    if method not in METHODS:
        raise ValueError(f"unknown calibration method {method!r}; choose one of {', '.join(METHODS)}")
    if not len(scores) == len(passed) == len(attempts):
        raise ValueError(
            f"scores, passed and attempts differ in length ({len(scores)}, {len(passed)}, {len(attempts)})"
        )
    for i, (s, n_pass, n_try) in enumerate(zip(scores, passed, attempts)):
        if not math.isfinite(float(s)):
            raise ValueError(f"point {i}: score {s!r} is not a finite number")
        if int(n_try) < 0 or int(n_pass) < 0 or int(n_pass) > int(n_try):
            raise ValueError(
                f"point {i}: need 0 <= passed <= attempts, got passed={n_pass}, attempts={n_try}"
            )
    keep = [i for i, a in enumerate(attempts) if int(a) > 0]
    if len(keep) < MIN_POINTS:
        raise ValueError(
            f"need at least {MIN_POINTS} problems with attempts > 0 to calibrate, got {len(keep)}; "
            "evaluate the target model on more problems first"
        )
    if folds < 2:
        raise ValueError(f"folds must be >= 2, got {folds}")
    x = np.array([float(scores[i]) for i in keep])
    p = np.array([float(passed[i]) for i in keep])
    a = np.array([float(attempts[i]) for i in keep])

    from sklearn.model_selection import KFold

    held_pred = np.zeros_like(x)
    for train, test in KFold(n_splits=min(folds, len(x)), shuffle=True, random_state=seed).split(x):
        held_pred[test] = _predict(method, _fit(method, x[train], p[train], a[train]), x[test])
    cv_mae = float(np.mean(np.abs(held_pred - p / a)))
    cv_brier = float(np.sum(p * (1 - held_pred) ** 2 + (a - p) * held_pred**2) / np.sum(a))

    params = _fit(method, x, p, a)
    grid = np.linspace(SCALE[0], SCALE[1], 46)  # every 0.2 of the scale: smooth enough for a chart
    curve = [(round(float(g), 3), round(float(v), 5)) for g, v in zip(grid, _predict(method, params, grid))]
    return CalibrationFit(method, len(x), round(cv_mae, 6), round(cv_brier, 6), params, curve)


def calibrated_difficulty(
    fit: CalibrationFit, score: float, measured: tuple[int, int] | None = None
) -> float:
    """``1 - pass rate``: the measured ``(passed, attempts)`` rate when attempts > 0, else the fit's."""
    if measured is not None and measured[1] > 0:
        passed, attempts = measured
        if not 0 <= passed <= attempts:
            raise ValueError(f"need 0 <= passed <= attempts, got {passed}/{attempts}")
        return 1.0 - passed / attempts
    return 1.0 - fit.predict_pass_rate(score)


@dataclass
class Thresholds:
    """Buckets of calibrated difficulty: ``[0, easy_below)`` easy, ``[hard_from, 1]`` hard, else medium."""

    easy_below: float = 0.35
    hard_from: float = 0.65

    def __post_init__(self) -> None:
        if not 0.0 <= self.easy_below <= self.hard_from <= 1.0:
            raise ValueError(
                f"thresholds need 0 <= easy_below <= hard_from <= 1, got {self.easy_below}, {self.hard_from}"
            )


def bucket_for(difficulty: float, thresholds: Thresholds | None = None) -> str:
    """``"easy"`` | ``"medium"`` | ``"hard"`` for a calibrated difficulty in [0, 1]."""
    t = thresholds or Thresholds()
    if difficulty < t.easy_below:
        return EASY
    return HARD if difficulty >= t.hard_from else MEDIUM
