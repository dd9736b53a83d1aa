"""Live progress of one evaluation job: ``ws/evaluations/<job_id>/`` (see ``webapp.routing``).

Viewers (any role) may listen; the socket is refused (close code 4403) for anonymous users, users
without a role, and unknown jobs. On joining the client first gets a ``job.progress`` snapshot of the
stored job, so a page that connects after the job finished still learns its final status.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from evaluator.models import EvaluationJob
from webapp import realtime
from webapp.consumers import GroupForwardConsumer
from webapp.roles import VIEWER


class EvaluationJobConsumer(GroupForwardConsumer):
    role = VIEWER

    def _job_id(self) -> int:
        return int(self.scope["url_route"]["kwargs"]["job_id"])

    def group_name(self) -> str:
        return realtime.job_group(self._job_id())

    async def allowed(self) -> bool:
        return await database_sync_to_async(EvaluationJob.objects.filter(pk=self._job_id()).exists)()

    async def on_joined(self) -> None:
        snapshot = await database_sync_to_async(self._snapshot)()
        if snapshot is not None:
            await self.send_json({"type": realtime.JOB_PROGRESS, "data": snapshot})

    def _snapshot(self) -> dict[str, Any] | None:
        job = EvaluationJob.objects.filter(pk=self._job_id()).only(
            "id", "status", "progress_done", "progress_total"
        ).first()
        return job.progress_event() if job is not None else None
