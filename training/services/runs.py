"""Run lifecycle: create (validate + resolve the config), start (enqueue on ``gpu``), cancel, and the
files a run's execution reads (the exported releases) and writes (checkpoint rows).

Status machine: ``queued -> running -> succeeded | failed | cancelled``; ``queued -> cancelled``.
The execution itself (the Celery task's body under the run lease) is ``training.services.run_execution``.
"""
from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from training.config import ConfigError, GRPOConfig, config_from_dict
from training.insights import check_config
from training.models import TERMINAL_STATUSES, Checkpoint, RunStatus, TrainingRun
from webapp import realtime
from webapp.jobs_feed import job_changed
from webapp.roles import TRAINER, can_manage

log = logging.getLogger(__name__)

#: the file a release is exported to inside the run's output directory
DATASET_FILE = "dataset.jsonl"
#: the file the held-out release (``TrainingRun.heldout_release``) is exported to, read as ``eval.release``
HELDOUT_FILE = "heldout.jsonl"


def run_output_dir(run_id: int) -> Path:
    """Where a run's checkpoints and logs live: ``settings.RUNS_DIR/run-<id>``."""
    return Path(settings.RUNS_DIR) / f"run-{int(run_id)}"


def config_validate(config_dict: Mapping[str, Any]) -> tuple[GRPOConfig, list[dict[str, Any]]]:
    """Build the core config and its insight warnings; raises ``ValidationError`` on an invalid config."""
    try:
        config = config_from_dict(dict(config_dict))
    except (ConfigError, TypeError, ValueError) as exc:
        raise ValidationError({"config": [str(exc)]}) from exc
    warnings = [
        {"field": w.field, "message": w.message, "insight_ids": list(w.insight_ids), "severity": w.severity}
        for w in check_config(config)
    ]
    return config, warnings


def _publish_status(run: TrainingRun, message: str = "") -> None:
    realtime.publish_on_commit(
        realtime.run_group(run.pk),
        realtime.RUN_STATUS,
        {"run_id": run.pk, "status": run.status, "message": message or run.error,
         "cancel_requested": run.cancel_requested},
    )
    job_changed(run, note=message)  # the jobs view's log and live list


