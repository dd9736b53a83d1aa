"""The offline ``heuristic`` scorer: five dimensions from statement, reference-solution and tag features.

No network, no key, deterministic. It reads only ``ProblemInput`` (which has no label or rating
field), so the platform's own difficulty can never leak into the score that is benchmarked against it.

Each dimension is the blend of a *statement side* (text, constraints, tags) and a *code side* (the
reference solution's McCabe/Halstead/AST metrics and idioms)::

    dimension = (1 - lam) * statement_side + lam * code_side        (statement side only without code)

The three samples are three documented, reproducible "raters" that differ only in ``lam``:
index 0 balances both sides (``lam = 0.5``), index 1 leans on the statement (``0.3``), index 2 on the
code (``0.7``); index k uses the rater ``k % 3``. Their spread shows how much the two kinds of evidence
disagree. Coefficients were chosen on LeetCodeDataset v0.2.0-train (features vs Easy/Medium/Hard)
and checked on v0.3.1-test (``bench/difficulty.py``).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from functools import lru_cache

from .code_metrics import CodeFeatures, code_features
from .core import DIMENSIONS, ProblemInput, Sample, clamp
from .lexicon import concept, concepts_from_tags, concepts_from_text, level_of, math_concepts
from .statement import StatementFeatures, statement_features

PROMPT_VERSION = "heuristic-v1"
RATER_LAMBDAS = (0.5, 0.3, 0.7)


@dataclass(frozen=True)
class Evidence:
    statement: StatementFeatures
    code: CodeFeatures
    text_concepts: tuple[str, ...]  # from tags and statement
    code_concepts: tuple[str, ...]  # idioms of the reference solution


@lru_cache(maxsize=256)  # the samples of one problem are scored back to back: extract once
def extract(problem: ProblemInput) -> Evidence:
    """All features of one problem (pure function of the problem's text, code and tags)."""
    text = concepts_from_tags(problem.tags) | concepts_from_text(problem.statement)
    code = code_features(problem.solutions)
    return Evidence(statement_features(problem.statement), code, tuple(sorted(text)), code.idioms)


def _log2(x: float) -> float:
    return math.log2(1.0 + max(0.0, x))


def _names(names: tuple[str, ...] | set[str], limit: int = 3) -> str:
    ranked = sorted(names, key=lambda n: (-concept(n).level, n))
    return ", ".join(n.replace("_", " ") for n in ranked[:limit])


def _knowledge(ev: Evidence) -> tuple[float, float | None, str]:
    def side(names: set[str]) -> float:
        # the most advanced concept sets the level; each further non-basic concept adds a little
        advanced = [n for n in names if concept(n).level >= 3]
        return 1.5 + 1.6 * level_of(names) + 0.5 * min(3, max(0, len(advanced) - 1))

    text, code = set(ev.text_concepts), set(ev.code_concepts)
    why = f"concepts: {_names(text | code)}" if text | code else "no algorithmic concept beyond basic coding"
    return side(text), (side(code) if ev.code.lines else None), why


def _reasoning(ev: Evidence) -> tuple[float, float | None, str]:
    s, c = ev.statement, ev.code
    # a large input forces an efficient idea; queries and many concepts mean chained steps
    stmt = (
        1.5
        + 0.9 * max(0.0, s.size_log10 - 2)
        + 1.2 * s.queries
        + 0.7 * min(3, len(ev.text_concepts))
        + 1.0 * s.optimization  # an optimum to find and prove (Bloom: evaluate)
        - 1.0 * s.decision  # a yes/no answer
    )
    code = 0.5 + 1.3 * c.loop_depth + 0.35 * min(14, c.max_cyclomatic) + 0.8 * c.recursion
    goal = "asks for an optimum, " if s.optimization else ("a yes/no answer, " if s.decision else "")
    why = (
        f"{goal}input size up to 1e{s.size_log10:.0f}, loop depth {c.loop_depth}, "
        f"largest block McCabe {c.max_cyclomatic}" + (", recursion" if c.recursion else "")
    )
    return stmt, (code if c.lines else None), why


def _implementation(ev: Evidence) -> tuple[float, float | None, str]:
    s, c = ev.statement, ev.code
    stmt = 0.5 + 1.0 * max(0.0, _log2(s.words) - 5) + 0.8 * s.multi_part_output + 0.25 * s.constrained_values
    code = (
        1.0
        + 1.7 * max(0.0, _log2(c.lloc) - 2)
        + 0.6 * max(0.0, _log2(c.halstead_volume) - 6)
        + 0.8 * c.classes
        + 0.3 * max(0, c.functions - 1)
    )
    why = (
        f"{c.lloc} logical lines, Halstead volume {c.halstead_volume:.0f}, McCabe {c.cyclomatic}, "
        f"{c.functions} function(s), {c.classes} helper class(es)"
        if c.lines
        else f"no reference solution; statement of {s.words} words"
    )
    return stmt, (code if c.lines else None), why


def _math(ev: Evidence) -> tuple[float, float | None, str]:
    s = ev.statement
    text_math, code_math = math_concepts(set(ev.text_concepts)), math_concepts(set(ev.code_concepts))
    stmt = 1.0 + 2.0 * s.modulo + 1.6 * len(text_math) + 0.4 * max(0.0, s.value_log10 - 9)
    code = 1.0 + 2.0 * len(code_math) + 1.0 * s.modulo
    parts = []
    if s.modulo:
        parts.append("answer modulo a prime")
    if text_math | code_math:
        parts.append(_names(text_math | code_math))
    if s.value_log10 > 9:
        parts.append(f"values up to 1e{s.value_log10:.0f}")
    why = "; ".join(parts) or "no mathematical concept found"
    return stmt, (code if ev.code.lines else None), why


def _edges(ev: Evidence) -> tuple[float, float | None, str]:
    s, c = ev.statement, ev.code
    stmt = (
        1.0
        + 0.6 * s.size_log10
        + 0.25 * s.value_log10
        + 0.6 * s.negative_values
        + 0.8 * s.queries
        + 0.6 * s.test_cases
        + 0.15 * min(8, s.constrained_values)
        + (0.8 if s.small_bound else 0.0)
        + 0.3 * min(4, s.subtasks)  # each sub-task has its own limits to respect
    )
    branches = max(0, c.cyclomatic - c.loop_depth - 1)
    code = 1.5 + 0.3 * min(20, branches)
    largest = s.evidence.get("largest_bound", "")
    bits = [f"largest bound 1e{s.max_log10:.0f}" + (f" ({largest})" if largest else "")]
    if s.negative_values:
        bits.append("negative values")
    if s.queries:
        bits.append("queries")
    if s.test_cases:
        bits.append("multiple test cases")
    if s.subtasks:
        bits.append(f"{s.subtasks} sub-tasks")
    if s.small_bound:
        bits.append(f"small bound {s.small_bound} (exhaustive search expected)")
    return stmt, (code if c.lines else None), ", ".join(bits)


_DIMENSION_FNS = {
    "algorithmic_knowledge": _knowledge,
    "reasoning_depth": _reasoning,
    "implementation_complexity": _implementation,
    "mathematical_content": _math,
    "edge_cases_constraints": _edges,
}


class HeuristicScorer:
    """``backend = "heuristic"``: offline, deterministic, label-blind (see the module docstring)."""

    backend = "heuristic"
    model = "heuristic"
    prompt_version = PROMPT_VERSION

    def score_sample(self, problem: ProblemInput, *, index: int) -> Sample:
        ev = extract(problem)
        lam = RATER_LAMBDAS[index % len(RATER_LAMBDAS)]
        dims: dict[str, float] = {}
        rationales: dict[str, str] = {}
        for name in DIMENSIONS:
            stmt, code, why = _DIMENSION_FNS[name](ev)
            value = stmt if code is None else (1 - lam) * stmt + lam * code
            dims[name] = round(clamp(value), 3)
            rationales[name] = why
        raw = json.dumps(
            {
                "rater": index % len(RATER_LAMBDAS),
                "lambda": lam,
                "statement": {k: v for k, v in asdict(ev.statement).items()},
                "code": asdict(ev.code),
                "text_concepts": list(ev.text_concepts),
                "code_concepts": list(ev.code_concepts),
            },
            sort_keys=True,
        )
        return Sample(index=index, dimensions=dims, rationales=rationales, raw=raw)
