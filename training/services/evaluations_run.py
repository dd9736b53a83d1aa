"""Executing a model evaluation (the body of ``training.tasks_evaluation.run_model_evaluation``).

One delivery: take the job's lease, choose the problems (release -> problem filter -> training cut-off
-> 13-gram contamination check), pass every stored sample to the core as ``done`` and let
``training.evaluate.evaluate`` generate and judge only the missing ``(problem, index)`` pairs; each new
sample is stored as it is judged (``on_sample``), each finished problem as its result row
(``on_problem``). At the end the summary (pass@1, pass@k with bootstrap intervals, breakdowns) is
computed from the stored problem rows. Whatever happens the job ends ``succeeded``, ``failed`` (with the
traceback) or ``cancelled``, with a reason; a worker killed mid-job leaves it ``running`` and the
redelivered task resumes it once the dead owner's heartbeat is older than
``settings.MODEL_EVALUATION_LEASE_TIMEOUT_S``: no sample is generated twice, none is stored twice. After
``MODEL_EVALUATION_MAX_ATTEMPTS`` deliveries that all died, the next one fails the job with the reason.

Problems without a contest date are excluded when the cut-off filter is on: nothing proves they are newer
than the model's training data.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from training.models_evaluation import (
    EVAL_TERMINAL_STATUSES,
    Contamination,
    EvalStatus,
    ModelEvaluation,
    ModelEvaluationProblem,
    ModelEvaluationSample,
)
from training.services.evaluations import publish_progress

log = logging.getLogger(__name__)

#: at most one progress event per this many seconds while samples stream in (plus one per problem)
PUBLISH_EVERY_S = 0.5

SourceFactory = Callable[[ModelEvaluation], Any]


class EvaluationCancelled(Exception):
    """Raised from the core's callbacks once a cancel was requested: the job stops after this sample."""


class EvaluationLeaseLost(Exception):
    """Another worker took the job over (this one was presumed dead): stop without writing more."""


def lease_timeout_s() -> float:
    return float(getattr(settings, "MODEL_EVALUATION_LEASE_TIMEOUT_S", 120))


def max_attempts() -> int:
    """Deliveries a job gets before one whose workers keep dying fails (``MODEL_EVALUATION_MAX_ATTEMPTS``)."""
    return int(getattr(settings, "MODEL_EVALUATION_MAX_ATTEMPTS", 5))


def problem_key(row: dict[str, Any]) -> str:
    """The id the core and the JSONL export use for an export row: ``platform:external_id``."""
    return f"{row.get('platform', '')}:{row.get('external_id', '')}"


def _bucket(row: dict[str, Any]) -> str:
    return str(((row.get("extra") or {}).get("curation") or {}).get("difficulty") or "")


def select_problems(evaluation: ModelEvaluation) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """``(rows to evaluate, selection counts, contamination report of flagged problems)``.

    Order: the release's rows in item order, narrowed by the problem filter (platform, difficulty
    bucket, io mode, then the first ``limit``); then the core's guard (``training.evaluate.select_problems``):
    the cut-off keeps contest dates strictly after it, and the 13-gram check against the chosen training
    release flags overlapping problems (``flag`` keeps them, ``exclude`` drops them). Every row gets
    ``id`` = ``platform:external_id``.
    """
    from curation.export import iter_export_dicts
    from training.evaluate import contamination_report
    from training.evaluate import select_problems as guard

    spec = evaluation.problem_filter or {}
    rows: list[dict[str, Any]] = []
    release_size = 0
    for row in iter_export_dicts(evaluation.release):
        release_size += 1
        if spec.get("platform") and row.get("platform") != spec["platform"]:
            continue
        if spec.get("difficulty") and _bucket(row) != spec["difficulty"]:
            continue
        if spec.get("io_mode") and row.get("io_mode") != spec["io_mode"]:
            continue
        if spec.get("limit") and len(rows) >= int(spec["limit"]):
            continue
        row["id"] = problem_key(row)
        rows.append(row)
    selection: dict[str, Any] = {"release": release_size, "after_filter": len(rows)}
    after = evaluation.cutoff_date if evaluation.exclude_before_cutoff else None
    kept, excluded, _ = guard(rows, after=after)
    # The n-gram check runs on what the cut-off kept: a problem left out as too old is not reported.
    flagged: dict[str, Any] = {}
    exclude = evaluation.contamination == Contamination.EXCLUDE
    if evaluation.contamination != Contamination.OFF and evaluation.contamination_release_id is not None:
        train_rows = list(iter_export_dicts(evaluation.contamination_release))
        for key, entry in contamination_report(kept, train_rows, n=13).items():
            flagged[key] = {"overlap": float(entry["overlap"]), "shared": int(entry.get("shared", 0)),
                            "matched_train_ids": list(entry["matched_train_ids"])[:20], "excluded": exclude}
        if exclude:
            kept = [r for r in kept if str(r["id"]) not in flagged]
            excluded["contaminated"] = len(flagged)
    selection.update(excluded=dict(excluded), flagged=len(flagged), evaluated=len(kept),
                     after=after.isoformat() if after else None)
    return [dict(r) for r in kept], selection, flagged


