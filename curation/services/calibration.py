"""Pass-rate sets and calibrations: measured pass rates of a target model -> a fit score -> pass rate
-> calibrated difficulty (1 - pass rate, the measured rate winning) -> bucket, applied to problems."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone

from curation.models import (
    CalibratedDifficulty,
    Calibration,
    CalibrationMethod,
    JobStatus,
    PassRate,
    PassRateSet,
    PassRateSource,
    Problem,
    ScoringJob,
    ScoringResult,
)

MAX_UNMATCHED_KEPT = 100
#: fewer (score, measured pass rate) pairs than this cannot support a cross-validated fit
MIN_POINTS = 5


def _user(user: Any) -> Any:
    return user if getattr(user, "is_authenticated", False) else None


def parse_pass_rate_jsonl(lines: Iterable[str | bytes]) -> list[dict[str, Any]]:
    """Parse ``{"platform", "external_id", "passed", "attempts"}`` rows (or ``{"problem":
    "platform:external_id", "passed", "attempts"}``); raise ``ValueError`` naming the line and the field
    of the first bad row (0 <= passed <= attempts, integers)."""
    rows = []
    for number, raw in enumerate(lines, start=1):
        line = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {number}: not JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise ValueError(f"line {number}: a row must be a JSON object")
        if "platform" not in row and "external_id" not in row and isinstance(row.get("problem"), str):
            # the short form: {"problem": "platform:external_id", "passed", "attempts"}
            platform, _, external_id = row["problem"].partition(":")
            row = {**row, "platform": platform, "external_id": external_id}
        for key in ("platform", "external_id"):
            if not isinstance(row.get(key), str | int) or not str(row.get(key)).strip():
                raise ValueError(f"line {number}: {key} is missing")
        for key in ("passed", "attempts"):
            if not isinstance(row.get(key), int) or isinstance(row.get(key), bool) or row[key] < 0:
                raise ValueError(f"line {number}: {key} must be an integer >= 0")
        if row["passed"] > row["attempts"]:
            raise ValueError(f"line {number}: passed ({row['passed']}) exceeds attempts ({row['attempts']})")
        rows.append({"platform": str(row["platform"]).strip(), "external_id": str(row["external_id"]).strip(),
                     "passed": row["passed"], "attempts": row["attempts"]})
    if not rows:
        raise ValueError("the file has no rows")
    return rows


@transaction.atomic
def _pass_rate_set_store(
    *, name: str, target_model: str, source: str, rows: list[dict[str, Any]], user: Any,
    evaluation_id: int | None = None, filename: str = "",
) -> PassRateSet:
    if not name.strip():
        raise ValueError("name: a pass-rate set needs a name")
    if not target_model.strip():
        raise ValueError("target_model: name the model whose pass rates these are")
    keys = {(r["platform"], r["external_id"]) for r in rows if "problem_id" not in r}
    by_key: dict[tuple[str, str], int] = {}
    if keys:
        platforms = {k[0] for k in keys}
        for pid, platform, ext in Problem.objects.filter(platform__name__in=platforms).values_list(
            "pk", "platform__name", "external_id"
        ):
            by_key[(platform, ext)] = pid
    totals: dict[int, list[int]] = {}
    unmatched = []
    for r in rows:
        pid = r.get("problem_id") or by_key.get((r["platform"], r["external_id"]))
        if pid is None:
            unmatched.append(f"{r['platform']}:{r['external_id']}")
            continue
        acc = totals.setdefault(int(pid), [0, 0])  # a problem listed twice adds up its attempts
        acc[0] += int(r["passed"])
        acc[1] += int(r["attempts"])
    prs = PassRateSet.objects.create(
        name=name.strip(), target_model=target_model.strip(), source=source, evaluation_id=evaluation_id,
        filename=filename, row_count=len(rows), unmatched=unmatched[:MAX_UNMATCHED_KEPT],
        unmatched_count=len(unmatched), created_by=_user(user),
    )
    PassRate.objects.bulk_create(
        [PassRate(pass_rate_set=prs, problem_id=pid, passed=p, attempts=a) for pid, (p, a) in totals.items()],
        batch_size=2000,
    )
    return prs


def pass_rate_set_upload(
    *, name: str, target_model: str, lines: Iterable[str | bytes], user: Any = None, filename: str = ""
) -> PassRateSet:
    """Store the pass rates of an uploaded JSONL file (see ``parse_pass_rate_jsonl``); rows naming no
    known problem are counted and listed, not fatal."""
    rows = parse_pass_rate_jsonl(lines)
    return _pass_rate_set_store(name=name, target_model=target_model, source=PassRateSource.UPLOAD, rows=rows,
                                user=user, filename=filename)


def pass_rate_set_from_evaluation(*, evaluation_id: int, user: Any = None, name: str = "") -> PassRateSet:
    """Store the per-problem pass rates of model evaluation ``evaluation_id`` (infrastructure errors
    are already excluded from attempts by the producer). Raises ``ValueError`` for an unknown
    evaluation or one without results."""
    from training import selectors as training_selectors  # the evaluation side is optional here

    try:
        rows = training_selectors.model_evaluation_pass_rates(evaluation_id=evaluation_id)
        label = training_selectors.model_evaluation_label(evaluation_id=evaluation_id)
    except Exception as exc:  # the producer raises its own DoesNotExist / ValueError
        if isinstance(exc, (ValueError, LookupError)) or type(exc).__name__ == "DoesNotExist":
            raise ValueError(f"evaluation_id: {exc or 'no such evaluation'}") from exc
        raise
    if not rows:
        raise ValueError(f"evaluation_id: evaluation {evaluation_id} has no per-problem results yet")
    return _pass_rate_set_store(
        name=name or f"evaluation {evaluation_id}", target_model=label, source=PassRateSource.EVALUATION,
        rows=list(rows), user=user, evaluation_id=evaluation_id,
    )


@transaction.atomic
def calibration_create(
    *,
    name: str,
    scoring_id: int,
    pass_rate_set_id: int,
    method: str = "isotonic",
    easy_below: float = 0.35,
    hard_from: float = 0.65,
    folds: int = 5,
    seed: int = 0,
    user: Any = None,
) -> Calibration:
    """Fit score -> pass rate on the problems having both a score (in scoring ``scoring_id``) and a
    measured pass rate with attempts > 0, then give every scored problem its calibrated difficulty and
    bucket (thresholds on difficulty = 1 - pass rate). A new version of ``name``. Raises
    ``ValueError`` naming the field (method, thresholds, too few points...)."""
    from curation.difficulty.calibrate import (  # scikit-learn loads only when fitting
        Thresholds,
        bucket_for,
        calibrated_difficulty,
        fit_calibration,
    )

    name = name.strip()
    if not name:
        raise ValueError("name: a calibration needs a name")
    if method not in CalibrationMethod.values:
        raise ValueError(f"method: must be one of {', '.join(CalibrationMethod.values)}, got {method!r}")
    if not (0.0 <= easy_below < hard_from <= 1.0):
        raise ValueError("easy_below/hard_from: need 0 <= easy_below < hard_from <= 1")
    try:
        scoring = ScoringJob.objects.get(pk=scoring_id)
    except ScoringJob.DoesNotExist:
        raise ValueError(f"scoring: no scoring #{scoring_id}") from None
    if scoring.status != JobStatus.SUCCEEDED:
        raise ValueError(f"scoring: scoring #{scoring_id} is {scoring.status}; calibrate a succeeded one")
    try:
        rate_set = PassRateSet.objects.get(pk=pass_rate_set_id)
    except PassRateSet.DoesNotExist:
        raise ValueError(f"pass_rate_set: no pass-rate set #{pass_rate_set_id}") from None
    results = list(ScoringResult.objects.filter(scoring=scoring, score__isnull=False))
    measured = {r.problem_id: (r.passed, r.attempts) for r in PassRate.objects.filter(pass_rate_set=rate_set)}
    pairs = [(r.score, *measured[r.problem_id]) for r in results
             if r.problem_id in measured and measured[r.problem_id][1] > 0]
    if len(pairs) < MIN_POINTS:
        raise ValueError(f"pass_rate_set: only {len(pairs)} scored problem(s) have a measured pass rate; "
                         f"a calibration needs at least {MIN_POINTS}")
    fit = fit_calibration([p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs],
                          method=method, folds=min(folds, len(pairs)), seed=seed)
    thresholds = Thresholds(easy_below=easy_below, hard_from=hard_from)
    previous = (Calibration.objects.select_for_update().filter(name=name).order_by("-version")
                .values_list("version", flat=True).first())
    calibration = Calibration.objects.create(
        name=name, version=(previous or 0) + 1, scoring=scoring, pass_rate_set=rate_set, method=method,
        fit=fit.to_dict(), cv_mae=fit.cv_mae, cv_brier=fit.cv_brier, n_points=len(pairs),
        easy_below=easy_below, hard_from=hard_from, created_by=_user(user),
    )
    rows = []
    for r in results:
        m = measured.get(r.problem_id)
        m = m if m and m[1] > 0 else None
        assert r.score is not None
        difficulty = calibrated_difficulty(fit, r.score, m)
        rows.append(CalibratedDifficulty(
            calibration=calibration, problem_id=r.problem_id, result=r, score=r.score,
            predicted_pass_rate=fit.predict_pass_rate(r.score),
            measured_passed=m[0] if m else None, measured_attempts=m[1] if m else None,
            difficulty=difficulty, bucket=bucket_for(difficulty, thresholds),
        ))
    CalibratedDifficulty.objects.bulk_create(rows, batch_size=2000)
    calibration.counts_by_bucket = dict(sorted(Counter(r.bucket for r in rows).items()))
    calibration.save(update_fields=["counts_by_bucket"])
    return calibration


@transaction.atomic
def calibration_apply(*, calibration_id: int, user: Any = None) -> int:
    """Write each calibrated problem's bucket to ``Problem.difficulty`` with
    ``difficulty_source="calibrated"``; returns the number of problems written. Releases already
    frozen keep the buckets they pinned."""
    calibration = Calibration.objects.select_for_update().get(pk=calibration_id)
    by_bucket: dict[str, list[int]] = {}
    for pid, bucket in CalibratedDifficulty.objects.filter(calibration=calibration).values_list("problem_id", "bucket"):
        by_bucket.setdefault(bucket, []).append(pid)
    written = 0
    for bucket, ids in by_bucket.items():
        written += Problem.objects.filter(pk__in=ids).update(difficulty=bucket, difficulty_source="calibrated")
    calibration.applied_at, calibration.applied_by = timezone.now(), _user(user)
    calibration.save(update_fields=["applied_at", "applied_by"])
    return written
