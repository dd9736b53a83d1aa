"""Uploaded imports: the request stores the file and enqueues; the worker unpacks, detects and imports.

The form page and ``POST /api/imports/`` both call ``import_batch_create``, which only streams the
upload to disk (refusing one larger than ``IMPORT_MAX_UPLOAD_MB``) and creates a pending batch: no
archive is opened and no format is sniffed inside the web server. The Celery task
``curation.tasks.import_file`` calls ``import_batch_run``, which claims the batch, unpacks a .zip and
detects an ``auto`` format within the import's ``ReadLimits`` (``import_read_limits``), imports, runs
the normalize and constraints stages when asked, and deletes the uploaded files once the batch has
ended, succeeded or failed. A failed upload is finished by uploading the complete file again.
"""

from __future__ import annotations

import logging
import shutil
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from curation.importers import FORMATS, detect_format
from curation.importers.limits import MIB, LimitExceeded, limits_applied
from curation.models import ImportBatch, ImportStatus, Problem
from curation.services.archives import ArchiveError, unpack_zip
from curation.services.checks import problems_check_constraints
from curation.services.imports import (
    DEFAULT_BATCH_SIZE,
    import_batch_finish,
    import_read_limits,
    problem_import,
)
from curation.services.normalization import problems_normalize

log = logging.getLogger(__name__)

AUTO = "auto"
_ZIP_MAGIC = b"PK\x03\x04"


class UploadError(ValueError):
    """The upload cannot be accepted (unknown format, too large ...); the message says why."""


def upload_dir() -> Path:
    return Path(settings.MEDIA_ROOT) / "imports"


def import_batch_create(
    *, uploaded_file: UploadedFile, format: str = AUTO, user: Any = None, run_pipeline: bool = True  # noqa: A002
) -> ImportBatch:
    """Save ``uploaded_file`` (a data file, or a .zip of ICPC packages / of one data file), create a
    pending ``ImportBatch`` and enqueue ``curation.tasks.import_file`` after commit. ``format`` may be
    ``"auto"`` (detected by the worker). Raises ``UploadError`` with a reason for the user: an unknown
    format, or a file over ``IMPORT_MAX_UPLOAD_MB`` (nothing is kept then)."""
    if format != AUTO and format not in FORMATS:
        raise UploadError(f"unknown format {format!r}; choose one of {', '.join(sorted(FORMATS))}")
    name = PurePosixPath(uploaded_file.name or "upload").name or "upload"
    limit = int(settings.IMPORT_MAX_UPLOAD_MB) * MIB
    if (uploaded_file.size or 0) > limit:
        raise UploadError(_too_large(name, int(uploaded_file.size or 0), limit))
    folder = upload_dir() / uuid.uuid4().hex
    folder.mkdir(parents=True)
    target = folder / name
    written = 0
    with open(target, "wb") as fh:
        for part in uploaded_file.chunks():
            written += len(part)
            if written > limit:  # a size the upload handler did not know: stop copying at once
                fh.close()
                shutil.rmtree(folder, ignore_errors=True)
                raise UploadError(_too_large(name, written, limit))
            fh.write(part)
    batch = ImportBatch.objects.create(
        format=format, filename=name, path=str(target), user=user if getattr(user, "is_authenticated", False) else None,
        run_pipeline=run_pipeline,
    )
    from curation.tasks import import_file  # the task module imports services; import late

    transaction.on_commit(lambda: import_file.delay(batch.pk))
    return batch


def import_batch_resume(*, batch_id: int) -> ImportBatch:
    """Run a ``failed`` batch again on its file (the ``resume`` action): the batch goes back to
    ``pending`` and is enqueued after commit. Importing is idempotent by content hash, so rows
    committed before the failure come back ``unchanged`` and the rest are imported. Raises
    ``UploadError`` saying why when the batch did not fail or its file is gone (an upload is deleted
    when its batch ends: upload the complete file again instead)."""
    with transaction.atomic():
        batch = ImportBatch.objects.select_for_update().get(pk=batch_id)
        if batch.status != ImportStatus.FAILED:
            raise UploadError(f"import #{batch.pk} is {batch.status}; only a failed import can be resumed")
        path = Path(batch.path)
        if _is_upload(path) or not path.exists():
            raise UploadError(f"the file of import #{batch.pk} is gone (uploads are deleted when their batch "
                              "ends); upload the complete file again: committed rows come back unchanged")
        batch.status, batch.finished_at = ImportStatus.PENDING, None
        batch.message = f"resumed after: {batch.message}"[:10_000]  # replaced once a worker runs it
        batch.save(update_fields=["status", "finished_at", "message"])
        from curation.tasks import import_file  # the task module imports services; import late

        transaction.on_commit(lambda: import_file.delay(batch.pk))
    return batch


