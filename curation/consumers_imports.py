"""Live progress of one import batch: ``ws/imports/<batch_id>/`` (see ``webapp.routing``).

Viewers (any role) may listen; the socket is refused (close code 4403) for anonymous users, users
without a role, and unknown batches. On every join the client first gets an ``import.progress``
snapshot of the stored batch, so a page that (re)connects after events it missed is up to date.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from curation.models import ImportBatch
from webapp import realtime
from webapp.consumers import GroupForwardConsumer
from webapp.roles import VIEWER


class ImportBatchConsumer(GroupForwardConsumer):
    role = VIEWER

    def _batch_id(self) -> int:
        return int(self.scope["url_route"]["kwargs"]["batch_id"])

    def group_name(self) -> str:
        return realtime.import_group(self._batch_id())

    async def allowed(self) -> bool:
        self._snapshot = await database_sync_to_async(self._load)()
        return self._snapshot is not None

    async def on_joined(self) -> None:
        if self._snapshot is not None:
            await self.send_json({"type": realtime.IMPORT_PROGRESS, "data": self._snapshot})

    def _load(self) -> dict[str, Any] | None:
        batch = ImportBatch.objects.filter(pk=self._batch_id()).first()
        return batch.progress_event() if batch is not None else None
