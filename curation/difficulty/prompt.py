"""The versioned prompt of the ``openai`` backend and the strict schema of its answer.

Change the text -> bump ``PROMPT_VERSION``: every stored sample records the version it was scored
with, so two versions can be compared side by side (``python -m curation.difficulty compare``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .core import DIMENSIONS, SCALE, ProblemInput, ScoreError

PROMPT_VERSION = "matrix-v1"

#: what the model sees of a reference solution / statement at most (characters), to bound tokens
MAX_STATEMENT_CHARS = 12_000
MAX_SOLUTION_CHARS = 4_000

SYSTEM_PROMPT = """\
You rate the difficulty of competitive-programming problems for curating a training set of HARD problems.
Rate the problem on five dimensions, each an integer from 1 (trivial) to 10 (hardest problems at ICPC World
Finals / Codeforces rating 3500), and justify each in one short sentence naming the evidence.

1. algorithmic_knowledge - how advanced the algorithms and data structures needed are (Bloom: remember/
   apply = 1-3: loops, sorting, hash maps; analyze = 4-6: greedy proofs, BFS/DFS, binary search, standard
   DP, heaps, union-find; evaluate/create = 7-10: segment trees, flows, FFT, advanced DP optimisations,
   suffix structures, heavy math theorems).
2. reasoning_depth - how many non-obvious steps lead from the statement to the idea (1 = the statement
   says what to compute; 5 = one key observation; 8+ = a chain of observations or a proof of optimality).
3. implementation_complexity - size and intricacy of a correct solution, as McCabe cyclomatic complexity
   and Halstead volume would measure it (1 = a few lines; 5 = ~40 lines with nested loops and several
   cases; 9+ = several hundred lines or many interacting components).
4. mathematical_content - how much mathematics is needed (1 = none; 4 = modular arithmetic, simple
   counting; 7 = combinatorics, number theory, probability/expected value; 9+ = deep theory).
5. edge_cases_constraints - how hard the constraints and corner cases make it: input sizes (n up to 10^5
   forces O(n log n), 10^18 values force overflow care and O(log n) ideas), many queries or test cases,
   negative values, empty or degenerate inputs, precision.

Rate the problem as stated, for a strong contestant, independently of any label you may remember.
Answer with JSON only, exactly this shape:
{"algorithmic_knowledge": {"score": <1-10>, "rationale": "<one sentence>"}, "reasoning_depth": {...},
 "implementation_complexity": {...}, "mathematical_content": {...}, "edge_cases_constraints": {...}}"""


def answer_schema() -> dict[str, Any]:
    """JSON Schema of an answer (sent as ``response_format`` where the endpoint supports it)."""
    dimension = {
        "type": "object",
        "properties": {
            "score": {"type": "integer", "minimum": int(SCALE[0]), "maximum": int(SCALE[1])},
            "rationale": {"type": "string", "minLength": 1},
        },
        "required": ["score", "rationale"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {d: dimension for d in DIMENSIONS},
        "required": list(DIMENSIONS),
        "additionalProperties": False,
    }


def response_format() -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": "difficulty_matrix", "strict": True, "schema": answer_schema()},
    }


def build_messages(problem: ProblemInput) -> list[dict[str, str]]:
    """The chat messages for one problem: the system prompt, then the statement, tags and (clipped)
    reference solution. Never a label or rating: ``ProblemInput`` has none."""
    parts = []
    if problem.title:
        parts.append(f"Title: {problem.title}")
    kind = (
        "a function to implement (LeetCode style)" if problem.io_mode == "call" else "a stdin/stdout program"
    )
    parts.append(f"Format: {kind}")
    parts.append("Statement:\n" + problem.statement[:MAX_STATEMENT_CHARS])
    if problem.tags:
        parts.append("Tags: " + ", ".join(problem.tags))
    if problem.solutions:
        parts.append("A reference solution:\n" + problem.solutions[0][:MAX_SOLUTION_CHARS])
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n\n".join(parts)}]


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def parse_answer(content: str | None) -> tuple[dict[str, float], dict[str, str]]:
    """Validate a model answer; returns ``(scores, rationales)``. Raises ``ScoreError`` naming what is
    wrong (not JSON, a missing or unexpected dimension, a score out of range or not a number, an empty
    rationale). A ```json fence around the object is tolerated; nothing is ever filled in."""
    if content is None or not content.strip():
        raise ScoreError("the model's answer is empty")
    text = content
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScoreError(
            f"the model's answer is not valid JSON ({exc.msg} at char {exc.pos}): {_clip(content)}"
        ) from None
    if not isinstance(data, dict):
        raise ScoreError(f"the model's answer must be a JSON object, got {type(data).__name__}")
    missing = [d for d in DIMENSIONS if d not in data]
    if missing:
        raise ScoreError(f"the model's answer misses dimension(s): {', '.join(missing)}")
    unexpected = sorted(set(data) - set(DIMENSIONS))
    if unexpected:
        raise ScoreError(f"the model's answer has unexpected field(s): {', '.join(unexpected)}")
    scores: dict[str, float] = {}
    rationales: dict[str, str] = {}
    lo, hi = SCALE
    for d in DIMENSIONS:
        item = data[d]
        if not isinstance(item, dict):
            raise ScoreError(
                f"{d} must be an object with 'score' and 'rationale', got {_clip(json.dumps(item))}"
            )
        score = item.get("score")
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise ScoreError(f"{d}.score must be a number from {lo:g} to {hi:g}, got {score!r}")
        if not lo <= float(score) <= hi:
            raise ScoreError(f"{d}.score {score!r} is outside {lo:g}..{hi:g}")
        rationale = item.get("rationale")
        if not isinstance(rationale, str) or not rationale.strip():
            raise ScoreError(f"{d}.rationale must be a non-empty string")
        scores[d] = float(score)
        rationales[d] = rationale.strip()
    return scores, rationales


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
