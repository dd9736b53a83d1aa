"""Generate a step's rollouts and judge them, judging finished groups while later ones still generate.

``rollout_and_judge`` asks the engine for ``n`` samples per prompt with an ``on_group`` callback. Each
group the engine reports finished is queued for a background judging thread; whenever that thread is
idle it takes every group queued so far and judges them in one ``score_completions`` call (so the
judge's worker pool stays busy with as many cases as are ready). The judge runs solutions in sandboxed
subprocesses, so the thread mostly waits and the judging genuinely overlaps with generation. Groups
the engine never reported (an engine without ``on_group`` support) are judged after generation.

Timing split (``timing/*`` in ``training.metrics_names``):

- ``generate_s``: wall time of ``engine.generate``;
- ``reward_s``: time the judging thread spent judging (decode + judge), whether hidden or not;
- ``reward_wait_s``: the part of the step's judging that was *not* hidden behind generation: from the
  end of generation until the last verdict arrived.

With ``overlap=False`` everything is judged after generation in one call (the previous behaviour:
``reward_wait_s == reward_s``).

This module imports nothing from Django.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from curation.records import ProblemRecord
from training.config import RewardConfig
from training.rewards import Judge, RewardResult, score_completions
from training.rollout.base import Completion, RolloutEngine

Problem = ProblemRecord | Mapping[str, Any]


@dataclass(frozen=True)
class RolloutJudged:
    """A judged rollout batch (prompt-major, like the engine's output) and its timing split."""

    completions: list[Completion]
    texts: list[str]
    results: list[RewardResult]
    generate_s: float
    reward_s: float
    reward_wait_s: float
    groups_judged_early: int  # groups whose verdicts were in before generation returned

    @property
    def hidden_reward_s(self) -> float:
        return max(0.0, self.reward_s - self.reward_wait_s)


class _GroupJudge:
    """Background thread judging queued groups in batches; ``finish()`` waits and returns everything."""

    def __init__(
        self,
        problems: Sequence[Problem],
        decode: Callable[[list[list[int]]], list[str]],
        config: RewardConfig,
        judge: Judge | None,
        reward_from_verdict: Callable[..., float | None] | None,
    ) -> None:
        self.problems = problems
        self.decode = decode
        self.config = config
        self.judge = judge
        self.reward_from_verdict = reward_from_verdict
        self.pending: list[tuple[int, list[Completion]]] = []
        self.done: dict[int, tuple[list[str], list[RewardResult]]] = {}
        self.busy_s = 0.0
        self.error: BaseException | None = None
        self.closed = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._run, name="rollout-judge", daemon=True)
        self.thread.start()

    def submit(self, prompt_index: int, comps: Sequence[Completion]) -> None:
        with self.cond:
            if prompt_index in self.done or any(p == prompt_index for p, _ in self.pending):
                raise RuntimeError(f"the rollout engine reported group {prompt_index} twice")
            self.pending.append((prompt_index, list(comps)))
            self.cond.notify()

    def judged(self) -> set[int]:
        with self.cond:
            return set(self.done)

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.pending and not self.closed:
                    self.cond.wait()
                if not self.pending:
                    return
                batch, self.pending = self.pending, []
            t0 = time.perf_counter()
            try:
                judged = judge_groups(
                    batch, self.problems, self.decode, self.config, self.judge, self.reward_from_verdict
                )
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread by finish()
                with self.cond:
                    self.error = exc
                    self.closed = True
                    self.pending = []
                return
            with self.cond:
                self.busy_s += time.perf_counter() - t0
                self.done.update(judged)

    def finish(self) -> dict[int, tuple[list[str], list[RewardResult]]]:
        with self.cond:
            self.closed = True
            self.cond.notify()
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.done


