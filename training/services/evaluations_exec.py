"""The body of one model evaluation execution, once its lease is held (see ``evaluations_run``).

Per-problem rows are derived from the stored samples (never from in-memory counts), so a problem
finished by an earlier, killed attempt and one finished now are recorded the same way, and the
summary is computed from those rows at the end.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded

from curation.models.blobs import compress_text, decompress_text
from training.models_evaluation import (
    EvalStatus,
    ModelEvaluation,
    ModelEvaluationProblem,
    ModelEvaluationSample,
)
from training.services.evaluations import publish_progress
from training.services.evaluations_run import (
    PUBLISH_EVERY_S,
    EvalLease,
    EvaluationCancelled,
    EvaluationLeaseLost,
    SourceFactory,
    eval_settings,
    failure_reason,
    finish,
    select_problems,
)

log = logging.getLogger(__name__)


def _meta(row: dict[str, Any]) -> dict[str, Any]:
    from training.evaluate.problems import difficulty_bucket

    curation = (row.get("extra") or {}).get("curation") or {}
    return {
        "problem_id": int(curation["problem_id"]), "platform": str(row.get("platform") or ""),
        "external_id": str(row.get("external_id") or ""), "io_mode": str(row.get("io_mode") or "stdin"),
        "difficulty": difficulty_bucket(row), "contest_date": row.get("contest_date") or None,
    }


def stored_done(evaluation_id: int, key_of: dict[int, str]) -> dict[tuple[str, int], Any]:
    """The stored samples as the core's ``done`` mapping ``{(problem key, index): SampleResult}``."""
    from training.evaluate import SampleResult

    done: dict[tuple[str, int], Any] = {}
    rows = ModelEvaluationSample.objects.filter(evaluation_id=evaluation_id).values_list(
        "problem_id", "index", "completion_z", "verdict", "passed", "infra_error", "method", "elapsed_s"
    )
    for pid, index, blob, verdict, passed, infra, method, elapsed in rows.iterator():
        key = key_of.get(pid)
        if key is None:
            continue  # a problem the current selection no longer holds
        done[(key, index)] = SampleResult(
            index=index, completion=decompress_text(blob), verdict=verdict, passed=passed, infra_error=infra,
            method=method, elapsed_s=elapsed,
        )
    return done


def materialize_problem(
    evaluation: ModelEvaluation, meta: dict[str, Any], flagged: dict[str, Any]
) -> ModelEvaluationProblem | None:
    """(Re)compute one problem's result row from its stored samples; None when it has none yet.
    Infrastructure errors are counted apart and never as attempts."""
    from training.evaluate import pass_at_k

    samples = list(
        ModelEvaluationSample.objects.filter(evaluation=evaluation, problem_id=meta["problem_id"])
        .order_by("index").values_list("verdict", "passed", "infra_error")
    )
    if not samples:
        return None
    attempts = sum(1 for _, _, ie in samples if not ie)
    passed = sum(1 for _, ok, ie in samples if ok and not ie)
    key = f"{meta['platform']}:{meta['external_id']}"
    entry = flagged.get(key) or {}
    row, _ = ModelEvaluationProblem.objects.update_or_create(
        evaluation=evaluation, problem_id=meta["problem_id"],
        defaults={
            "key": key, "platform": meta["platform"], "external_id": meta["external_id"],
            "difficulty": meta["difficulty"], "contest_date": meta["contest_date"], "io_mode": meta["io_mode"],
            "attempts": attempts, "passed": passed, "infra_errors": len(samples) - attempts,
            "pass_at_1": pass_at_k(attempts, passed, 1) if attempts else None,
            "pass_at_k": pass_at_k(attempts, passed, evaluation.k) if attempts else None,
            "verdicts": [v for v, _, _ in samples], "contaminated": bool(entry),
            "overlap": entry.get("overlap") if entry else None,
        },
    )
    return row


def problem_results(rows: Iterable[ModelEvaluationProblem]) -> list[Any]:
    """Stored rows as the core's ``ProblemResult`` objects (what ``summarize`` reads)."""
    from training.evaluate import ProblemResult

    return [
        ProblemResult(
            id=r.key, platform=r.platform, external_id=r.external_id, io_mode=r.io_mode, difficulty=r.difficulty,
            contest_date=r.contest_date.isoformat() if r.contest_date else None, attempts=r.attempts,
            passed=r.passed, infra_errors=r.infra_errors, verdicts=list(r.verdicts),
            pass_at_1=r.pass_at_1, pass_at_k=r.pass_at_k,
        )
        for r in rows
    ]


def compute_summary(evaluation: ModelEvaluation) -> dict[str, Any]:
    """``summarize`` over the stored problem rows; with flagged (kept) contaminated problems also the
    summary of the clean ones under ``"clean"``."""
    from training.evaluate import summarize

    rows = list(ModelEvaluationProblem.objects.filter(evaluation=evaluation).order_by("id"))
    summary = dict(summarize(problem_results(rows), evaluation.k, seed=evaluation.seed))
    selection = evaluation.selection or {}
    # The contamination guard is part of every result, as the core's own summary states it.
    summary.update(after=selection.get("after"), excluded=selection.get("excluded") or {},
                   contaminated_evaluated=sum(1 for r in rows if r.contaminated))
    if any(r.contaminated for r in rows):
        clean = [r for r in rows if not r.contaminated]
        summary["clean"] = dict(summarize(problem_results(clean), evaluation.k, seed=evaluation.seed)) if clean else {}
    return summary