def eval_settings(evaluation: ModelEvaluation) -> Any:
    """The core's ``EvalSettings`` of the job (the cut-off is applied here, so ``after`` stays None)."""
    from training.evaluate import EvalSettings

    return EvalSettings(
        k=evaluation.k, temperature=evaluation.temperature, top_p=evaluation.top_p,
        max_tokens=evaluation.max_tokens, seed=evaluation.seed,
    )


def default_source(evaluation: ModelEvaluation) -> Any:
    """The core's model source; an endpoint's key comes from the worker's ``OPENAI_API_KEY``."""
    from training.evaluate import make_source

    kw: dict[str, Any] = {}
    if evaluation.is_local and evaluation.run_id is not None:
        # A run's checkpoint is evaluated on the prompts it was trained with (chat template, system prompt).
        from training.config import ConfigError, config_from_dict

        try:
            kw["prompt"] = config_from_dict(dict(evaluation.run.config)).prompt  # type: ignore[union-attr]
        except (ConfigError, TypeError, ValueError):
            log.warning("model evaluation %s: run %s has an unreadable config; default prompts", evaluation.pk,
                        evaluation.run_id)
    api_key = (os.environ.get("OPENAI_API_KEY") or getattr(settings, "OPENAI_API_KEY", "")) or None
    return make_source(
        evaluation.engine, evaluation.model, base_url=evaluation.base_url or None,
        api_key=api_key if evaluation.engine == "openai" else None, **kw,
    )


# --- the lease ---------------------------------------------------------------------------------------


@dataclass
class EvalLease:
    """This execution's hold on one job: ``lease_owner`` names it while ``heartbeat_at`` is fresh."""

    evaluation_id: int
    owner: str

    @contextmanager
    def held(self) -> Iterator[ModelEvaluation]:
        """A transaction in which this owner provably holds the job: the row is locked first (a takeover
        locks it too), the owner checked, the heartbeat refreshed; raises :class:`EvaluationLeaseLost`."""
        with transaction.atomic():
            evaluation = ModelEvaluation.objects.select_for_update().get(pk=self.evaluation_id)
            if evaluation.lease_owner != self.owner:
                raise EvaluationLeaseLost(
                    f"evaluation {self.evaluation_id}: {evaluation.lease_owner or 'nobody'} holds it, not {self.owner}"
                )
            evaluation.heartbeat_at = timezone.now()
            ModelEvaluation.objects.filter(pk=self.evaluation_id).update(heartbeat_at=evaluation.heartbeat_at)
            yield evaluation


class _Heartbeat:
    """Beats the lease every third of its timeout from a daemon thread, so long generations (nothing
    stored for minutes) do not look like a dead worker."""

    def __init__(self, lease: EvalLease) -> None:
        self.lease = lease
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"modeleval-{lease.evaluation_id}-hb", daemon=True)

    def start(self) -> _Heartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._halt.set()
        if self._thread.is_alive():
            self._thread.join(10.0)

    def _loop(self) -> None:
        try:
            while not self._halt.wait(max(0.05, lease_timeout_s() / 3)):
                try:
                    ModelEvaluation.objects.filter(
                        pk=self.lease.evaluation_id, lease_owner=self.lease.owner
                    ).update(heartbeat_at=timezone.now())
                except Exception:  # noqa: BLE001 - a database hiccup must not end the heartbeat
                    log.exception("model evaluation %s: heartbeat failed", self.lease.evaluation_id)
        finally:
            connection.close()  # this thread's own connection


@dataclass(frozen=True)
class EvalAttempt:
    """What one delivery did: the job's status afterwards; ``lease_wait_s`` is set when a live worker
    holds the job (seconds until its lease could lapse: the task re-checks then)."""

    status: str
    executed: bool = False
    lease_wait_s: float | None = None