def _too_large(name: str, size: int, limit: int) -> str:
    return (f"{name} is larger than the upload limit of {limit // MIB:,} MB ({size / MIB:,.1f} MB or more); "
            "import it with `manage.py import_problems` or raise IMPORT_MAX_UPLOAD_MB")


@dataclass(frozen=True)
class RunOutcome:
    """What ``import_batch_run`` did: ``batch`` as it is now; ``busy_s`` is set when a live worker owns
    the batch (the caller may look again after that many seconds)."""

    batch: ImportBatch
    busy_s: float | None = None


def _lease_s() -> float:
    return float(settings.IMPORT_LEASE_TIMEOUT_S)


def _claim(batch_id: int) -> bool:
    """Atomically take a pending batch, or a running one whose worker went silent (no heartbeat for
    ``IMPORT_LEASE_TIMEOUT_S``: it was killed). Re-running it is safe: rows committed before the
    crash come back ``unchanged``."""
    now = timezone.now()
    stale = now - timedelta(seconds=_lease_s())
    silent = Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, started_at__lt=stale)
    claimable = Q(status=ImportStatus.PENDING) | (Q(status=ImportStatus.RUNNING) & silent)
    return ImportBatch.objects.filter(claimable, pk=batch_id).update(
        status=ImportStatus.RUNNING, started_at=now, heartbeat_at=now
    ) == 1


def import_batch_run(*, batch_id: int) -> RunOutcome:
    """Run a pending batch to a terminal state: unpack, detect, import, then (if ``run_pipeline``)
    normalize and check the constraints of the problems it created or changed. A batch another live
    worker runs is left alone (``busy_s``); a finished one is returned as it is."""
    if not _claim(batch_id):
        batch = ImportBatch.objects.get(pk=batch_id)
        return RunOutcome(batch, busy_s=_lease_s() if batch.status == ImportStatus.RUNNING else None)
    batch = ImportBatch.objects.get(pk=batch_id)
    try:
        with limits_applied(import_read_limits()):
            batch = _run(batch)
    except Exception as exc:  # noqa: BLE001 - whatever happens, the batch ends with the reason
        log.exception("import #%s failed", batch_id)
        batch = import_batch_finish(batch=batch, status=ImportStatus.FAILED, message=f"{type(exc).__name__}: {exc}")
    finally:
        _delete_upload(batch)
    return RunOutcome(batch)


def _run(batch: ImportBatch) -> ImportBatch:
    path = Path(batch.path)
    try:
        if _is_upload(path) and path.is_file() and _is_zip(path):
            path = unpack_zip(path, path.parent / "unpacked", import_read_limits())
        fmt = batch.format
        if fmt == AUTO:
            detected = detect_format(path)
            if detected is None:
                raise ArchiveError(f"could not recognise the format of {batch.filename}; choose it explicitly")
            fmt = detected
    except (ArchiveError, LimitExceeded) as exc:
        return import_batch_finish(batch=batch, status=ImportStatus.FAILED, message=str(exc))
    if fmt != batch.format:
        batch.format = fmt
        batch.save(update_fields=["format"])
    batch = problem_import(path=path, format=fmt, user=batch.user, batch=batch,
                           batch_size=int(getattr(settings, "IMPORT_CHUNK_ROWS", DEFAULT_BATCH_SIZE)))
    if batch.run_pipeline and batch.status == ImportStatus.SUCCEEDED:
        touched = list(Problem.objects.filter(import_batch=batch).values_list("id", flat=True))
        if touched:
            try:
                problems_normalize(problem_ids=touched)
                ImportBatch.objects.filter(pk=batch.pk).update(heartbeat_at=timezone.now())
                problems_check_constraints(problem_ids=touched)
            except Exception as exc:  # noqa: BLE001 - the rows are in; say that the stages did not run
                log.exception("import #%s: pipeline failed", batch.pk)
                batch.message = (f"{batch.message}; the normalize/constraints stages failed "
                                 f"({type(exc).__name__}: {exc}); run them again from the problems page")
                batch.save(update_fields=["message"])
    return batch


def _is_zip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(4) == _ZIP_MAGIC


def _is_upload(path: Path) -> bool:
    root = upload_dir().resolve()
    try:
        return path.resolve().is_relative_to(root) and path.resolve() != root
    except OSError:
        return False


def _delete_upload(batch: ImportBatch) -> None:
    """Remove an ended batch's uploaded files (the folder the upload created). Server-side paths given
    to ``import_problems`` are never touched."""
    if batch.status not in (ImportStatus.SUCCEEDED, ImportStatus.FAILED):
        return  # still owned by a live worker or waiting for redelivery: it needs the file
    path = Path(batch.path)
    if not _is_upload(path):
        return
    folder = upload_dir().resolve() / path.resolve().relative_to(upload_dir().resolve()).parts[0]
    shutil.rmtree(folder, ignore_errors=True)
