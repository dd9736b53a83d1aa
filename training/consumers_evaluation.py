"""Live progress of a model evaluation: ``ws/model-evaluations/<evaluation_id>/`` (see ``webapp.routing``).

Viewers (any role) may listen; anonymous users, users without a role and unknown evaluations are refused
(close 4403). On joining the client first gets a ``model_evaluation.progress`` snapshot of the stored
job, so a page that connects after the job finished still learns its final status.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from training.models_evaluation import ModelEvaluation
from webapp import realtime
from webapp.consumers import GroupForwardConsumer
from webapp.roles import VIEWER


class ModelEvaluationConsumer(GroupForwardConsumer):
    role = VIEWER

    def _evaluation_id(self) -> int:
        return int(self.scope["url_route"]["kwargs"]["evaluation_id"])

    def group_name(self) -> str:
        return realtime.model_evaluation_group(self._evaluation_id())

    async def allowed(self) -> bool:
        self._snapshot = await database_sync_to_async(self._read_snapshot)()
        return self._snapshot is not None

    async def on_joined(self) -> None:
        if self._snapshot is not None:
            await self.send_json({"type": realtime.MODEL_EVALUATION_PROGRESS, "data": self._snapshot})

    def _read_snapshot(self) -> dict[str, Any] | None:
        evaluation = ModelEvaluation.objects.filter(pk=self._evaluation_id()).first()
        return evaluation.progress_event() if evaluation is not None else None
