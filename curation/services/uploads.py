"""Uploaded imports: store the file (or unpack the .zip), create a pending batch, run it in a task.

The form page and ``POST /api/imports/`` both call ``import_batch_create``; the Celery task
``curation.tasks.import_file`` calls ``import_batch_run``, which imports and, when the batch asks for
it, runs the normalize and constraints stages on the problems the import created or changed.
"""

from __future__ import annotations

import shutil
import uuid
import zipfile
import zlib
from datetime import timedelta
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from curation.importers import FORMATS, detect_format
from curation.models import ImportBatch, ImportStatus, Problem
from curation.services.checks import problems_check_constraints
from curation.services.imports import problem_import
from curation.services.normalization import problems_normalize

AUTO = "auto"
#: Limits for unpacking an uploaded .zip (a zip bomb must not fill the disk).
MAX_ZIP_MEMBERS = 200_000
MAX_ZIP_BYTES = 4 * 1024**3


class UploadError(ValueError):
    """The upload cannot be imported (unknown format, unsafe or oversized archive ...)."""


def upload_dir() -> Path:
    return Path(settings.MEDIA_ROOT) / "imports"


def import_batch_create(
    *, uploaded_file: UploadedFile, format: str = AUTO, user: Any = None, run_pipeline: bool = True  # noqa: A002
) -> ImportBatch:
    """Save ``uploaded_file`` (a data file, or a .zip of ICPC packages / of one data file), create a
    pending ``ImportBatch`` and enqueue ``curation.tasks.import_file`` after commit. ``format`` may be
    ``"auto"`` (detected from the content). Raises ``UploadError`` with a reason for the user."""
    if format != AUTO and format not in FORMATS:
        raise UploadError(f"unknown format {format!r}; choose one of {', '.join(sorted(FORMATS))}")
    name = PurePosixPath(uploaded_file.name or "upload").name or "upload"
    folder = upload_dir() / uuid.uuid4().hex
    folder.mkdir(parents=True)
    target = folder / name
    with open(target, "wb") as fh:
        for part in uploaded_file.chunks():
            fh.write(part)
    try:
        path = _unpack(target) if zipfile.is_zipfile(target) else target
        if format == AUTO:
            detected = detect_format(path)
            if detected is None:
                raise UploadError(f"could not recognise the format of {name}; choose it explicitly")
            format = detected  # noqa: A001
    except UploadError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, RuntimeError, NotImplementedError, OSError,
            EOFError) as exc:
        # corrupt or encrypted members, unsupported compression, a file where the archive needs a folder
        shutil.rmtree(folder, ignore_errors=True)
        raise UploadError(f"could not unpack {name}: {type(exc).__name__}: {exc}") from exc
    batch = ImportBatch.objects.create(
        format=format, filename=name, path=str(path), user=user if getattr(user, "is_authenticated", False) else None,
        run_pipeline=run_pipeline,
    )
    from curation.tasks import import_file  # the task module imports services; import late

    transaction.on_commit(lambda: import_file.delay(batch.pk))
    return batch


def _unpack(archive: Path) -> Path:
    """Extract ``archive`` next to itself, refusing absolute/parent paths and oversized content.
    Returns the folder to import (descending through single wrapper folders) or the single file."""
    dest = archive.with_suffix("")
    if dest == archive:
        dest = archive.parent / (archive.name + ".d")
    with zipfile.ZipFile(archive) as zf:
        members = [m for m in zf.infolist() if not m.filename.startswith("__MACOSX/")]
        if len(members) > MAX_ZIP_MEMBERS:
            raise UploadError(f"the archive has {len(members)} entries (limit {MAX_ZIP_MEMBERS})")
        if sum(m.file_size for m in members) > MAX_ZIP_BYTES:
            raise UploadError(f"the archive unpacks to more than {MAX_ZIP_BYTES // 1024**3} GiB")
        for m in members:
            parts = PurePosixPath(m.filename.replace("\\", "/")).parts
            if m.filename.startswith("/") or ".." in parts or (parts and ":" in parts[0]):
                raise UploadError(f"unsafe path in archive: {m.filename!r}")
        zf.extractall(dest, members=members)
    path = dest
    while not (path / "problem.yaml").exists():
        entries = [p for p in path.iterdir() if not p.name.startswith(".")]
        if len(entries) != 1:
            break
        path = entries[0]
        if path.is_file():
            break
    return path


def _claim(batch_id: int) -> bool:
    """Atomically take a pending batch, or one left ``running`` by a worker that died: a running batch
    older than the import task's time limit cannot still be executing. Re-running it is safe, since
    rows committed before the crash come back ``unchanged``."""
    now = timezone.now()
    stale = now - timedelta(seconds=int(getattr(settings, "IMPORT_TASK_TIME_LIMIT", 3600)))
    claimable = Q(status=ImportStatus.PENDING) | Q(status=ImportStatus.RUNNING, started_at__lt=stale)
    return ImportBatch.objects.filter(claimable, pk=batch_id).update(status=ImportStatus.RUNNING, started_at=now) == 1


def import_batch_run(*, batch_id: int) -> ImportBatch:
    """Run a pending batch: import its file, then (if ``run_pipeline``) normalize and check the
    constraints of the problems it created or changed."""
    if not _claim(batch_id):
        return ImportBatch.objects.get(pk=batch_id)  # another delivery runs it, or it has finished
    batch = ImportBatch.objects.get(pk=batch_id)
    batch = problem_import(path=batch.path, format=batch.format, user=batch.user, batch=batch)
    if batch.run_pipeline and batch.status == ImportStatus.SUCCEEDED:
        touched = list(Problem.objects.filter(import_batch=batch).values_list("id", flat=True))
        if touched:
            problems_normalize(problem_ids=touched)
            problems_check_constraints(problem_ids=touched)
    return batch
