"""Unpacking an uploaded .zip inside the worker, within the import's ``ReadLimits``.

Header sizes in a zip are claims, not facts: every member is copied in chunks and each chunk is
charged to one ``Budget`` (decompressed bytes, compression ratio, time), so a bomb stops after at most
one chunk past the limit, whatever its headers say. Entry count, path depth and unsafe paths (absolute,
``..``, drive letters) are checked before anything is written. Archives inside the archive are kept as
files, never unpacked (no nesting beyond one level).
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path, PurePosixPath

from curation.importers.limits import Budget, LimitExceeded, ReadLimits

CHUNK_BYTES = 1024 * 1024


class ArchiveError(ValueError):
    """The archive is unsafe, over a limit, or unreadable; the message says which."""


def unpack_zip(archive: Path, dest: Path, limits: ReadLimits) -> Path:
    """Extract ``archive`` into ``dest`` and return what to import: the folder (descending through
    single wrapper folders) or the single file inside. On any failure ``dest`` is removed and
    ``ArchiveError`` (or ``LimitExceeded``) says why."""
    try:
        with zipfile.ZipFile(archive) as zf:
            members = [m for m in zf.infolist() if not m.filename.startswith("__MACOSX/")]
            _check_members(members, limits)
            budget = Budget(archive.name, limits)
            consumed = 0
            for member in members:
                target = dest.joinpath(*_parts(member.filename))
                if member.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(member) as src, open(target, "wb") as out:
                    while chunk := src.read(CHUNK_BYTES):
                        # compressed bytes of this member read so far (zipfile keeps what is left)
                        read = member.compress_size - int(getattr(src, "_compress_left", 0) or 0)
                        budget.add(len(chunk), consumed + read)
                        budget.check_time()
                        out.write(chunk)
                consumed += member.compress_size
    except LimitExceeded:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    except ArchiveError:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, NotImplementedError, OSError, EOFError,
            ValueError) as exc:
        # corrupt or encrypted members, unsupported compression, a file where the archive needs a folder
        shutil.rmtree(dest, ignore_errors=True)
        raise ArchiveError(f"could not unpack {archive.name}: {type(exc).__name__}: {exc}") from exc
    return _import_root(dest)


def _parts(name: str) -> tuple[str, ...]:
    return tuple(p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", "."))


def _check_members(members: list[zipfile.ZipInfo], limits: ReadLimits) -> None:
    if len(members) > limits.max_entries:
        raise ArchiveError(f"the archive has {len(members):,} entries (limit {limits.max_entries:,}, "
                           "IMPORT_MAX_ARCHIVE_ENTRIES)")
    declared = sum(m.file_size for m in members)
    if declared > limits.max_decompressed_bytes:
        raise LimitExceeded(f"the archive declares {declared:,} bytes unpacked (limit "
                            f"{limits.max_decompressed_bytes:,}, IMPORT_MAX_DECOMPRESSED_MB)")
    for m in members:
        name = m.filename.replace("\\", "/")
        parts = PurePosixPath(name).parts
        if name.startswith("/") or ".." in parts or (parts and ":" in parts[0]):
            raise ArchiveError(f"unsafe path in archive: {m.filename!r}")
        if len(parts) > limits.max_depth:
            raise ArchiveError(f"{m.filename!r} is nested {len(parts)} levels deep (limit {limits.max_depth}, "
                               "IMPORT_MAX_ARCHIVE_DEPTH)")


def _import_root(dest: Path) -> Path:
    path = dest
    while not (path / "problem.yaml").exists():
        entries = [p for p in path.iterdir() if not p.name.startswith(".")] if path.is_dir() else []
        if len(entries) != 1:
            break
        path = entries[0]
        if path.is_file():
            break
    return path
