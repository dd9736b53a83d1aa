"""Sweeps: one base config crossed with override sets, grid axes and seeds, launched as N training runs.

A :class:`Sweep` stores its *specification*, not a resolved config: ``base_config`` is the sparse
nested config the user wrote (it may name a ``preset``; presets are resolved per run by
``training.config.config_from_dict``, so an axis over ``preset`` gives each run its preset's settings
before the base values and the run's overrides). ``override_sets`` is a list of dotted-path override
mappings (e.g. three temperature schedules), ``axes`` a list of ``{"path", "values"}`` grid axes
(``mask.policy x mask.probability``) and ``seeds`` the seeds axis; the runs are their cartesian product
(``training.services.sweeps.sweep_expand``). Each run links back through ``TrainingRun.sweep`` and keeps
the combination it was made from in ``TrainingRun.sweep_overrides``.

A sweep's status is derived from its runs (:meth:`Sweep.status_of`), never stored: runs change status
in the worker, and a second copy of that state could only drift.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import models


class Sweep(models.Model):
    """A set of training runs launched together from one specification."""

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    base_config = models.JSONField(
        default=dict,
        blank=True,
        help_text='Sparse nested config every run starts from (may name a "preset").',
    )
    override_sets = models.JSONField(
        default=list,
        blank=True,
        help_text="List of {dotted path: value} mappings, one per variant (crossed with the axes).",
    )
    axes = models.JSONField(
        default=list,
        blank=True,
        help_text='Grid axes: [{"path": "mask.probability", "values": [0.1, 0.3]}, ...].',
    )
    seeds = models.JSONField(default=list, blank=True, help_text="Seeds axis (empty: the config's seed).")
    release = models.ForeignKey(
        "curation.DatasetRelease",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="sweeps",
        help_text="The dataset release every run trains on (None: the config's dataset.release file).",
    )
    heldout_release = models.ForeignKey(
        "curation.DatasetRelease",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="heldout_sweeps",
        help_text="Held-out release every run evaluates during training.",
    )
    cloned_from = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="clones",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="training_sweeps",
    )
    cancel_requested = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} (sweep #{self.pk})"

    def spec(self) -> dict[str, Any]:
        """The specification as the API takes it (what a clone copies)."""
        return {
            "base_config": self.base_config,
            "override_sets": self.override_sets,
            "axes": self.axes,
            "seeds": self.seeds,
            "release_id": self.release_id,
            "heldout_release_id": self.heldout_release_id,
        }

    @staticmethod
    def status_of(statuses: Iterable[str]) -> str:
        """A sweep's status from its runs' statuses.

        ``running`` while any run is queued or running (``queued`` when none has started yet), then
        ``failed`` if any run failed, ``cancelled`` if any was cancelled, else ``succeeded``;
        ``empty`` for a sweep without runs.
        """
        counts = Counter(statuses)
        if not counts:
            return "empty"
        if counts["running"]:
            return "running"
        if counts["queued"]:
            return "queued" if sum(counts.values()) == counts["queued"] else "running"
        for status in ("failed", "cancelled"):
            if counts[status]:
                return status
        return "succeeded"


__all__ = ["Sweep"]
