"""Output diversity and the temperature policy.

Diversity (the product's definition; the papers do not define theirs):
  ``diversity`` of a group = the mean, over all pairs of the group's responses, of the token-level
  Levenshtein distance between their first N tokens divided by the longer of the two lengths
  (0 = identical responses, 1 = nothing in common). The step's ``diversity`` is the mean over its
  groups (the first ``temperature.diversity_groups`` of them: prompts are shuffled, so a random subset).
  ``diversity/reward_nonconstant_frac`` is the share of groups whose rewards are not all equal (the
  groups that carry a learning signal).

Temperature policies:
  - ``constant``: T everywhere.
  - ``staged``: piecewise constant, low -> high, switching at configured steps.
  - ``diversity``: before step 1, sample the initial policy at each candidate T, measure diversity and
    choose by the rule of ``choose_temperature``: the LOWEST candidate whose diversity reaches the
    target (the level diversity converges to during training: starting below it makes training fail,
    while higher T only adds fluctuation). When no candidate reaches the target, the most diverse one
    (the lower T on ties). The selected T replaces the first stage of ``temperature.stages`` (or is
    used throughout when there are no stages).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from training.config import TemperatureConfig


def levenshtein(a: Sequence[int], b: Sequence[int]) -> int:
    """Edit distance (insert / delete / substitute, each cost 1) between two token sequences."""
    return int(batch_levenshtein([a], [b])[0])


def batch_levenshtein(a_list: Sequence[Sequence[int]], b_list: Sequence[Sequence[int]]) -> np.ndarray:
    """Edit distances of many pairs at once, vectorized over pairs: shape (P,).

    Row recurrence of the DP table, one numpy pass per row of the longest ``a``. The in-row
    dependency d[i][j] = min(t[j], d[i][j-1] + 1) is solved in closed form as
    d[i][j] = j + min_{k<=j}(t[k] - k) (a running minimum), so a row costs O(len(b)) vector work.
    """
    p = len(a_list)
    if p != len(b_list):
        raise ValueError("a_list and b_list must have the same length")
    if p == 0:
        return np.zeros(0, dtype=np.int64)
    la = np.array([len(x) for x in a_list], dtype=np.int64)
    lb = np.array([len(x) for x in b_list], dtype=np.int64)
    max_a, max_b = int(la.max()), int(lb.max())
    # Padding values never match anything real, and cells beyond a pair's lengths are never read.
    a = np.full((p, max_a), -1, dtype=np.int64)
    b = np.full((p, max_b), -2, dtype=np.int64)
    for i, (x, y) in enumerate(zip(a_list, b_list)):
        a[i, : len(x)] = x
        b[i, : len(y)] = y
    cols = np.arange(max_b + 1, dtype=np.int64)
    row = np.broadcast_to(cols, (p, max_b + 1)).copy()  # d[0][j] = j
    result = np.where(la == 0, lb, 0)
    for i in range(1, max_a + 1):
        cost = (b != a[:, i - 1 : i]).astype(np.int64)  # (P, max_b)
        t = np.empty_like(row)
        t[:, 0] = i
        t[:, 1:] = np.minimum(row[:, 1:] + 1, row[:, :-1] + cost)
        row = cols + np.minimum.accumulate(t - cols, axis=1)
        done = la == i
        if done.any():
            result[done] = row[done, lb[done]]
    return result


def normalized_edit_distance(a: Sequence[int], b: Sequence[int]) -> float:
    """Levenshtein distance / max(len(a), len(b)); 0 for two empty sequences."""
    longest = max(len(a), len(b))
    return levenshtein(a, b) / longest if longest else 0.0


def group_diversities(groups: Sequence[Sequence[Sequence[int]]], max_tokens: int) -> list[float]:
    """Per-group mean pairwise normalized edit distance of the first ``max_tokens`` tokens."""
    pairs_a: list[Sequence[int]] = []
    pairs_b: list[Sequence[int]] = []
    owner: list[int] = []
    for g, responses in enumerate(groups):
        cut = [list(r[:max_tokens]) for r in responses]
        for x, y in itertools.combinations(cut, 2):
            pairs_a.append(x)
            pairs_b.append(y)
            owner.append(g)
    out = [0.0] * len(groups)
    if not owner:
        return out
    dist = batch_levenshtein(pairs_a, pairs_b).astype(np.float64)
    longest = np.array([max(len(x), len(y)) for x, y in zip(pairs_a, pairs_b)], dtype=np.float64)
    norm = np.divide(dist, longest, out=np.zeros_like(dist), where=longest > 0)
    owner_arr = np.array(owner)
    for g in range(len(groups)):
        sel = norm[owner_arr == g]
        out[g] = float(sel.mean()) if sel.size else 0.0
    return out


def diversity(groups: Sequence[Sequence[Sequence[int]]], max_tokens: int) -> float:
    """The step's ``diversity``: the mean of ``group_diversities`` over groups (0 when there are none)."""
    values = group_diversities(groups, max_tokens)
    return float(np.mean(values)) if values else 0.0