class _Recorder:
    """The core's ``on_sample`` / ``on_problem`` callbacks: store, count, publish, watch for a cancel."""

    def __init__(self, evaluation: ModelEvaluation, lease: EvalLease, metas: dict[str, dict[str, Any]],
                 flagged: dict[str, Any]) -> None:
        self.evaluation = evaluation
        self.lease = lease
        self.metas = metas
        self.flagged = flagged
        self._lock = threading.Lock()  # the core may call back from its judging threads
        self._published = 0.0

    def on_sample(self, key: str, result: Any) -> None:
        meta = self.metas[key]
        with self._lock:
            with self.lease.held() as evaluation:
                ModelEvaluationSample.objects.bulk_create(
                    [ModelEvaluationSample(
                        evaluation=evaluation, problem_id=meta["problem_id"], index=int(result.index),
                        completion_z=compress_text(result.completion or ""), verdict=str(result.verdict or "")[:8],
                        passed=bool(result.passed), infra_error=bool(result.infra_error),
                        method=str(result.method or "")[:64], elapsed_s=float(result.elapsed_s or 0.0),
                    )],
                    ignore_conflicts=True,  # (evaluation, problem, index) is unique: a repeat is a no-op
                )
                evaluation.samples_done = ModelEvaluationSample.objects.filter(evaluation=evaluation).count()
                evaluation.save(update_fields=["samples_done", "updated_at"])
                cancel = evaluation.cancel_requested
                if time.monotonic() - self._published >= PUBLISH_EVERY_S:
                    self._published = time.monotonic()
                    publish_progress(evaluation)
        if cancel:
            raise EvaluationCancelled(evaluation.reason or "cancel requested")

    def on_problem(self, result: Any) -> None:
        key = str(getattr(result, "id", ""))
        meta = self.metas.get(key)
        if meta is None:
            return
        with self._lock:
            with self.lease.held() as evaluation:
                materialize_problem(evaluation, meta, self.flagged)
                evaluation.problems_done = ModelEvaluationProblem.objects.filter(evaluation=evaluation).count()
                evaluation.save(update_fields=["problems_done", "updated_at"])
                self._published = time.monotonic()
                publish_progress(evaluation)


def execute(evaluation: ModelEvaluation, lease: EvalLease, source_factory: SourceFactory) -> str:
    """Run the job to a terminal status; returns it. Raises only :class:`EvaluationLeaseLost`."""
    from training.evaluate import evaluate

    source = None
    try:
        rows, selection, flagged = select_problems(evaluation)
        metas = {r["id"]: _meta(r) for r in rows}
        key_of = {m["problem_id"]: key for key, m in metas.items()}
        with lease.held() as locked:
            locked.selection = selection
            locked.contamination_report = flagged
            locked.problems_total = len(rows)
            locked.samples_total = len(rows) * locked.k
            locked.samples_done = ModelEvaluationSample.objects.filter(
                evaluation=locked, problem_id__in=list(key_of)
            ).count()
            locked.save(update_fields=["selection", "contamination_report", "problems_total", "samples_total",
                                       "samples_done", "updated_at"])
            publish_progress(locked)
        evaluation.selection = selection
        if not rows:
            return finish(lease, str(EvalStatus.FAILED), f"no problem left to evaluate: {selection}")
        done = stored_done(evaluation.pk, key_of)
        recorder = _Recorder(evaluation, lease, metas, flagged)
        if len(done) < len(rows) * evaluation.k:  # a fully stored job needs no model at all
            source = source_factory(evaluation)
            evaluate(rows, source, eval_settings(evaluation), done=done, on_sample=recorder.on_sample,
                     on_problem=recorder.on_problem)
        with lease.held() as locked:
            for meta in metas.values():
                materialize_problem(locked, meta, flagged)
        summary = compute_summary(evaluation)
        n = ModelEvaluationSample.objects.filter(evaluation=evaluation).count()
        reason = f"evaluated {len(rows)} problems, {n} samples (k={evaluation.k})"
        return finish(lease, str(EvalStatus.SUCCEEDED), reason, summary)
    except EvaluationLeaseLost:
        raise
    except EvaluationCancelled as exc:
        n = ModelEvaluationSample.objects.filter(evaluation=evaluation).count()
        return finish(lease, str(EvalStatus.CANCELLED), f"{exc}; stopped after {n} stored samples")
    except SoftTimeLimitExceeded as exc:
        return finish(lease, str(EvalStatus.FAILED), "the evaluation exceeded its time limit "
                      f"(MODEL_EVALUATION_TASK_TIME_LIMIT); stored samples are kept\n\n{failure_reason(exc)}")
    except Exception as exc:  # noqa: BLE001 - any failure ends the job as failed, with the reason
        log.exception("model evaluation %s failed", evaluation.pk)
        return finish(lease, str(EvalStatus.FAILED), failure_reason(exc))
    finally:
        close = getattr(source, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # noqa: BLE001 - cleanup must not mask the outcome
                log.exception("closing the model source of evaluation %s failed", evaluation.pk)
