"""Statement features for the offline scorer: constraint magnitudes, sub-tasks, output shape, lexicon.

Constraint magnitudes are read in every form the importers let through::

    2*10^5   2 * 10^5   2·10^5   2×10^5   2 \\cdot 10^{5}   2\\times 10^{5}   10**9   1e5   2e5
    10⁵   200000   200 000   200,000   and LeetCode's flattened superscripts "2 * 105", "109 + 7"

The last form is what LeetCodeDataset's statements hold after the HTML superscript was lost: on a
constraint line (one with ``<=``, ``≤``, ``\\le``, ``<`` ...) a bare ``10k`` with k in 3..18 (``105``,
``109``, ``1018``) is read as ``10^k``; elsewhere it stays the literal number.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_MUL = r"\s*(?:\*|·|×|x|\\cdot|\\times)\s*"
_POW = r"\s*(?:\^|\*\*)\s*\{?\s*(-?\d{1,2})\s*\}?"
#: mantissa × 10^k, 10^k, 1e5, 2.5e5 (a mantissa is optional)
_SCI = re.compile(
    rf"(?<![\w.])(?:(\d+(?:\.\d+)?){_MUL})?10{_POW}|(?<![\w.])(\d+(?:\.\d+)?)[eE]\+?(\d{{1,2}})(?![\w.])"
)
#: LeetCode's flattened superscript on a constraint line: "2 * 105", "109 + 7", "-109"
_FLAT = re.compile(rf"(?<![\w.^])(?:(\d+){_MUL})?10(1[0-8]|[3-9])(?![\w.^])")
#: plain integers with optional thousands separators: 200000, 200 000, 200,000
_PLAIN = re.compile(r"(?<![\w.^\[,])\d{1,3}(?:(?: |, ?)\d{3})+(?![\w.])|(?<![\w.^])\d+(?![\w.])")
_CONSTRAINT_LINE = re.compile(r"<=|>=|≤|≥|\\le|\\ge|\\leq|\\geq|<|>|\bat most\b|\bat least\b|\bup to\b", re.I)

_QUERIES = re.compile(r"\bquer(?:y|ies)\b", re.I)
_TESTCASES = re.compile(r"\b(?:test\s*cases?|testcases?|number of tests)\b", re.I)
_MODULO = re.compile(r"modul[oa]|\bmod\b|10\^?\{?9\}?\s*\+\s*7|109\s*\+\s*7|998244353|1000000007", re.I)
_OUTPUT_PARTS = re.compile(
    r"\b(?:if there are (?:multiple|several)|print any|output any|in the (?:second|next) line"
    r"|on the (?:second|next) line|(?:then|also) (?:print|output)|followed by)\b",
    re.I,
)
#: what the answer is: an optimum (minimum/maximum ...) asks more than a yes/no decision
_OPTIMIZE = re.compile(
    r"\b(?:minimum|maximum|minimi[sz]e|maximi[sz]e|smallest|largest|longest|shortest|fewest)\b", re.I
)
_DECIDE = re.compile(r"\breturn true\b|\btrue if\b|\bprint \"?yes\"?\b|\boutput \"?yes\"?\b", re.I)
_SUBTASK = re.compile(r"\bsub-?tasks?\s*#?\s*(\d+)", re.I)
_EXAMPLE = re.compile(r"^\s*(?:Example\s*\d*|Input|Sample Input)\b", re.I | re.M)


@dataclass(frozen=True)
class StatementFeatures:
    """What the scorer reads off the statement text (all counts, no labels)."""

    words: int
    constraint_lines: int
    constrained_values: int  # distinct numeric bounds seen on constraint lines
    max_log10: float  # log10 of the largest bound (0 when none)
    size_log10: float  # log10 of the largest bound on a length/count-like variable (n, m, length, q)
    value_log10: float  # log10 of the largest bound on values (nums[i], a_i, k ...)
    small_bound: int  # smallest "size" bound <= 25 (bitmask/backtracking territory), 0 when none
    queries: bool
    test_cases: bool
    modulo: bool
    negative_values: bool
    multi_part_output: bool
    examples: int
    optimization: bool  # asks for a minimum/maximum/longest ...
    decision: bool  # asks for true/false or yes/no
    subtasks: int  # numbered sub-tasks ("Subtask 3 (30 points)"), 0 when none
    evidence: dict[str, str] = field(default_factory=dict)


def magnitudes(text: str) -> list[float]:
    """Every numeric bound in ``text`` (see the module docstring for the forms), as floats."""
    text = text.translate(_SUPERSCRIPTS)
    out: list[float] = []
    taken: list[tuple[int, int]] = []
    constraint_line = bool(_CONSTRAINT_LINE.search(text))
    for m in _SCI.finditer(text):
        if m.group(3) is not None:  # 2e5 / 1e9
            value = float(m.group(3)) * 10 ** int(m.group(4))
        else:
            value = float(m.group(1) or 1) * 10 ** int(m.group(2))
        out.append(value)
        taken.append(m.span())
    if constraint_line:
        for m in _FLAT.finditer(text):
            if _overlaps(m.span(), taken):
                continue
            out.append(float(m.group(1) or 1) * 10 ** int(m.group(2)))
            taken.append(m.span())
    for m in _PLAIN.finditer(text):
        if _overlaps(m.span(), taken):
            continue
        out.append(float(re.sub(r"[ ,]", "", m.group(0))))
    return out


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in taken)


_SIZE_VAR = re.compile(r"\b(?:n|m|q|t|k|\w*\.length|length|len|size|number of|count)\b", re.I)
_VALUE_VAR = re.compile(r"\[\s*i\s*\]|\b[a-z]_?i\b|\bval|\bvalue|\bnums|\bweight|\bcost|\bx\b|\by\b", re.I)


def constraint_lines(statement: str) -> list[str]:
    """Lines that state a bound (the "Constraints"/"Input" part of a statement)."""
    lines = []
    for line in statement.translate(_SUPERSCRIPTS).splitlines():
        if _CONSTRAINT_LINE.search(line) and re.search(r"\d", line) and len(line) < 240:
            lines.append(line.strip())
    return lines


def statement_features(statement: str) -> StatementFeatures:
    """Features of one statement; deterministic and label-blind."""
    lines = constraint_lines(statement)
    bounds: list[float] = []
    size_bounds: list[float] = []
    value_bounds: list[float] = []
    negative = False
    for line in lines:
        values = [v for v in magnitudes(line) if v > 0]
        if not values:
            continue
        top = max(values)
        bounds.append(top)
        if re.search(r"(?:^|[\s(\[])-\s*(?:\d|10)", line):
            negative = True
        if _VALUE_VAR.search(line) and not re.search(r"\.length|\blength\b", line):
            value_bounds.append(top)
        elif _SIZE_VAR.search(line):
            size_bounds.append(top)
        else:
            value_bounds.append(top)
    small = [int(b) for b in size_bounds if 2 <= b <= 25]
    evidence: dict[str, str] = {}
    if bounds:
        i = max(range(len(bounds)), key=bounds.__getitem__)
        evidence["largest_bound"] = _short(_line_with(lines, bounds[i]))
    queries = bool(_QUERIES.search(statement))
    return StatementFeatures(
        words=len(statement.split()),
        constraint_lines=len(lines),
        constrained_values=len(set(bounds)),
        max_log10=_log(max(bounds, default=0)),
        size_log10=_log(max(size_bounds, default=0)),
        value_log10=_log(max(value_bounds, default=0)),
        small_bound=min(small, default=0),
        queries=queries,
        test_cases=bool(_TESTCASES.search(statement)),
        modulo=bool(_MODULO.search(statement)),
        negative_values=negative,
        multi_part_output=bool(_OUTPUT_PARTS.search(statement)),
        examples=len(_EXAMPLE.findall(statement)),
        optimization=bool(_OPTIMIZE.search(statement)),
        decision=bool(_DECIDE.search(statement)),
        subtasks=len({m.group(1) for m in _SUBTASK.finditer(statement)}),
        evidence=evidence,
    )


def _line_with(lines: list[str], bound: float) -> str:
    for line in lines:
        if bound in magnitudes(line):
            return line
    return ""


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _log(value: float) -> float:
    return math.log10(value) if value >= 1 else 0.0
