"""Live progress of one scoring job: ``ws/scorings/<scoring_id>/`` (see ``webapp.routing``).

Viewers (any role) may listen; anonymous users, users without a role and unknown scorings are refused
(close code 4403). On joining, the client first gets a ``scoring.progress`` snapshot of the stored job,
so a page that connects after the job finished still learns its final status.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from curation.models import ScoringJob
from webapp import realtime
from webapp.consumers import GroupForwardConsumer
from webapp.roles import VIEWER


class ScoringConsumer(GroupForwardConsumer):
    role = VIEWER

    def _scoring_id(self) -> int:
        return int(self.scope["url_route"]["kwargs"]["scoring_id"])

    def group_name(self) -> str:
        return realtime.scoring_group(self._scoring_id())

    async def allowed(self) -> bool:
        return await database_sync_to_async(ScoringJob.objects.filter(pk=self._scoring_id()).exists)()

    async def on_joined(self) -> None:
        snapshot = await database_sync_to_async(self._snapshot)()
        if snapshot is not None:
            await self.send_json({"type": realtime.SCORING_PROGRESS, "data": snapshot})

    def _snapshot(self) -> dict[str, Any] | None:
        job = ScoringJob.objects.filter(pk=self._scoring_id()).first()
        return job.progress_event() if job is not None else None