def judge_groups(
    groups: Sequence[tuple[int, Sequence[Completion]]],
    problems: Sequence[Problem],
    decode: Callable[[list[list[int]]], list[str]],
    config: RewardConfig,
    judge: Judge | None = None,
    reward_from_verdict: Callable[..., float | None] | None = None,
) -> dict[int, tuple[list[str], list[RewardResult]]]:
    """Decode and judge whole groups in one judge call: prompt index -> (texts, results)."""
    flat = [c for _, comps in groups for c in comps]
    if not flat:
        return {pi: ([], []) for pi, _ in groups}
    texts = decode([c.token_ids for c in flat])
    results = score_completions(
        [problems[c.prompt_index] for c in flat],
        texts,
        [c.truncated for c in flat],
        config,
        judge=judge,
        reward_from_verdict=reward_from_verdict,
    )
    out: dict[int, tuple[list[str], list[RewardResult]]] = {}
    k = 0
    for pi, comps in groups:
        out[pi] = (texts[k : k + len(comps)], results[k : k + len(comps)])
        k += len(comps)
    return out


def rollout_and_judge(
    engine: RolloutEngine,
    prompts: list[list[int]],
    problems: Sequence[Problem],
    *,
    n: int,
    temperature: float,
    max_new_tokens: int,
    seed: int,
    decode: Callable[[list[list[int]]], list[str]],
    reward_config: RewardConfig,
    sample_seeds: Sequence[int] | None = None,
    judge: Judge | None = None,
    reward_from_verdict: Callable[..., float | None] | None = None,
    overlap: bool = True,
) -> RolloutJudged:
    """Sample ``n`` responses for each prompt (``problems[i]`` is prompt i's problem) and judge them.

    ``decode`` turns token ids into texts (``tokenizer.batch_decode(..., skip_special_tokens=True)``).
    Results are prompt-major (row ``i * n + j``), as the engine returns them."""
    if len(problems) != len(prompts):
        raise ValueError(f"{len(prompts)} prompts but {len(problems)} problems")
    worker = _GroupJudge(problems, decode, reward_config, judge, reward_from_verdict) if overlap else None
    t0 = time.perf_counter()
    try:
        if worker is not None:
            comps = engine.generate(
                prompts,
                n=n,
                temperature=temperature,
                max_new_tokens=max_new_tokens,
                seed=seed,
                sample_seeds=sample_seeds,
                on_group=worker.submit,
            )
        else:
            comps = engine.generate(
                prompts,
                n=n,
                temperature=temperature,
                max_new_tokens=max_new_tokens,
                seed=seed,
                sample_seeds=sample_seeds,
            )
    except BaseException:
        if worker is not None:
            with contextlib.suppress(Exception):  # the generation error is the one to report
                worker.finish()
        raise
    t_gen_end = time.perf_counter()
    generate_s = t_gen_end - t0
    if len(comps) != len(prompts) * n:
        raise RuntimeError(f"the rollout engine returned {len(comps)} samples for {len(prompts)} x {n}")

    early = worker.judged() if worker is not None else set()
    judged: dict[int, tuple[list[str], list[RewardResult]]] = {}
    reward_s = 0.0
    if worker is not None:
        judged = worker.finish()
        reward_s = worker.busy_s
    missing = [(pi, comps[pi * n : (pi + 1) * n]) for pi in range(len(prompts)) if pi not in judged]
    if missing:
        t1 = time.perf_counter()
        judged.update(judge_groups(missing, problems, decode, reward_config, judge, reward_from_verdict))
        reward_s += time.perf_counter() - t1
    reward_wait_s = time.perf_counter() - t_gen_end

    texts: list[str] = []
    results: list[RewardResult] = []
    for pi in range(len(prompts)):
        g_texts, g_results = judged[pi]
        if len(g_results) != n:
            raise RuntimeError(f"group {pi} was reported with {len(g_results)} samples, expected {n}")
        texts.extend(g_texts)
        results.extend(g_results)
    return RolloutJudged(
        completions=comps,
        texts=texts,
        results=results,
        generate_s=generate_s,
        reward_s=reward_s,
        reward_wait_s=reward_wait_s,
        groups_judged_early=len(early),
    )


__all__ = ["RolloutJudged", "judge_groups", "rollout_and_judge"]