@transaction.atomic
def run_create(
    *, name: str, config_dict: Mapping[str, Any], release_id: int | None = None, user: Any = None,
    heldout_release_id: int | None = None,
) -> TrainingRun:
    """Create a queued run with its fully resolved config (not started: see :func:`run_start`).

    The run's ``output_dir`` is ``RUNS_DIR/run-<id>`` whatever the submitted config says (runs never
    share a directory), and with a release the config's ``dataset.release`` points at the file the
    release is exported to when the run starts. Without a release the config must name a dataset file.
    With a held-out release (never the training release) ``eval.release`` points at the file it is
    exported to when the run starts, so the trainer logs ``eval/pass@1`` and ``eval/pass@k``.
    Raises ``ValidationError`` (``{"config": [...]}``, ``{"release_id": [...]}``,
    ``{"heldout_release_id": [...]}``, ``{"name": [...]}``).
    """
    from curation.models import DatasetRelease

    name = name.strip()
    if not name:
        raise ValidationError({"name": ["give the run a name"]})
    release = None
    if release_id is not None:
        release = DatasetRelease.objects.filter(pk=release_id).first()
        if release is None:
            raise ValidationError({"release_id": [f"dataset release {release_id} does not exist"]})
    heldout = None
    if heldout_release_id is not None:
        heldout = DatasetRelease.objects.filter(pk=heldout_release_id).first()
        if heldout is None:
            raise ValidationError({"heldout_release_id": [f"dataset release {heldout_release_id} does not exist"]})
        if release is not None and heldout.pk == release.pk:
            raise ValidationError({"heldout_release_id": ["the held-out release must not be the training release"]})
    config, _ = config_validate(config_dict)
    if release is None and not config.dataset.release.strip():
        raise ValidationError({"config": ["choose a dataset release, or set dataset.release to a JSONL file"]})
    run = TrainingRun.objects.create(
        name=name, config={}, release=release, heldout_release=heldout,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    out = run_output_dir(run.pk)
    changes: dict[str, Any] = {"output_dir": str(out)}
    if release is not None:
        changes["dataset.release"] = str(out / DATASET_FILE)
    if heldout is not None:
        changes["eval.release"] = str(out / HELDOUT_FILE)
    config = config.replace(**changes)
    _, warnings = config_validate(config.to_dict())
    run.config = config.to_dict()
    run.warnings = warnings
    run.output_dir = str(out)
    run.save(update_fields=["config", "warnings", "output_dir"])
    return run


@transaction.atomic
def run_start(*, run_id: int) -> TrainingRun:
    """Enqueue ``training.tasks.train_run`` on the ``gpu`` queue once this transaction commits.

    Only a queued run starts; the Celery task id is stored before the task can begin.
    """
    from training.tasks import train_run

    run = TrainingRun.objects.select_for_update().get(pk=run_id)
    if run.status != RunStatus.QUEUED:
        raise ValidationError({"status": [f"only a queued run can start; run {run_id} is {run.status}"]})
    task_id = str(uuid.uuid4())
    run.celery_task_id = task_id
    run.save(update_fields=["celery_task_id", "updated_at"])
    transaction.on_commit(lambda: train_run.apply_async(args=[run_id], task_id=task_id, queue="gpu"))
    _publish_status(run, "queued")
    return run


@transaction.atomic
def run_cancel(*, run_id: int, user: Any = None) -> TrainingRun:
    """Ask a run to stop. A queued run is cancelled at once; a running one stops after its current step
    (the trainer checkpoints it) and ends ``cancelled``. Cancelling a finished run changes nothing.
    ``user`` (the person asking) must be the run's creator holding the trainer role, or an admin
    (:func:`webapp.roles.can_manage`; else ``PermissionDenied``); ``None`` is the system itself."""
    run = TrainingRun.objects.select_for_update().get(pk=run_id)
    if user is not None and not can_manage(user, run.created_by_id, roles=(TRAINER,)):
        raise PermissionDenied("only the run's creator or an admin may cancel it")
    if run.status in TERMINAL_STATUSES:
        return run
    run.cancel_requested = True
    fields = ["cancel_requested", "updated_at"]
    if run.status == RunStatus.QUEUED:
        run.status = RunStatus.CANCELLED
        run.finished_at = timezone.now()
        fields += ["status", "finished_at"]
    run.save(update_fields=fields)
    _publish_status(run, "cancel requested" if run.status == RunStatus.RUNNING else "cancelled")
    return run


def checkpoints_sync(*, run_id: int, output_dir: str | Path) -> list[int]:
    """Mirror the complete checkpoint directories on disk as ``Checkpoint`` rows (pruned ones vanish).

    Returns the steps present. Reads the directory layout of ``training.checkpoint``.
    """
    from training.checkpoint import MARKER, PREFIX  # imported here: it loads torch, web processes need not
    root = Path(output_dir) / "checkpoints"
    found: dict[int, str] = {}
    if root.is_dir():
        for p in root.glob(f"{PREFIX}*"):
            if p.is_dir() and p.name[len(PREFIX):].isdigit() and (p / MARKER).is_file():
                found[_checkpoint_step(p)] = str(p)
    with transaction.atomic():
        Checkpoint.objects.filter(run_id=run_id).exclude(step__in=list(found)).delete()
        known = set(Checkpoint.objects.filter(run_id=run_id).values_list("step", flat=True))
        Checkpoint.objects.bulk_create(
            [Checkpoint(run_id=run_id, step=s, path=path) for s, path in sorted(found.items()) if s not in known]
        )
    return sorted(found)


def _checkpoint_step(path: Path) -> int:
    from training.checkpoint import PREFIX

    suffix = path.name[len(PREFIX):]
    return int(suffix) if suffix.isdigit() else 0


def _export_release(release: Any, path: Path) -> None:
    """Write a dataset release as the JSONL file the core reads (``curation.export`` rows), atomically:
    a reader never sees half a file."""
    from curation.export import iter_jsonl

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as fh:
        for piece in iter_jsonl(release):
            fh.write(piece)
    tmp.replace(path)


# --- execution -------------------------------------------------------------------------------------
