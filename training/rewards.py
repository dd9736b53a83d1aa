"""Rewards from the evaluator: extract the program from a completion, judge it, map the verdict.

- ``extract_code``: the last complete fenced block (```python preferred over other languages), the
  body of a final unclosed fence when the model stopped on its own, or the raw completion when it has
  no fence. A truncated completion whose program was cut off has no answer (``None``): it is
  undecidable, not wrong, which matters for the truncation mask. Qwen3 ``<think>`` sections are
  dropped first (drafts inside them are not the answer).
- ``score_completions``: one evaluator case per answer, all judged in one ``judge_batch`` call; the
  verdict becomes a reward through ``evaluator.reward_from_verdict``. Identical programs for the same
  problem are judged once (GRPO groups often repeat a response). An infrastructure error (IE)
  gives ``reward=None``: the trainer leaves such samples out of the loss and of the group statistics
  and reports their share as ``eval/infra_error_rate``. A completion without an answer gets the
  verdict ``NA`` and reward 0 without being judged.

This module imports nothing from Django; the evaluator is imported lazily so tests can inject a judge.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from curation.records import ProblemRecord, evaluator_tests
from training.config import RewardConfig

#: Our own verdict for "no program found in the completion" (never produced by the evaluator).
NO_ANSWER = "NA"

Judge = Callable[..., list[dict[str, Any]]]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)```", re.DOTALL)
_OPEN_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*)\Z", re.DOTALL)
_PYTHON_TAGS = {"python", "py", "python3", "py3"}


def _strip_thinking(text: str, truncated: bool) -> str | None:
    if "</think>" in text:
        return text.rsplit("</think>", 1)[1]
    if "<think>" in text:
        # Thinking never closed: a truncated completion has no answer yet; a finished one keeps the tail.
        return None if truncated else text.split("<think>", 1)[1]
    return text


def extract_code(completion: str, *, truncated: bool = False) -> str | None:
    """The program the completion answers with, or None when there is none (see module docstring)."""
    text = _strip_thinking(completion, truncated)
    if text is None:
        return None
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    python_blocks = [body for lang, body in blocks if lang in _PYTHON_TAGS]
    tail_start = 0
    for m in _FENCE.finditer(text):
        tail_start = m.end()
    tail = text[tail_start:]
    if not truncated:
        opened = _OPEN_FENCE.search(tail)
        # A final fence the model never closed before stopping: its body is the latest answer.
        if opened is not None and (opened.group(1).lower() in _PYTHON_TAGS or not opened.group(1)):
            code = opened.group(2).strip("\n")
            if code.strip():
                return code + "\n"
    chosen = python_blocks[-1] if python_blocks else (blocks[-1][1] if blocks else None)
    if chosen is not None:
        return chosen if chosen.strip() else None
    if truncated or "```" in text:
        return None
    raw = text.strip()
    return raw + "\n" if raw else None


def _get(problem: Any, key: str, default: Any = None) -> Any:
    if isinstance(problem, Mapping):
        return problem.get(key, default)
    return getattr(problem, key, default)


def problem_tests(
    problem: ProblemRecord | Mapping[str, Any], max_tests: int | None = None
) -> list[dict[str, str]]:
    """All tests of a problem (public and hidden) as evaluator ``{"input", "output"}`` dicts."""
    tests: list[dict[str, str]] = []
    for t in _get(problem, "tests", []) or []:
        tin = t.get("input") if isinstance(t, Mapping) else t.input
        tout = t.get("output") if isinstance(t, Mapping) else t.output
        tests.append({"input": str(tin), "output": str(tout)})
    return tests[:max_tests] if max_tests else tests


def _release_test_cap(problem: ProblemRecord | Mapping[str, Any]) -> int | None:
    """The per-problem training test cap a release pinned (``extra.curation.train_test_limit``)."""
    extra = _get(problem, "extra", None) or {}
    cap = (extra.get("curation") or {}).get("train_test_limit") if isinstance(extra, Mapping) else None
    return int(cap) if isinstance(cap, int) and cap > 0 else None


def build_case(
    problem: ProblemRecord | Mapping[str, Any],
    code: str,
    *,
    case_id: str,
    checker: str = "problem",
    max_tests: int | None = None,
) -> dict[str, Any]:
    """One evaluator case for ``code`` on ``problem`` (checker 'problem' keeps the problem's own).

    Tests are capped by ``max_tests`` and by the release's per-problem training cap, whichever is
    smaller; assert-style tests are mapped to the evaluator's form by ``evaluator_tests``."""
    mode = _get(problem, "io_mode", "stdin")
    caps = [c for c in (max_tests, _release_test_cap(problem)) if c]
    tests, own_checker = evaluator_tests(
        problem_tests(problem, min(caps) if caps else None), _get(problem, "checker", None)
    )
    case: dict[str, Any] = {
        "id": case_id,
        "mode": mode,
        "code": code,
        "tests": tests,
        "time_limit_s": float(_get(problem, "time_limit_s", 2.0) or 2.0),
        "memory_mb": int(_get(problem, "memory_mb", 256) or 256),
    }
    fn_name = _get(problem, "fn_name", "")
    if mode == "call" and fn_name:
        case["fn_name"] = fn_name
    case["checker"] = own_checker if checker == "problem" else {"kind": checker}
    return case


@dataclass(frozen=True)
class RewardResult:
    """The judged outcome of one completion. ``reward`` is None for an infrastructure error."""

    reward: float | None
    verdict: str
    passed: int
    total: int
    has_code: bool


def case_key(case: Mapping[str, Any]) -> str:
    """Identity of an evaluator case for reuse: everything but its id (program, tests, limits, checker)."""
    return json.dumps({k: v for k, v in case.items() if k != "id"}, sort_keys=True, default=str)


def _default_judge() -> Judge:
    from evaluator import judge_batch

    return judge_batch


def _default_reward_fn() -> Callable[..., float | None]:
    from evaluator import reward_from_verdict

    return reward_from_verdict


def score_completions(
    problems: Sequence[ProblemRecord | Mapping[str, Any]],
    completions: Sequence[str],
    truncated: Sequence[bool],
    config: RewardConfig,
    *,
    judge: Judge | None = None,
    reward_from_verdict: Callable[..., float | None] | None = None,
    verdict_cache: dict[str, Mapping[str, Any]] | None = None,
) -> list[RewardResult]:
    """Judge every completion against its problem (``problems[i]`` for ``completions[i]``) in one batch.

    Identical (problem, program) cases are judged once; ``verdict_cache`` (``case_key`` -> verdict)
    carries verdicts across calls (infrastructure errors are never cached)."""
    if not (len(problems) == len(completions) == len(truncated)):
        raise ValueError("problems, completions and truncated must have the same length")
    judge = judge or _default_judge()
    to_reward = reward_from_verdict or _default_reward_fn()
    codes = [extract_code(c, truncated=t) for c, t in zip(completions, truncated)]
    cases = [
        build_case(p, code, case_id=str(i), checker=config.checker, max_tests=config.max_tests)
        for i, (p, code) in enumerate(zip(problems, codes))
        if code is not None
    ]
    # Identical programs for the same problem (common inside a GRPO group) are judged once; with a
    # ``verdict_cache`` also across calls (one step's overlapped judge calls share one).
    known: dict[str, Mapping[str, Any]] = verdict_cache if verdict_cache is not None else {}
    keys = {case["id"]: case_key(case) for case in cases}
    to_judge: dict[str, dict[str, Any]] = {}
    for case in cases:
        key = keys[case["id"]]
        if key not in known and key not in to_judge:
            to_judge[key] = case
    if to_judge:
        batch = list(to_judge.values())
        # Fraction rewards need every test run; pass/fail can stop at the first failing test.
        results = judge(batch, workers=config.workers, stop_on_first_failure=config.mode == "pass_fail")
        if len(results) != len(batch):
            raise RuntimeError(f"judge returned {len(results)} verdicts for {len(batch)} cases")
        fresh = dict(zip(to_judge, results))
        # An infrastructure error is not a property of the program: never reused from the cache.
        known.update({k: v for k, v in fresh.items() if str(v.get("verdict", "IE")) != "IE"})
    else:
        fresh = {}
    verdicts = {cid: fresh[key] if key in fresh else known[key] for cid, key in keys.items()}
    out = []
    for i, code in enumerate(codes):
        if code is None:
            out.append(RewardResult(reward=0.0, verdict=NO_ANSWER, passed=0, total=0, has_code=False))
            continue
        v = verdicts[str(i)]
        verdict = str(v.get("verdict", "IE"))
        reward = None if verdict == "IE" else to_reward(v, mode=config.mode)
        out.append(
            RewardResult(
                reward=None if reward is None else float(reward),
                verdict=verdict,
                passed=int(v.get("passed", 0) or 0),
                total=int(v.get("total", 0) or 0),
                has_code=True,
            )
        )
    return out


__all__ = [
    "NO_ANSWER",
    "RewardResult",
    "build_case",
    "case_key",
    "extract_code",
    "problem_tests",
    "score_completions",
]