class _Generates(Protocol):
    def generate(
        self, prompts: list[list[int]], *, n: int, temperature: float, max_new_tokens: int, seed: int
    ) -> Sequence[Any]: ...


def probe_diversity(
    engine: _Generates,
    prompts: Sequence[list[int]],
    *,
    group_size: int,
    temperature: float,
    max_tokens: int,
    seed: int,
) -> float:
    """The selection probe: ``group_size`` samples of at most ``max_tokens`` tokens for each prompt
    at ``temperature`` -> their ``diversity`` (one group per prompt; a prompt may repeat)."""
    comps = engine.generate(
        list(prompts), n=group_size, temperature=temperature, max_new_tokens=max_tokens, seed=seed
    )
    groups = [
        [c.token_ids for c in comps[g * group_size : (g + 1) * group_size]] for g in range(len(prompts))
    ]
    return diversity(groups, max_tokens)


def reward_nonconstant_fraction(group_rewards: Sequence[Sequence[float]]) -> float:
    """Share of groups whose (valid) rewards are not all equal; groups with < 2 rewards count as constant."""
    if not group_rewards:
        return 0.0
    varied = sum(1 for rs in group_rewards if len(rs) >= 2 and max(rs) != min(rs))
    return varied / len(group_rewards)


def choose_temperature(measurements: Sequence[tuple[float, float]], target: float) -> float:
    """The selection rule: lowest T with diversity >= target, else the most diverse (lower T on ties).

    ``measurements`` are ``(temperature, diversity)`` pairs in any order.
    """
    if not measurements:
        raise ValueError("choose_temperature needs at least one (temperature, diversity) measurement")
    ordered = sorted(measurements)
    for t, d in ordered:
        if d >= target:
            return t
    best = max(d for _, d in ordered)
    return next(t for t, d in ordered if d == best)


def stage_index(starts: Sequence[int], step: int) -> int:
    """Index of the stage in force at ``step`` (1-based): the last stage whose start is <= step."""
    idx = 0
    for i, s in enumerate(starts):
        if step >= s:
            idx = i
    return idx


@dataclass
class SelectionResult:
    """What the diversity selection measured and chose (stored in checkpoints and shown in the UI)."""

    measurements: list[tuple[float, float]]
    chosen: float
    target: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "measurements": [list(m) for m in self.measurements],
            "chosen": self.chosen,
            "target": self.target,
        }


@dataclass
class TemperaturePolicy:
    """Maps a training step to (temperature, stage). Resumable through ``state_dict``."""

    config: TemperatureConfig
    selection: SelectionResult | None = None
    _schedule: list[tuple[int, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._rebuild()

    @property
    def needs_selection(self) -> bool:
        return self.config.policy == "diversity" and self.selection is None

    def _rebuild(self) -> None:
        cfg = self.config
        if cfg.policy == "constant":
            self._schedule = [(0, cfg.value)]
        elif cfg.policy == "staged":
            self._schedule = [(s.start_step, s.value) for s in cfg.stages]
        else:
            later = [(s.start_step, s.value) for s in cfg.stages if s.start_step > 1]
            chosen = self.selection.chosen if self.selection is not None else float("nan")
            self._schedule = [(0, chosen), *later]

    def select(self, measure: Callable[[float], float]) -> SelectionResult:
        """Run the diversity selection: ``measure(T)`` samples the initial policy at T -> diversity."""
        measurements = [(float(t), float(measure(float(t)))) for t in self.config.candidates]
        self.selection = SelectionResult(
            measurements=measurements,
            chosen=choose_temperature(measurements, self.config.target_diversity),
            target=self.config.target_diversity,
        )
        self._rebuild()
        return self.selection

    def stage(self, step: int) -> int:
        return stage_index([s for s, _ in self._schedule], step)

    def temperature(self, step: int) -> float:
        if self.needs_selection:
            raise RuntimeError("the diversity temperature policy must run select() before training")
        return self._schedule[self.stage(step)][1]

    def state_dict(self) -> dict[str, Any]:
        return {"selection": self.selection.to_dict() if self.selection is not None else None}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        sel = state.get("selection")
        self.selection = (
            SelectionResult(
                [(float(t), float(d)) for t, d in sel["measurements"]],
                float(sel["chosen"]),
                float(sel["target"]),
            )
            if sel
            else None
        )
        self._rebuild()


__all__ = [
    "SelectionResult",
    "TemperaturePolicy",
    "batch_levenshtein",
    "choose_temperature",
    "diversity",
    "group_diversities",
    "levenshtein",
    "normalized_edit_distance",
    "probe_diversity",
    "reward_nonconstant_fraction",
    "stage_index",
]
