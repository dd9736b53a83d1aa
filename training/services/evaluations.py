"""Model evaluation jobs: create (validate), start (enqueue), cancel (owner rule). The execution lives in
``training.services.evaluations_run``.

Status machine: ``queued -> running -> succeeded | failed | cancelled``; ``queued -> cancelled``. Every
job ends in a terminal status with a ``reason``. Local engines (transformers, vLLM) run on the ``gpu``
queue, endpoints on ``evaluate``. The API key of an endpoint is never stored: the worker reads
``OPENAI_API_KEY`` from its environment.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from training.models import Checkpoint, TrainingRun
from training.models_evaluation import (
    EVAL_TERMINAL_STATUSES,
    LOCAL_ENGINES,
    Contamination,
    EvalEngine,
    EvalStatus,
    ModelEvaluation,
)
from webapp import realtime
from webapp.jobs_feed import job_changed
from webapp.roles import CURATOR, TRAINER, can_manage

#: keys a problem filter may hold
FILTER_KEYS = frozenset({"platform", "difficulty", "io_mode", "limit"})
#: bounds of the sampling settings (a typo such as k=4000 is refused, not queued for days)
MAX_K = 256
MAX_TOKENS = 131_072


def publish_progress(evaluation: ModelEvaluation) -> None:
    """Publish the job's progress to its group once the current transaction commits."""
    realtime.publish_on_commit(
        realtime.model_evaluation_group(evaluation.pk), realtime.MODEL_EVALUATION_PROGRESS,
        evaluation.progress_event(),
    )
    job_changed(evaluation)  # the jobs view's log and live list


def _number(errors: dict[str, list[str]], field: str, value: Any, lo: float, hi: float, *, integer: bool) -> Any:
    try:
        number = int(value) if integer else float(value)
        if integer and isinstance(value, float) and not value.is_integer():
            raise ValueError
    except (TypeError, ValueError):
        errors[field] = [f"must be {'an integer' if integer else 'a number'}, got {value!r}"]
        return None
    if not lo <= number <= hi:
        errors[field] = [f"must be between {lo:g} and {hi:g}, got {number:g}"]
        return None
    return number


