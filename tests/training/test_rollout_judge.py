"""rollout_and_judge: finished samples (or groups) are judged while later ones generate, same results."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from training.config import RewardConfig
from training.rollout.fake import ScriptedEngine, script_tokens
from training.rollout_judge import rollout_and_judge

RIGHT = "```python\nprint(1)\n```"
WRONG = "```python\nprint(2)\n```"
PROBLEMS = [{"io_mode": "stdin", "tests": [{"input": f"{k}\n", "output": "1\n"}]} for k in range(4)]
PROMPTS = [[1, 2], [3], [4, 5, 6], [7]]


class FakeJudge:
    """AC when the program prints 1; records the calls and whether generation was still running."""

    def __init__(self, engine: ScriptedEngine) -> None:
        self.engine = engine
        self.calls: list[tuple[int, bool]] = []  # (cases, generation still running)
        self.started = threading.Event()
        self.fail = False

    def __call__(self, cases: Sequence[Mapping[str, Any]], **kwargs: Any) -> list[dict[str, Any]]:
        running = bool(self.engine.calls) and self.engine.calls[-1].finished == 0.0
        self.calls.append((len(cases), running))
        self.started.set()
        if self.fail:
            raise RuntimeError("sandbox exploded")
        return [
            {"verdict": "AC" if "print(1)" in c["code"] else "WA", "passed": 1, "total": 1} for c in cases
        ]


def _hold_from(group: int, judge: FakeJudge) -> Any:
    """before_group: generate groups >= ``group`` only once the judge has started."""

    def hold(i: int) -> None:
        if i >= group:
            judge.started.wait(timeout=10)

    return hold


def _distinct(out: Any) -> int:
    return len({(c.prompt_index, t) for c, t in zip(out.completions, out.texts)})


def _run(
    engine: ScriptedEngine, judge: FakeJudge, *, overlap: bool = True, seeds: list[int] | None = None
) -> Any:
    return rollout_and_judge(
        engine,
        PROMPTS,
        PROBLEMS,
        n=3,
        temperature=1.0,
        max_new_tokens=64,
        seed=5,
        sample_seeds=seeds,
        decode=ScriptedEngine.decode,
        reward_config=RewardConfig(),
        judge=judge,
        reward_from_verdict=lambda v, mode: 1.0 if v["verdict"] == "AC" else 0.0,
        overlap=overlap,
    )


def test_judging_starts_on_the_first_samples_while_later_ones_still_generate() -> None:
    engine = ScriptedEngine([script_tokens(RIGHT), script_tokens(WRONG)])
    judge = FakeJudge(engine)
    # Group 2 is generated only once the judge has started on an earlier sample.
    engine.before_group = _hold_from(2, judge)
    out = _run(engine, judge)
    assert judge.calls[0][1], "the first judge call came after generation had finished"
    assert out.samples_judged_early >= 1
    # Every distinct (problem, program) judged exactly once; repeats inside a group reuse the verdict.
    assert sum(cases for cases, _ in judge.calls) == _distinct(out)
    assert len(out.results) == 12 and _distinct(out) < 12
    assert 0.0 <= out.reward_wait_s and out.reward_s >= 0.0 and out.generate_s > 0.0


class GroupsOnly(ScriptedEngine):
    """An engine with the RolloutEngine contract alone (no on_sample): judged group by group."""

    def generate(  # type: ignore[override]
        self,
        prompts: list[list[int]],
        *,
        n: int,
        temperature: float,
        max_new_tokens: int,
        seed: int,
        sample_seeds: Sequence[int] | None = None,
        on_group: Any = None,
    ) -> Any:
        return super().generate(
            prompts,
            n=n,
            temperature=temperature,
            max_new_tokens=max_new_tokens,
            seed=seed,
            sample_seeds=sample_seeds,
            on_group=on_group,
        )


def test_an_engine_with_on_group_only_is_judged_group_by_group_during_generation() -> None:
    engine = GroupsOnly([script_tokens(RIGHT), script_tokens(WRONG)])
    judge = FakeJudge(engine)
    engine.before_group = _hold_from(2, judge)
    out = _run(engine, judge)
    first_cases, running = judge.calls[0]
    assert running and first_cases <= 6  # whole groups (0, maybe 1) while generation still ran
    assert engine.calls[0].reported == [0, 1, 2, 3]
    assert out.samples_judged_early >= 3 and sum(cases for cases, _ in judge.calls) == _distinct(out)


def test_overlapped_results_equal_judging_the_whole_batch_afterwards() -> None:
    seeds = list(range(100, 112))
    script = [script_tokens(RIGHT), script_tokens(WRONG), script_tokens("no code")]
    a = _run(ScriptedEngine(script, group_seconds=0.01), FakeJudge(ScriptedEngine(script)), seeds=seeds)
    sequential_engine = ScriptedEngine(script)
    sequential_judge = FakeJudge(sequential_engine)
    b = _run(sequential_engine, sequential_judge, overlap=False, seeds=seeds)
    assert len(sequential_judge.calls) == 1 and not sequential_judge.calls[0][1]
    assert [c.prompt_index for c in a.completions] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert a.texts == b.texts and a.results == b.results
    assert [r.reward for r in a.results] == [[1.0, 0.0, 0.0][s % 3] for s in seeds]
    assert b.reward_wait_s >= b.reward_s and b.samples_judged_early == 0


def test_an_engine_that_never_reports_groups_is_judged_after_generation() -> None:
    engine = ScriptedEngine([script_tokens(RIGHT)], report_groups=False, report_samples=False)
    judge = FakeJudge(engine)
    out = _run(engine, judge)
    assert [(cases, running) for cases, running in judge.calls] == [(4, False)]  # 4 problems, 1 program
    assert out.samples_judged_early == 0 and all(r.reward == 1.0 for r in out.results)


def test_a_judge_error_reaches_the_caller() -> None:
    engine = ScriptedEngine([script_tokens(RIGHT)])
    judge = FakeJudge(engine)
    judge.fail = True
    with pytest.raises(RuntimeError, match="sandbox exploded"):
        _run(engine, judge)


def test_a_group_reported_twice_or_a_short_batch_is_an_error() -> None:
    class Twice(GroupsOnly):
        def generate(self, prompts: list[list[int]], **kw: Any) -> Any:
            on_group = kw.pop("on_group")
            out = super().generate(prompts, on_group=on_group, **kw)
            on_group(0, out[:3])
            return out

    with pytest.raises(RuntimeError, match="twice"):
        engine = Twice([script_tokens(RIGHT)])
        _run(engine, FakeJudge(engine))

    class Short(ScriptedEngine):
        def generate(self, prompts: list[list[int]], **kw: Any) -> Any:
            return super().generate(prompts, **kw)[:-1]

    with pytest.raises(RuntimeError, match="returned 11 samples"):
        short = Short([script_tokens(RIGHT)], report_groups=False, report_samples=False)
        _run(short, FakeJudge(short))
    with pytest.raises(ValueError, match="4 prompts but 3 problems"):
        rollout_and_judge(
            ScriptedEngine([[1]]),
            PROMPTS,
            PROBLEMS[:3],
            n=1,
            temperature=1.0,
            max_new_tokens=4,
            seed=0,
            decode=ScriptedEngine.decode,
            reward_config=RewardConfig(),
        )