def _begin(evaluation_id: int, owner: str) -> tuple[ModelEvaluation | None, float | None]:
    with transaction.atomic():
        evaluation = ModelEvaluation.objects.select_for_update().get(pk=evaluation_id)
        if evaluation.status in EVAL_TERMINAL_STATUSES:
            return None, None
        now = timezone.now()
        if evaluation.status == EvalStatus.RUNNING and evaluation.lease_owner and evaluation.heartbeat_at:
            remaining = lease_timeout_s() - (now - evaluation.heartbeat_at).total_seconds()
            if remaining > 0:
                return None, min(remaining, lease_timeout_s())
        if evaluation.cancel_requested:
            evaluation.status = EvalStatus.CANCELLED
            evaluation.reason = f"{evaluation.reason or 'cancel requested'}; cancelled before it started"
            evaluation.finished_at = now
            evaluation.save(update_fields=["status", "reason", "finished_at", "updated_at"])
            publish_progress(evaluation)
            return None, None
        if evaluation.attempts >= max_attempts():
            # every earlier delivery died without finishing (OOM, a kill): stop redelivering forever
            stored = ModelEvaluationSample.objects.filter(evaluation=evaluation).count()
            evaluation.status = EvalStatus.FAILED
            evaluation.reason = (f"its workers died {evaluation.attempts} times before finishing "
                                 f"(MODEL_EVALUATION_MAX_ATTEMPTS); the {stored} samples they stored are kept")
            evaluation.finished_at = now
            evaluation.save(update_fields=["status", "reason", "finished_at", "updated_at"])
            publish_progress(evaluation)
            return None, None
        resumed = evaluation.status == EvalStatus.RUNNING
        evaluation.status = EvalStatus.RUNNING
        evaluation.node = socket.gethostname()
        evaluation.lease_owner = owner
        evaluation.heartbeat_at = now
        evaluation.attempts += 1
        evaluation.started_at = evaluation.started_at or now
        evaluation.reason = (
            f"resumed on {evaluation.node} (attempt {evaluation.attempts}) after its worker stopped"
            if resumed else f"running on {evaluation.node}"
        )
        evaluation.save(update_fields=["status", "node", "lease_owner", "heartbeat_at", "attempts", "started_at",
                                       "reason", "updated_at"])
        publish_progress(evaluation)
        return evaluation, None


def model_evaluation_attempt(*, evaluation_id: int, source_factory: SourceFactory | None = None) -> EvalAttempt:
    """One delivery of the task: take the lease and run the job to a terminal status in this process.

    ``source_factory(evaluation)`` builds the core's model source (default: ``make_source`` from the
    job's engine, model and base URL; tests pass fakes). A job a live worker holds is left alone
    (``lease_wait_s`` set); a finished one is not touched.
    """
    from training.services.evaluations_exec import execute

    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
    evaluation, wait = _begin(evaluation_id, owner)
    if evaluation is None:
        status = ModelEvaluation.objects.values_list("status", flat=True).get(pk=evaluation_id)
        return EvalAttempt(status=status, lease_wait_s=wait)
    lease = EvalLease(evaluation_id=evaluation_id, owner=owner)
    heartbeat = _Heartbeat(lease).start()
    try:
        status = execute(evaluation, lease, source_factory or default_source)
    except EvaluationLeaseLost as exc:
        log.warning("model evaluation %s: %s; this execution stops", evaluation_id, exc)
        status = ModelEvaluation.objects.values_list("status", flat=True).get(pk=evaluation_id)
    finally:
        heartbeat.stop()
    return EvalAttempt(status=status, executed=True)


def finish(lease: EvalLease, status: str, reason: str, summary: dict[str, Any] | None = None) -> str:
    """Record the terminal status (raises :class:`EvaluationLeaseLost` if another worker took over)."""
    with lease.held() as evaluation:
        evaluation.status = status
        evaluation.reason = reason[-20_000:]
        evaluation.finished_at = timezone.now()
        evaluation.problems_done = ModelEvaluationProblem.objects.filter(evaluation=evaluation).count()
        evaluation.samples_done = ModelEvaluationSample.objects.filter(evaluation=evaluation).count()
        fields = ["status", "reason", "finished_at", "problems_done", "samples_done", "updated_at"]
        if summary is not None:
            evaluation.summary = summary
            fields.append("summary")
        evaluation.save(update_fields=fields)
        publish_progress(evaluation)
        return evaluation.status


def failure_reason(exc: BaseException) -> str:
    """The reason a failed job shows: the exception in one line, then the traceback."""
    return f"{type(exc).__name__}: {exc}\n\n" + "".join(traceback.format_exception(exc))

