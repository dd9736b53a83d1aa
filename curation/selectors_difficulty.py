"""Reads for the difficulty matrix: scorings, their comparison, calibrations and a problem's trace."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from curation.difficulty import DIMENSIONS
from curation.models import (
    CalibratedDifficulty,
    Calibration,
    PassRateSet,
    ScoringJob,
    ScoringResult,
    ScoringSample,
)


def scoring_list() -> QuerySet[ScoringJob]:
    return ScoringJob.objects.select_related("created_by", "release").defer("problem_ids")


def calibration_list() -> QuerySet[Calibration]:
    return Calibration.objects.select_related("scoring", "pass_rate_set", "created_by").defer("fit")


def pass_rate_set_list() -> QuerySet[PassRateSet]:
    return PassRateSet.objects.select_related("created_by")


def problem_difficulty_values(*, problem_ids: Sequence[int]) -> dict[int, float]:
    """Calibrated difficulty (1 - pass rate) per problem from the latest applied calibration that
    covers it; problems never calibrated are absent."""
    rows = (CalibratedDifficulty.objects.filter(problem_id__in=list(problem_ids), calibration__applied_at__isnull=False)
            .order_by("problem_id", "-calibration__applied_at").values_list("problem_id", "difficulty"))
    values: dict[int, float] = {}
    for pid, value in rows:
        values.setdefault(pid, value)
    return values


@dataclass
class ProblemTrace:
    """raw samples -> score -> predicted / measured pass rate -> bucket, for one problem."""

    calibrated: CalibratedDifficulty | None
    result: ScoringResult | None
    samples: list[ScoringSample]
    other_results: list[ScoringResult]


def problem_difficulty_trace(*, problem_id: int) -> ProblemTrace:
    """The calibration that decides the problem's bucket (latest applied, else latest) with its score
    and raw samples; otherwise the latest scoring result. ``other_results`` lists every scoring of it."""
    calibrated = (CalibratedDifficulty.objects.filter(problem_id=problem_id)
                  .select_related("calibration", "calibration__pass_rate_set", "result", "result__scoring")
                  .order_by("calibration__applied_at", "calibration_id").last())
    applied = (CalibratedDifficulty.objects.filter(problem_id=problem_id, calibration__applied_at__isnull=False)
               .select_related("calibration", "calibration__pass_rate_set", "result", "result__scoring")
               .order_by("calibration__applied_at").last())
    calibrated = applied or calibrated
    results = list(ScoringResult.objects.filter(problem_id=problem_id).select_related("scoring").order_by("-scoring_id"))
    result = calibrated.result if calibrated else (results[0] if results else None)
    samples = list(ScoringSample.objects.filter(scoring_id=result.scoring_id, problem_id=problem_id)
                   .order_by("index")) if result else []
    return ProblemTrace(calibrated=calibrated, result=result, samples=samples, other_results=results)


@dataclass
class Comparison:
    common: int
    spearman: float | None
    tercile_agreement: float | None
    tercile_kappa: float | None
    dimension_diff: dict[str, float]  # mean of (b - a) per dimension
    rows: list[tuple[int, str, float, float]]  # (problem id, title, score a, score b), largest gaps first


def _terciles(scores: dict[int, float]) -> dict[int, str]:
    ranked = sorted(scores, key=lambda pid: (scores[pid], pid))
    n = len(ranked)
    return {pid: ("low", "mid", "high")[min(2, 3 * i // n)] for i, pid in enumerate(ranked)}


def scoring_compare(*, a: ScoringJob, b: ScoringJob, limit: int = 50) -> Comparison:
    """Compare two scorings on the problems both scored: Spearman rank correlation of the scores,
    agreement (and Cohen's kappa) on score terciles, mean per-dimension difference (b - a)."""
    from scipy.stats import spearmanr

    from curation.difficulty.agreement import cohen_kappa  # scipy: loaded only for a comparison

    ra = {r.problem_id: r for r in ScoringResult.objects.filter(scoring=a, score__isnull=False)}
    rb = {r.problem_id: r for r in ScoringResult.objects.filter(scoring=b, score__isnull=False)
          .select_related("problem").only("problem_id", "score", "dimensions", "problem__title")}
    common = sorted(set(ra) & set(rb))
    if not common:
        return Comparison(0, None, None, None, {}, [])
    sa = {p: float(ra[p].score or 0.0) for p in common}
    sb = {p: float(rb[p].score or 0.0) for p in common}
    rho: float | None = None
    if len(common) >= 3 and len(set(sa.values())) > 1 and len(set(sb.values())) > 1:
        rho = float(spearmanr([sa[p] for p in common], [sb[p] for p in common]).statistic)
    ta, tb = _terciles(sa), _terciles(sb)
    agreement = sum(ta[p] == tb[p] for p in common) / len(common)
    kappa = cohen_kappa([ta[p] for p in common], [tb[p] for p in common]) if len(common) >= 2 else None
    diffs = {
        d: sum(float(rb[p].dimensions.get(d, 0.0)) - float(ra[p].dimensions.get(d, 0.0)) for p in common) / len(common)
        for d in DIMENSIONS
    }
    gaps = sorted((p for p in common if abs(sb[p] - sa[p]) > 1e-9), key=lambda p: -abs(sb[p] - sa[p]))[:limit]
    rows = [(p, rb[p].problem.title, sa[p], sb[p]) for p in gaps]
    return Comparison(len(common), rho, agreement, kappa, diffs, rows)


def calibration_points(*, calibration: Calibration) -> list[tuple[float, float, int]]:
    """(score, measured pass rate, attempts) of the calibrated problems that had a measurement."""
    return [
        (score, passed / attempts, attempts)
        for score, passed, attempts in CalibratedDifficulty.objects.filter(
            calibration=calibration, measured_attempts__gt=0
        ).values_list("score", "measured_passed", "measured_attempts")
    ]


def calibration_chart_svg(*, calibration: Calibration, width: int = 640, height: int = 320) -> str:
    """A server-rendered SVG: measured pass rates (dots), the fitted curve (line) and the bucket
    thresholds (dashed lines at pass rate 1 - hard_from and 1 - easy_below). Only numbers and fixed
    text go into the markup."""
    pad = 40
    curve: list[Any] = list(calibration.fit.get("curve") or [])
    points = calibration_points(calibration=calibration)
    xs = [float(c[0]) for c in curve] + [p[0] for p in points] or [1.0, 10.0]
    lo, hi = min(xs), max(xs)
    hi = hi if hi > lo else lo + 1.0

    def sx(x: float) -> float:
        return pad + (x - lo) / (hi - lo) * (width - 2 * pad)

    def sy(y: float) -> float:
        return height - pad - max(0.0, min(1.0, y)) * (height - 2 * pad)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" class="chart" role="img" '
             f'aria-label="score to pass rate">',
             f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#888"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#888"/>',
             f'<text x="{width / 2:.0f}" y="{height - 6}" text-anchor="middle" font-size="12">score '
             f'(higher = harder)</text>',
             f'<text x="12" y="{height / 2:.0f}" font-size="12" transform="rotate(-90 12 {height / 2:.0f})" '
             f'text-anchor="middle">pass rate</text>']
    for tick in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{pad - 4}" y="{sy(tick) + 4:.1f}" font-size="10" text-anchor="end">{tick:.1f}</text>')
    for tick in (lo, (lo + hi) / 2, hi):
        parts.append(f'<text x="{sx(tick):.1f}" y="{height - pad + 14}" font-size="10" text-anchor="middle">'
                     f'{tick:.1f}</text>')
    for value, label in ((1 - calibration.hard_from, "hard below"), (1 - calibration.easy_below, "easy above")):
        parts.append(f'<line x1="{pad}" y1="{sy(value):.1f}" x2="{width - pad}" y2="{sy(value):.1f}" '
                     f'stroke="#c77" stroke-dasharray="4 3"/>')
        parts.append(f'<text x="{width - pad}" y="{sy(value) - 3:.1f}" font-size="10" text-anchor="end">'
                     f'{label} {value:.2f}</text>')
    for x, y, _ in points:
        parts.append(f'<circle class="point" cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="#48a" fill-opacity="0.5"/>')
    if curve:
        path = " ".join(f"{sx(float(x)):.1f},{sy(float(y)):.1f}" for x, y in curve)
        parts.append(f'<polyline class="fit" points="{path}" fill="none" stroke="#d60" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)
