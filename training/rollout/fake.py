"""A scripted rollout engine for tests: no model, completions that are a pure function of each sample's
seed, every call recorded, groups reported through ``on_group`` as they "finish".

``before_group(i)`` is called before group i is generated (tests use it to hold generation until
something happened, e.g. the judge started on an earlier group).

``ScriptedEngine(responses, ...)``: sample (i, j) of a call gets the token ids
``responses[sample_seed % len(responses)]``, so tests can script which program each sample answers
with (decode them with ``ScriptedEngine.decode``). ``group_seconds`` sleeps before each group is
reported (generation time to overlap with); ``report_groups=False`` imitates an engine that never calls
``on_group``. It honours the seeding contract of ``training.rollout.base``: with ``sample_seeds`` a
sample depends only on its own seed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from training.rollout.base import (
    Completion,
    GroupCallback,
    GroupTracker,
    SampleCallback,
    resolve_sample_seeds,
)


@dataclass
class GenerateCall:
    """One recorded ``generate`` call."""

    prompts: list[list[int]]
    n: int
    temperature: float
    max_new_tokens: int
    seed: int
    sample_seeds: list[int]
    reported: list[int] = field(default_factory=list)  # prompt indices in on_group order
    started: float = 0.0
    finished: float = 0.0


class ScriptedEngine:
    """See the module docstring. ``responses`` are token-id lists; ``eos_id`` ends a finished one."""

    def __init__(
        self,
        responses: Sequence[Sequence[int]],
        *,
        eos_id: int = 0,
        group_seconds: float = 0.0,
        report_groups: bool = True,
        report_samples: bool = True,
        before_group: Callable[[int], None] | None = None,
    ) -> None:
        if not responses:
            raise ValueError("ScriptedEngine needs at least one scripted response")
        self.responses = [list(r) for r in responses]
        self.eos_id = eos_id
        self.group_seconds = group_seconds
        self.report_groups = report_groups
        self.report_samples = report_samples
        self.before_group = before_group
        self.calls: list[GenerateCall] = []
        self.synced = 0
        self.closed = False

    def generate(
        self,
        prompts: list[list[int]],
        *,
        n: int,
        temperature: float,
        max_new_tokens: int,
        seed: int,
        sample_seeds: Sequence[int] | None = None,
        on_group: GroupCallback | None = None,
        on_sample: SampleCallback | None = None,
    ) -> list[Completion]:
        seeds = resolve_sample_seeds(seed, len(prompts), n, sample_seeds)
        call = GenerateCall(
            [list(p) for p in prompts],
            n,
            temperature,
            max_new_tokens,
            seed,
            seeds,
            started=time.perf_counter(),
        )
        self.calls.append(call)

        def report(prompt_index: int, comps: list[Completion]) -> None:
            call.reported.append(prompt_index)
            if on_group is not None:
                on_group(prompt_index, comps)

        tracker = GroupTracker(
            n, report if self.report_groups else None, on_sample if self.report_samples else None
        )
        out: list[Completion] = []
        for i in range(len(prompts)):
            if self.before_group is not None:
                self.before_group(i)
            if self.group_seconds:
                time.sleep(self.group_seconds)
            for j in range(n):
                row = i * n + j
                script = self.responses[seeds[row] % len(self.responses)]
                tokens = script[:max_new_tokens]
                truncated = len(script) > max_new_tokens or not tokens or tokens[-1] != self.eos_id
                comp = Completion(
                    prompt_index=i,
                    token_ids=tokens,
                    logprobs=[-1.0] * len(tokens),
                    truncated=truncated,
                    entropy_sum=float(len(tokens)),
                )
                out.append(comp)
                tracker.add(row, comp)
        call.finished = time.perf_counter()
        return out

    def sync_weights(self, model: torch.nn.Module) -> None:
        self.synced += 1

    def close(self) -> None:
        self.closed = True

    @staticmethod
    def decode(batch: list[list[int]]) -> list[str]:
        """Token ids as text: each id is a character (``chr(id)``), id 0 (the default eos) dropped."""
        return ["".join(chr(t) for t in ids if t) for ids in batch]


def script_tokens(text: str, eos_id: int = 0) -> list[int]:
    """A scripted response for ``text`` that ``ScriptedEngine.decode`` turns back into it, ending with eos."""
    return [ord(ch) for ch in text] + [eos_id]


__all__ = ["GenerateCall", "ScriptedEngine", "script_tokens"]
