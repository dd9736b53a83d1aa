"""The sampling half of a step (training.step_sampling) with DAPO's dynamic sampling, on a scripted
engine and a scripted judge: no model, no sandbox."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest

from training.config import GRPOConfig
from training.distributed import DistContext
from training.rollout.fake import ScriptedEngine, script_tokens
from training.step_sampling import Sampler
from training.tiny import toy_problems

# "double" and "increment" are always solved (groups all right: no signal); "square" and "negate" are
# solved only by the program "A" (mixed groups).
FLAT_OUTPUTS = {"6\n", "4\n"}  # the first expected output of double(3) and increment(3)
RESPONSES = [script_tokens("\n```python\nA\n```"), script_tokens("\n```python\nB\n```")]


def _judge(cases: Sequence[Mapping[str, Any]], **_: Any) -> list[dict[str, Any]]:
    out = []
    for case in cases:
        ok = case["tests"][0]["output"] in FLAT_OUTPUTS or case["code"].strip() == "A"
        out.append({"id": case["id"], "verdict": "AC" if ok else "WA", "passed": int(ok), "total": 1})
    return out


def _reward(verdict: Mapping[str, Any], **_: Any) -> float:
    return 1.0 if verdict["verdict"] == "AC" else 0.0


def _sampler(engine: ScriptedEngine, dist: Any = None, **overrides: Any) -> Sampler:
    cfg = GRPOConfig().replace(
        **{
            "group_size": 8,
            "prompts_per_step": 4,
            "minibatch_prompts": 4,
            "max_response_length": 32,
            "dynamic_sampling.enabled": True,
            **overrides,
        }
    )
    problems = toy_problems()
    return Sampler(
        config=cfg,
        engine=engine,
        dist=dist if dist is not None else DistContext.single(),
        problems=problems,
        prompt_ids=[[10 + i] for i in range(len(problems))],
        decode=ScriptedEngine.decode,
        judge=_judge,
        reward_from_verdict=_reward,
    )


def test_groups_without_signal_are_replaced_by_fresh_prompts_with_fresh_seeds() -> None:
    engine = ScriptedEngine(RESPONSES)
    batch = _sampler(engine, **{"dynamic_sampling.max_rounds": 20}).step_batch(1, 1.0)
    names = [toy_problems()[i].external_id for i in batch.idx]
    assert len(names) == 4 and set(names) <= {"square", "negate"}
    assert batch.filled is not None
    assert batch.filled.dropped >= 2 and batch.filled.refilled >= 2 and batch.filled.rounds >= 1
    assert [c.prompt_index for c in batch.completions] == [g for g in range(4) for _ in range(8)]
    seeds = [s for call in engine.calls for s in call.sample_seeds]
    assert len(seeds) == len(set(seeds))  # refill rounds never reuse a sample seed of the step
    # timing and throughput count every round, dropped groups included
    assert batch.generated_tokens == sum(len(RESPONSES[s % len(RESPONSES)]) for s in seeds)


def test_without_dynamic_sampling_the_first_round_is_the_batch() -> None:
    engine = ScriptedEngine(RESPONSES)
    batch = _sampler(engine, **{"dynamic_sampling.enabled": False}).step_batch(1, 1.0)
    assert batch.filled is None and len(engine.calls) == 1 and len(batch.idx) == 4


class _TwoProcesses:
    """Stands in for a 2-process DistContext on one process (every rank sees the whole batch)."""

    is_distributed = True
    world_size = 2

    def prompt_positions(self, n_prompts: int, updates_per_rollout: int = 1) -> list[int]:
        return list(range(n_prompts))

    def gather_rollout(self, positions: Any, comps: Any, texts: Any, results: Any) -> tuple[Any, Any, Any]:
        return [replace(c, prompt_index=positions[c.prompt_index]) for c in comps], list(texts), list(results)


def test_a_short_batch_under_several_processes_is_cut_to_split_evenly() -> None:
    # No refill rounds: only the 2 mixed groups of the first round remain, of 4 wanted.
    sampler = _sampler(ScriptedEngine(RESPONSES), dist=_TwoProcesses(), **{"dynamic_sampling.max_rounds": 0})
    batch = sampler.step_batch(1, 1.0)
    assert len(batch.idx) == 2  # a multiple of updates (1) x processes (2)
    three = _sampler(
        ScriptedEngine(RESPONSES),
        dist=_TwoProcesses(),
        **{"prompts_per_step": 4, "minibatch_prompts": 2, "dynamic_sampling.max_rounds": 0},
    )
    with pytest.raises(RuntimeError, match="updates_per_rollout x processes = 4"):
        three.step_batch(1, 1.0)