def _clean_filter(errors: dict[str, list[str]], raw: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not raw:
        return out
    if not isinstance(raw, Mapping):
        errors["problem_filter"] = ["must be an object"]
        return out
    unknown = sorted(set(raw) - FILTER_KEYS)
    if unknown:
        errors["problem_filter"] = [f"unknown keys {unknown}; allowed: {sorted(FILTER_KEYS)}"]
        return out
    for key in ("platform", "difficulty", "io_mode"):
        value = raw.get(key)
        if value not in (None, ""):
            out[key] = str(value)
    if out.get("io_mode") not in (None, "stdin", "call"):
        errors["problem_filter"] = ["io_mode must be stdin or call"]
    if out.get("difficulty") not in (None, "easy", "medium", "hard"):
        errors["problem_filter"] = ["difficulty must be easy, medium or hard"]
    if raw.get("limit") not in (None, ""):
        limit = _number(errors, "problem_filter", raw["limit"], 1, 1_000_000, integer=True)
        if limit is not None:
            out["limit"] = limit
    return out


def _clean_base_url(errors: dict[str, list[str]], engine: str, base_url: str) -> str:
    base_url = (base_url or "").strip()
    if engine != EvalEngine.OPENAI:
        if base_url:
            errors["base_url"] = ["only an openai (endpoint) evaluation takes a base URL"]
        return ""
    if not base_url:
        errors["base_url"] = ["an endpoint evaluation needs the endpoint's base URL, e.g. http://host:8000/v1"]
        return ""
    try:
        parts = urlsplit(base_url)
        host = parts.hostname
    except ValueError:  # e.g. an unclosed IPv6 bracket
        parts, host = urlsplit(""), None
    if len(base_url) > 1000:
        errors["base_url"] = [f"at most 1000 characters, got {len(base_url)}"]
    elif parts.scheme not in ("http", "https") or not host:
        errors["base_url"] = [f"must be an http(s) URL, got {base_url!r}"]
    elif parts.username or parts.password:
        # Credentials in the URL would be stored; the key belongs in the worker's environment.
        errors["base_url"] = ["must not carry credentials: set OPENAI_API_KEY in the worker's environment"]
    return base_url


@transaction.atomic
def model_evaluation_create(
    *,
    user: Any,
    engine: str,
    release_id: int | None,
    model: str = "",
    run_id: int | None = None,
    checkpoint_step: int | None = None,
    base_url: str = "",
    problem_filter: Mapping[str, Any] | None = None,
    k: Any = 4,
    temperature: Any = 0.6,
    top_p: Any = 0.95,
    max_tokens: Any = 4096,
    seed: Any = 0,
    cutoff_date: dt.date | None = None,
    exclude_before_cutoff: bool = True,
    contamination: str = "off",
    contamination_release_id: int | None = None,
    name: str = "",
) -> ModelEvaluation:
    """Validate and create a queued evaluation (not started: see :func:`model_evaluation_start`).

    The model is one of: a training run's checkpoint (``run_id`` + ``checkpoint_step``, local engines
    only; the checkpoint's directory becomes ``model``), a local path or Hugging Face id (``model``), or
    an endpoint's served model name (``engine="openai"`` with ``base_url``). Raises ``ValidationError``
    whose ``message_dict`` names every bad field.
    """
    from curation.models import DatasetRelease

    errors: dict[str, list[str]] = {}
    if engine not in EvalEngine.values:
        errors["engine"] = [f"must be one of {EvalEngine.values}, got {engine!r}"]
    model = (model or "").strip()
    run = None
    if run_id is not None:
        run = TrainingRun.objects.filter(pk=run_id).first()
        if run is None:
            errors["run_id"] = [f"training run {run_id} does not exist"]
        elif engine not in LOCAL_ENGINES:
            errors["engine"] = ["a run's checkpoint is evaluated with a local engine (transformers or vllm)"]
        elif checkpoint_step is None:
            errors["checkpoint_step"] = ["choose one of the run's checkpoints"]
        else:
            ckpt = Checkpoint.objects.filter(run=run, step=checkpoint_step).first()
            if ckpt is None:
                steps = list(Checkpoint.objects.filter(run=run).values_list("step", flat=True))
                errors["checkpoint_step"] = [f"run {run_id} has no checkpoint at step {checkpoint_step} (has {steps})"]
            else:
                model = str(Path(ckpt.path) / "model")  # training.checkpoint: weights + tokenizer live in model/
    elif checkpoint_step is not None:
        errors["run_id"] = ["a checkpoint step needs its run"]
    if len(model) > 1000:
        errors["model"] = [f"at most 1000 characters, got {len(model)}"]
    if not model and "run_id" not in errors and "checkpoint_step" not in errors:
        errors["model"] = ["give a local path, a Hugging Face id, the endpoint's model name, or a run's checkpoint"]
    base_url = _clean_base_url(errors, engine, base_url)
    release = DatasetRelease.objects.filter(pk=release_id).first() if release_id is not None else None
    if release is None:
        errors["release_id"] = ["choose a dataset release" if release_id is None else f"release {release_id} does not exist"]
    cleaned_filter = _clean_filter(errors, problem_filter)
    k = _number(errors, "k", k, 1, MAX_K, integer=True)
    temperature = _number(errors, "temperature", temperature, 0.01, 4.0, integer=False)
    top_p = _number(errors, "top_p", top_p, 1e-6, 1.0, integer=False)
    max_tokens = _number(errors, "max_tokens", max_tokens, 1, MAX_TOKENS, integer=True)
    seed = _number(errors, "seed", seed, -(2**31), 2**31 - 1, integer=True)
    if contamination not in Contamination.values:
        errors["contamination"] = [f"must be one of {Contamination.values}, got {contamination!r}"]
    contamination_release = None
    if contamination_release_id is not None:
        contamination_release = DatasetRelease.objects.filter(pk=contamination_release_id).first()
        if contamination_release is None:
            errors["contamination_release_id"] = [f"release {contamination_release_id} does not exist"]
    elif contamination in (Contamination.FLAG, Contamination.EXCLUDE):
        errors["contamination_release_id"] = ["choose the training release to check for 13-gram overlap"]
    if exclude_before_cutoff and cutoff_date is None and contamination == Contamination.OFF:
        exclude_before_cutoff = False  # nothing to exclude by: state it plainly on the job
    if errors:
        raise ValidationError(errors)
    return ModelEvaluation.objects.create(
        name=(name or "").strip()[:200], engine=engine, model=model, run=run,
        checkpoint_step=checkpoint_step if run is not None else None, base_url=base_url, release=release,
        problem_filter=cleaned_filter, k=k, temperature=temperature, top_p=top_p, max_tokens=max_tokens,
        seed=seed, cutoff_date=cutoff_date, exclude_before_cutoff=exclude_before_cutoff,
        contamination=contamination, contamination_release=contamination_release,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        queue="gpu" if engine in LOCAL_ENGINES else "evaluate", reason="queued",
    )


@transaction.atomic
def model_evaluation_start(*, evaluation_id: int) -> ModelEvaluation:
    """Enqueue the job once this transaction commits: ``gpu`` for local models, ``evaluate`` for endpoints."""
    from training.tasks_evaluation import run_model_evaluation

    evaluation = ModelEvaluation.objects.select_for_update().get(pk=evaluation_id)
    if evaluation.status != EvalStatus.QUEUED:
        raise ValidationError({"status": [f"only a queued evaluation starts; #{evaluation_id} is {evaluation.status}"]})
    task_id = str(uuid.uuid4())
    queue = "gpu" if evaluation.is_local else "evaluate"
    evaluation.celery_task_id = task_id
    evaluation.queue = queue
    evaluation.reason = f"queued on {queue}"
    evaluation.save(update_fields=["celery_task_id", "queue", "reason", "updated_at"])
    transaction.on_commit(
        lambda: run_model_evaluation.apply_async(args=[evaluation_id], task_id=task_id, queue=queue)
    )
    publish_progress(evaluation)
    return evaluation


def model_evaluation_can_cancel(*, evaluation: ModelEvaluation, user: Any) -> bool:
    """The owner rule (``webapp.roles.can_manage``): only the job's creator, while still holding a role
    that creates evaluations (trainer, or curator for endpoint evaluations), or an admin cancels it."""
    roles = (TRAINER,) if evaluation.is_local else (TRAINER, CURATOR)
    return can_manage(user, evaluation.created_by_id, roles=roles)


@transaction.atomic
def model_evaluation_cancel(*, evaluation_id: int, user: Any) -> ModelEvaluation:
    """Ask a job to stop: a queued one is cancelled at once, a running one once the sample being stored
    next has been stored (at the latest after the batch in flight; what it judged stays stored). A finished job is left as it is. Raises ``PermissionDenied`` for
    anyone but the creator or an admin."""
    evaluation = ModelEvaluation.objects.select_for_update().get(pk=evaluation_id)
    if not model_evaluation_can_cancel(evaluation=evaluation, user=user):
        raise PermissionDenied("only the evaluation's creator or an admin may cancel it")
    if evaluation.status in EVAL_TERMINAL_STATUSES:
        return evaluation
    who = getattr(user, "username", "") or "a user"
    evaluation.cancel_requested = True
    evaluation.reason = f"cancel requested by {who}"
    fields = ["cancel_requested", "reason", "updated_at"]
    if evaluation.status == EvalStatus.QUEUED:
        evaluation.status = EvalStatus.CANCELLED
        evaluation.reason = f"cancelled by {who} before it started"
        evaluation.finished_at = timezone.now()
        fields += ["status", "finished_at"]
    evaluation.save(update_fields=fields)
    publish_progress(evaluation)
    return evaluation


def model_evaluation_fail(*, evaluation_id: int, reason: str) -> ModelEvaluation | None:
    """Mark a job that is not finished ``failed`` with ``reason`` (the task's last resort)."""
    with transaction.atomic():
        evaluation = ModelEvaluation.objects.select_for_update().filter(pk=evaluation_id).first()
        if evaluation is None or evaluation.status in EVAL_TERMINAL_STATUSES:
            return evaluation
        evaluation.status = EvalStatus.FAILED
        evaluation.reason = reason[-20_000:]
        evaluation.finished_at = timezone.now()
        evaluation.lease_owner = ""
        evaluation.save(update_fields=["status", "reason", "finished_at", "lease_owner", "updated_at"])
        publish_progress(evaluation)
        return evaluation
