"""Live run monitoring: ``ws/runs/<run_id>/`` forwards the run's group events to viewers."""

from __future__ import annotations

from channels.db import database_sync_to_async

from training import selectors
from webapp import realtime
from webapp.consumers import GroupForwardConsumer


class RunConsumer(GroupForwardConsumer):
    """Joins ``realtime.run_group(run_id)`` for any viewer; unknown runs are refused (close 4403).

    Right after joining the client gets a snapshot in the regular event shapes: one ``RUN_STATUS``
    and, when the run has recorded a step, one ``RUN_METRICS`` with the newest metrics. Everything
    after that is forwarded unchanged as services publish it.
    """

    role = "viewer"

    def _run_id(self) -> int:
        return int(self.scope["url_route"]["kwargs"]["run_id"])

    def group_name(self) -> str:
        return realtime.run_group(self._run_id())

    async def allowed(self) -> bool:
        self._snapshot = await database_sync_to_async(selectors.run_snapshot)(run_id=self._run_id())
        return self._snapshot is not None

    async def on_joined(self) -> None:
        snap = self._snapshot
        if snap is None:
            return
        await self.send_json(
            {
                "type": realtime.RUN_STATUS,
                "data": {
                    "run_id": snap["run_id"],
                    "status": snap["status"],
                    "message": snap["error"],
                    "cancel_requested": snap["cancel_requested"],
                },
            }
        )
        if snap["step"] is not None:
            await self.send_json(
                {
                    "type": realtime.RUN_METRICS,
                    "data": {"run_id": snap["run_id"], "step": snap["step"], "metrics": snap["metrics"]},
                }
            )
