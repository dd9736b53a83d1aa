"""The upload handler that keeps an oversized upload off the disk (``settings.FILE_UPLOAD_HANDLERS``).

Django streams a large upload to a temporary file before any view runs. This handler writes at most
``IMPORT_MAX_UPLOAD_MB`` of a file and discards the rest while still counting it, so the temporary
file stays bounded and ``uploaded_file.size`` is the real size: ``import_batch_create`` then refuses
the upload with a message naming the limit (a 400 naming the ``file`` field).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import TemporaryFileUploadHandler


class LimitedTemporaryFileUploadHandler(TemporaryFileUploadHandler):
    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self._limit = int(settings.IMPORT_MAX_UPLOAD_MB) * 1024 * 1024
        self._seen = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        self._seen += len(raw_data)
        if self._seen <= self._limit:
            self.file.write(raw_data)
        return None

    def file_complete(self, file_size: int) -> Any:
        self.file.seek(0)
        self.file.size = file_size  # the real size (the parser counted every byte), not what was kept
        return self.file
