"""The sampling half of a GRPO step: the step's judged batch, with DAPO's dynamic sampling when on.

``Sampler.step_batch(step, temperature)`` samples G responses for each of the step's prompts and
judges them (``training.rollout_judge``: finished groups are judged while later ones still generate);
under torchrun each process samples its share and every process gets the whole batch back
(``training.distributed``). With ``dynamic_sampling.enabled`` groups whose judged rewards are all
equal are dropped and more prompts sampled (``training.dynamic_sampling``); refill prompts continue
the step's global prompt positions, so their per-sample seeds never collide with the first round's.
``Sampler.select_temperature`` runs the diversity probe of the ``diversity`` temperature policy.

A ``Sampler`` is built per step from the trainer's current state (a swapped engine is used at once).

This module imports nothing from Django.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from curation.records import ProblemRecord
from training.config import GRPOConfig
from training.data import step_prompt_indices, step_sample_seeds
from training.distributed import DistContext
from training.dynamic_sampling import (
    FilledBatch,
    JudgedGroup,
    fill_batch,
    join_groups,
    refill_indices,
    split_groups,
)
from training.rewards import Judge, RewardResult
from training.rollout import Completion, RolloutEngine
from training.rollout_judge import rollout_and_judge
from training.temperature import SelectionResult, TemperaturePolicy, probe_diversity


@dataclass(frozen=True)
class StepBatch:
    """A step's judged batch, prompt-major (``completions[g*G + j]`` answers problem ``idx[g]``), and
    the time it took over every sampling round."""

    idx: list[int]
    completions: list[Completion]
    texts: list[str]
    results: list[RewardResult]
    generate_s: float
    reward_s: float
    reward_wait_s: float
    generated_tokens: int  # over every round, dropped groups included
    filled: FilledBatch[JudgedGroup] | None = None  # how dynamic sampling built it (None when off)


@dataclass(frozen=True)
class Sampler:
    """What sampling needs from the trainer: config, engine, processes, problems and the judge."""

    config: GRPOConfig
    engine: RolloutEngine
    dist: DistContext
    problems: Sequence[ProblemRecord]
    prompt_ids: Sequence[list[int]]
    decode: Callable[[list[list[int]]], list[str]]
    judge: Judge | None = None
    reward_from_verdict: Callable[..., float | None] | None = None

    def sample(
        self, step: int, idx: list[int], temperature: float, updates: int, first_position: int = 0
    ) -> StepBatch:
        """G judged responses for each problem of ``idx``, whose global prompt positions start at
        ``first_position``; ``updates`` tells the processes how the batch splits into minibatches."""
        cfg = self.config
        prompts = [self.prompt_ids[i] for i in idx]
        # This process's share of the prompts (all of them without torchrun); see training.distributed.
        positions = self.dist.prompt_positions(len(prompts), updates)
        judged = rollout_and_judge(
            self.engine,
            [prompts[p] for p in positions],
            [self.problems[idx[p]] for p in positions],
            n=cfg.group_size,
            temperature=temperature,
            max_new_tokens=cfg.max_response_length,
            seed=cfg.seed * 1_000_003 + step,
            sample_seeds=step_sample_seeds(
                cfg.seed, step, [first_position + p for p in positions], cfg.group_size
            ),
            decode=self.decode,
            reward_config=cfg.reward,
            judge=self.judge,
            reward_from_verdict=self.reward_from_verdict,
            overlap=cfg.reward.overlap,
        )
        # Every process gets the whole batch back (global prompt-major order) for masks and advantages.
        comps, texts, results = self.dist.gather_rollout(
            positions, judged.completions, judged.texts, judged.results
        )
        return StepBatch(
            idx=list(idx),
            completions=comps,
            texts=texts,
            results=results,
            generate_s=judged.generate_s,
            reward_s=judged.reward_s,
            reward_wait_s=judged.reward_wait_s,
            generated_tokens=sum(c.length for c in comps),
        )

    def select_temperature(self, policy: TemperaturePolicy) -> SelectionResult:
        """The diversity-determined temperature: probe the initial policy at each candidate T with
        ``temperature.selection_prompts`` groups (prompts repeat when there are fewer problems; each
        group is a fresh sample set) and let ``policy`` apply its rule."""
        cfg = self.config
        idx = step_prompt_indices(len(self.problems), cfg.temperature.selection_prompts, 1, cfg.seed + 7919)
        prompts = [self.prompt_ids[i] for i in idx]
        tokens = min(cfg.temperature.diversity_tokens, cfg.max_response_length)

        def measure(t: float) -> float:
            return probe_diversity(
                self.engine,
                prompts,
                group_size=cfg.group_size,
                temperature=t,
                max_tokens=tokens,
                seed=cfg.seed * 7_919 + int(t * 1000),
            )

        return policy.select(measure)

    def step_batch(self, step: int, temperature: float) -> StepBatch:
        """The batch step ``step`` trains on."""
        cfg = self.config
        idx = step_prompt_indices(len(self.problems), cfg.prompts_per_step, step, cfg.seed)
        first = self.sample(step, idx, temperature, cfg.updates_per_rollout)
        if not cfg.dynamic_sampling.enabled:
            return first
        rounds = [first]
        next_position = len(idx)  # refill prompts continue the step's global positions (their seeds)

        def sample_more(round_: int, count: int) -> list[JudgedGroup]:
            nonlocal next_position
            count = -(-count // self.dist.world_size) * self.dist.world_size  # every process a share
            more = refill_indices(len(self.problems), count, seed=cfg.seed, step=step, round_=round_)
            batch = self.sample(step, more, temperature, 1, next_position)
            next_position += count
            rounds.append(batch)
            return _groups(batch, cfg.group_size)

        filled = fill_batch(
            _groups(first, cfg.group_size),
            sample_more,
            lambda g: g.rewards,
            target=cfg.prompts_per_step,
            max_rounds=cfg.dynamic_sampling.max_rounds,
        )
        if self.dist.is_distributed and len(filled.groups) < cfg.prompts_per_step:
            # a short batch must still split evenly over the processes and minibatches
            unit = cfg.updates_per_rollout * self.dist.world_size
            if len(filled.groups) < unit:
                raise RuntimeError(
                    f"dynamic sampling kept {len(filled.groups)} groups after {filled.rounds} extra rounds, "
                    f"fewer than updates_per_rollout x processes = {unit}; raise dynamic_sampling.max_rounds"
                )
            filled = replace(filled, groups=filled.groups[: len(filled.groups) // unit * unit])
        kept_idx, comps, texts, results = join_groups(filled.groups)
        return StepBatch(
            idx=kept_idx,
            completions=comps,
            texts=texts,
            results=results,
            generate_s=sum(b.generate_s for b in rounds),
            reward_s=sum(b.reward_s for b in rounds),
            reward_wait_s=sum(b.reward_wait_s for b in rounds),
            generated_tokens=sum(b.generated_tokens for b in rounds),
            filled=filled,
        )


def _groups(batch: StepBatch, group_size: int) -> list[JudgedGroup]:
    return split_groups(batch.idx, batch.completions, batch.texts, batch.results, group_size)


__all__ = ["Sampler", "StepBatch"]
