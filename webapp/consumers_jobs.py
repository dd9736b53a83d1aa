"""Live feed of the jobs view: ``ws/jobs/`` (see ``webapp.routing``).

Viewers (any role) may listen; anonymous users and users without a role are refused with close code
4403. Every job kind's progress publication reaches the ``jobs`` group (``webapp.jobs_feed``), so the
socket carries ``jobs.update`` events: one job's row plus its new log lines. There is no snapshot on
join: the page is rendered by the server and, after a reconnect, re-reads its rows over HTTP.
"""

from __future__ import annotations

from webapp import realtime
from webapp.consumers import GroupForwardConsumer
from webapp.roles import VIEWER


class JobsConsumer(GroupForwardConsumer):
    role = VIEWER

    def group_name(self) -> str:
        return realtime.JOBS_GROUP
