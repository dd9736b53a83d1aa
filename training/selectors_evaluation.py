"""Reads of model evaluations: lists, per-problem results, samples, pass rates (CONTRACTS section D) and
the comparison of two or more evaluations. Re-exported by ``training.selectors``.

Comparison: evaluations are paired on the problems they share (curation problem ids). A problem counts as
*solved* when at least half of its judged samples pass (for k = 1: its one sample passes). McNemar's test
runs on the discordant pairs (solved by one evaluation, not the other), and a paired bootstrap on the
per-problem pass@1 values gives the difference of pass@1 with a 95 % interval.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from django.db.models import QuerySet

from training.models_evaluation import (
    ModelEvaluation,
    ModelEvaluationProblem,
    ModelEvaluationSample,
    summary_headline,
)

#: significance level of the comparison's reading
ALPHA = 0.05


def model_evaluation_list() -> QuerySet[ModelEvaluation]:
    return ModelEvaluation.objects.select_related("created_by", "release", "run").order_by("-created_at", "-id")


def model_evaluation_get(*, evaluation_id: int) -> ModelEvaluation:
    """The evaluation (raises ``ModelEvaluation.DoesNotExist``)."""
    return model_evaluation_list().select_related("contamination_release").get(pk=evaluation_id)


def model_evaluation_problems(
    *, evaluation_id: int, outcome: str = "", platform: str = ""
) -> QuerySet[ModelEvaluationProblem]:
    """Per-problem results in release order; ``outcome``: ``solved`` (any sample passed), ``unsolved``,
    ``infra`` (had an infrastructure error) or ``contaminated``."""
    qs = ModelEvaluationProblem.objects.filter(evaluation_id=evaluation_id).order_by("id")
    if platform:
        qs = qs.filter(platform=platform)
    if outcome == "solved":
        qs = qs.filter(passed__gt=0)
    elif outcome == "unsolved":
        qs = qs.filter(passed=0)
    elif outcome == "infra":
        qs = qs.filter(infra_errors__gt=0)
    elif outcome == "contaminated":
        qs = qs.filter(contaminated=True)
    return qs


def model_evaluation_samples(*, evaluation_id: int, problem_id: int) -> QuerySet[ModelEvaluationSample]:
    return ModelEvaluationSample.objects.filter(evaluation_id=evaluation_id, problem_id=problem_id).order_by("index")


def model_evaluation_pass_rates(*, evaluation_id: int) -> list[dict[str, Any]]:
    """One dict per evaluated problem: ``problem_id`` (curation Problem pk), ``platform``,
    ``external_id``, ``passed``, ``attempts`` (infrastructure errors excluded). Problems whose every
    sample was an infrastructure error have ``attempts == 0`` and carry no pass rate."""
    rows = ModelEvaluationProblem.objects.filter(evaluation_id=evaluation_id).order_by("id").values_list(
        "problem_id", "platform", "external_id", "passed", "attempts"
    )
    return [
        {"problem_id": pid, "platform": platform, "external_id": ext, "passed": passed, "attempts": attempts}
        for pid, platform, ext, passed, attempts in rows
    ]


def model_evaluation_label(*, evaluation_id: int) -> str:
    """Model name and settings in words, for display (e.g. ``Qwen/Qwen3-1.7B (vllm, k=4, T=0.6, top_p=0.95)``)."""
    return ModelEvaluation.objects.only(
        "name", "model", "engine", "k", "temperature", "top_p", "run_id", "checkpoint_step"
    ).get(pk=evaluation_id).label


def model_evaluation_export_rows(*, evaluation_id: int) -> Iterator[dict[str, Any]]:
    """The JSONL export rows ``{"platform", "external_id", "passed", "attempts"}``."""
    for row in model_evaluation_pass_rates(evaluation_id=evaluation_id):
        yield {k: row[k] for k in ("platform", "external_id", "passed", "attempts")}


def solved(passed: int, attempts: int) -> bool:
    """The comparison's binary outcome: at least half of the judged samples pass."""
    return attempts > 0 and 2 * passed >= attempts


def _aggregate(evaluation: ModelEvaluation) -> dict[str, Any]:
    h = summary_headline(evaluation.summary or {})
    return {
        "id": evaluation.pk, "label": evaluation.label, "status": evaluation.status, "k": evaluation.k,
        "problems": evaluation.problems_done, "pass@1": h["pass1"], "pass@1_ci95": h["pass1_ci"],
        "pass@k": h["passk"], "pass@k_ci95": h["passk_ci"], "infra_error_rate": h["infra_error_rate"],
        # the same numbers under names templates can read
        "pass1": h["pass1"], "pass1_ci": h["pass1_ci"], "passk": h["passk"], "passk_ci": h["passk_ci"],
    }


def reading(*, mcnemar_p: float | None, ci95: Sequence[float] | None, diff: float | None, a: str, b: str) -> str:
    """The plain-words reading of one pairwise comparison (``b`` against the baseline ``a``)."""
    if mcnemar_p is None or ci95 is None or diff is None:
        return "no shared problems with judged samples: nothing to compare"
    significant_mcnemar = mcnemar_p < ALPHA
    significant_bootstrap = not (ci95[0] <= 0.0 <= ci95[1])
    if not significant_mcnemar and not significant_bootstrap:
        return (f"not significant at 5 % (McNemar p = {mcnemar_p:.3f}; the 95 % interval of the pass@1 "
                f"difference contains 0): do not read this as progress")
    if significant_mcnemar != significant_bootstrap:
        return (f"the two tests disagree (McNemar p = {mcnemar_p:.3f}, pass@1 difference interval "
                f"[{ci95[0]:+.3f}, {ci95[1]:+.3f}]): treat it as not significant at 5 %")
    better, worse = (b, a) if diff > 0 else (a, b)
    return (f"significant at 5 %: {better} solves more than {worse} (pass@1 difference {diff:+.3f}, "
            f"95 % interval [{ci95[0]:+.3f}, {ci95[1]:+.3f}], McNemar p = {mcnemar_p:.3g})")


def compare_pair(
    a: ModelEvaluation, b: ModelEvaluation, *, bootstrap: int = 2000, seed: int = 0, max_flips: int = 500
) -> dict[str, Any]:
    """``b`` against the baseline ``a`` on the problems both evaluated (with at least one judged sample).

    Returns ``common`` (shared problems), ``b_only`` / ``a_only`` (flips: solved by one, not the other,
    as ``{problem_id, key, a, b}`` with ``passed/attempts`` strings; at most ``max_flips`` each, with
    ``b_only_count`` / ``a_only_count``), ``mcnemar_p``, ``diff`` (pass@1 of b minus a), ``ci95``,
    ``bootstrap_p`` and ``reading``.
    """
    from training.evaluate.stats import mcnemar, paired_bootstrap

    fields = ("problem_id", "key", "passed", "attempts")
    rows_a = {r[0]: r for r in ModelEvaluationProblem.objects.filter(evaluation=a, attempts__gt=0).values_list(*fields)}
    rows_b = {r[0]: r for r in ModelEvaluationProblem.objects.filter(evaluation=b, attempts__gt=0).values_list(*fields)}
    common = sorted(set(rows_a) & set(rows_b))
    a_only: list[dict[str, Any]] = []
    b_only: list[dict[str, Any]] = []
    rates_a: list[float] = []
    rates_b: list[float] = []
    for pid in common:
        _, key, pa, na = rows_a[pid]
        _, _, pb, nb = rows_b[pid]
        rates_a.append(pa / na)
        rates_b.append(pb / nb)
        sa, sb = solved(pa, na), solved(pb, nb)
        if sa != sb:
            flip = {"problem_id": pid, "key": key, "a": f"{pa}/{na}", "b": f"{pb}/{nb}"}
            (a_only if sa else b_only).append(flip)
    out: dict[str, Any] = {
        "a": a.pk, "b": b.pk, "common": len(common), "a_only_count": len(a_only), "b_only_count": len(b_only),
        "a_only": a_only[:max_flips], "b_only": b_only[:max_flips],
        "mcnemar_p": None, "diff": None, "ci95": None, "bootstrap_p": None,
    }
    if common:
        out["mcnemar_p"] = float(mcnemar(len(a_only), len(b_only)))
        boot = paired_bootstrap(rates_a, rates_b, n=bootstrap, seed=seed)
        out["diff"] = float(boot["diff"])
        out["ci95"] = [float(x) for x in boot["ci95"]]
        out["bootstrap_p"] = float(boot["p_value"]) if boot.get("p_value") is not None else None
    out["reading"] = reading(mcnemar_p=out["mcnemar_p"], ci95=out["ci95"], diff=out["diff"],
                             a=f"#{a.pk}", b=f"#{b.pk}")
    return out


def model_evaluation_compare(*, evaluation_ids: Sequence[int], bootstrap: int = 2000) -> dict[str, Any]:
    """Two or more evaluations side by side: ``evaluations`` (aggregate rows with intervals, in the
    order given) and ``pairs`` (every later one against the first, the baseline: :func:`compare_pair`).
    Raises ``ModelEvaluation.DoesNotExist`` naming a missing id; ``ValueError`` for fewer than two."""
    ids = list(dict.fromkeys(int(i) for i in evaluation_ids))
    if len(ids) < 2:
        raise ValueError("choose at least two different evaluations to compare")
    found = {e.pk: e for e in ModelEvaluation.objects.filter(pk__in=ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise ModelEvaluation.DoesNotExist(f"model evaluation(s) {missing} do not exist")
    evaluations = [found[i] for i in ids]
    base = evaluations[0]
    return {
        "baseline": base.pk,
        "evaluations": [_aggregate(e) for e in evaluations],
        "pairs": [compare_pair(base, other, bootstrap=bootstrap) for other in evaluations[1:]],
    }
