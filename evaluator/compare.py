"""Output checkers: ``lenient`` (the MicroCoder fallback chain), ``strict`` (LiveCodeBench-style) and
``icpc`` (the ICPC / Kattis default output validator).

Every comparison returns ``(equal, method)``; ``method`` names the comparator that accepted, or the
checker that rejected (``"lenient"``, ``"strict"``, ``"icpc"``).

``lenient`` tries, in order, stopping at the first that accepts:

1. ``exact`` -- byte-for-byte equal text;
2. ``line_end_normalized`` -- equal after CRLF/CR -> LF, trailing whitespace per line removed, and
   trailing blank lines removed;
3. ``whitespace_tokens`` -- the same whitespace-separated tokens in the same order;
4. ``float_tokens`` -- same number of tokens, pairwise equal as strings or as numbers: a token of the
   expected output written as a float (``1.5``, ``1e-7``, ``inf``, ``nan``) accepts any number within the
   absolute *or* relative tolerance (default 1e-6 each; ``inf`` only equals ``inf`` of the same sign,
   ``nan`` only ``nan``); an expected *integer* token accepts only the same integer text or a float-form
   number within the absolute tolerance (so ``3`` accepts ``3.0`` but ``1000000000`` never accepts
   ``1000000001``, which a relative tolerance would);

and for call-mode results (the value returned by the function)

1. ``exact`` -- the value's ``str()`` equals the expected text (LeetCodeDataset writes outputs that way);
2. ``structural`` -- the expected text parsed as JSON or a Python literal (else taken as a string) equals
   the value type-aware: numbers as in ``float_tokens`` (``bool`` never equals a number), strings exactly,
   lists and tuples interchangeable but element-wise in order, a set only where the expected value is a
   set (then order is free but elements and their count are not), dicts by keys then values, ``None``
   only ``None``.

No comparator ignores order or content: there is no token-set or sorted comparison, because that
accepts wrong answers (``1 2`` for ``2 1``). A problem whose answers are order-free says so by giving a
set as the expected value.

``strict`` mirrors LiveCodeBench's grader: output and expected are stripped, split into lines, each line
stripped; the line counts must match and each pair must be equal as text or as a list of
``decimal.Decimal`` tokens (so ``2.50`` = ``2.5`` but ``0.3333333`` != ``0.33333333``). In call mode the
expected text is parsed as JSON and compared with Python ``==`` after a top-level tuple becomes a list,
as LiveCodeBench does (so ``(1, 2)`` = ``[1, 2]`` but ``[(1, 2)]`` != ``[[1, 2]]``), or the value's
``str()`` must equal it.

``icpc`` implements the default output validator of the ICPC problem package format (the Kattis
``default_validator``): tokens split on ASCII whitespace; ``case_sensitive`` (default: tokens compared
case-insensitively), ``space_change_sensitive`` (default: any run of whitespace equals any other; with
the flag the whitespace must be identical, including leading and trailing), ``float_absolute_tolerance
e``, ``float_relative_tolerance e``, ``float_tolerance e`` (sets both). Without a float flag every token
is compared as a string (so ``1.0`` != ``1``). With one, a token of the *answer* that parses as a finite
float requires the output token to parse as a finite float within the absolute or the relative
tolerance (an unset tolerance accepts nothing); other tokens are compared as strings. Floats are
decimal (``1``, ``-.5``, ``2.5e-3``): hexadecimal spellings are not numbers, and a value that
overflows or underflows a double (``1e400``, ``1e-4000``) is out of range, as strtod's ERANGE.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from .calls import BigInt, Opaque, parse_expected

DEFAULT_TOLERANCE = 1e-6

_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
# The number syntax of the ICPC default validator: decimal floats with an optional exponent. Hexadecimal
# floats (``0x1p3``), which C's strtod would take, are not numbers in the format; inf/nan are rejected later.
_C_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)",
                      re.IGNORECASE)
_NONZERO_DIGIT = re.compile(r"[1-9]")
_LINE_END_WS = " \t\f\v\r"


@dataclass(frozen=True)
class Checker:
    """A parsed ``checker`` spec (see DESIGN.md section 4)."""

    kind: str = field(default="lenient", metadata={"help": "'lenient', 'strict' or 'icpc'."})
    abs_tol: float | None = field(default=DEFAULT_TOLERANCE, metadata={
        "help": "Absolute float tolerance (None = unset, only meaningful for icpc)."})
    rel_tol: float | None = field(default=DEFAULT_TOLERANCE, metadata={"help": "Relative float tolerance."})
    case_sensitive: bool = field(default=False, metadata={"help": "icpc: compare tokens case-sensitively."})
    space_change_sensitive: bool = field(default=False, metadata={
        "help": "icpc: whitespace must match exactly."})

    def __post_init__(self) -> None:
        if self.kind not in ("lenient", "strict", "icpc"):
            raise ValueError(f"checker kind {self.kind!r}: use 'lenient', 'strict' or 'icpc'")
        for name in ("abs_tol", "rel_tol"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, (int, float)) or value < 0 or math.isnan(value)):
                raise ValueError(f"{name} must be a non-negative number, got {value!r}")

    @property
    def uses_floats(self) -> bool:
        return self.abs_tol is not None or self.rel_tol is not None


def _tolerance(value: Any, name: str) -> float:
    try:
        result = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number, got {value!r}") from exc
    if result < 0 or math.isnan(result):
        raise ValueError(f"{name} must be non-negative, got {value!r}")
    return result


def parse_checker(spec: Mapping[str, Any] | Checker | None) -> Checker:
    """A ``Checker`` from a case's ``checker`` object (None = lenient). Lenient takes the same float flag
    names as icpc (``float_tolerance`` / ``float_absolute_tolerance`` / ``float_relative_tolerance``) to
    override its 1e-6 defaults. Raises ValueError on an unknown kind or flag."""
    if spec is None:
        return Checker()
    if isinstance(spec, Checker):
        return spec
    spec = dict(spec)
    kind = str(spec.pop("kind", "lenient"))
    if kind == "strict":
        if spec:
            raise ValueError(f"the strict checker takes no options, got {sorted(spec)}")
        return Checker(kind="strict", abs_tol=None, rel_tol=None)
    known = {"float_tolerance", "float_absolute_tolerance", "float_relative_tolerance", "case_sensitive",
             "space_change_sensitive"}
    unknown = set(spec) - known
    if unknown:
        raise ValueError(f"unknown checker option(s) {sorted(unknown)}; known: {sorted(known)}")
    default = DEFAULT_TOLERANCE if kind == "lenient" else None
    abs_tol: float | None = default
    rel_tol: float | None = default
    if "float_tolerance" in spec:
        abs_tol = rel_tol = _tolerance(spec["float_tolerance"], "float_tolerance")
    if "float_absolute_tolerance" in spec:
        abs_tol = _tolerance(spec["float_absolute_tolerance"], "float_absolute_tolerance")
    if "float_relative_tolerance" in spec:
        rel_tol = _tolerance(spec["float_relative_tolerance"], "float_relative_tolerance")
    if kind == "lenient" and (spec.get("case_sensitive") or spec.get("space_change_sensitive")):
        raise ValueError("case_sensitive / space_change_sensitive are icpc flags; use kind 'icpc'")
    return Checker(kind=kind, abs_tol=abs_tol, rel_tol=rel_tol,
                   case_sensitive=bool(spec.get("case_sensitive", False)),
                   space_change_sensitive=bool(spec.get("space_change_sensitive", False)))


def parse_validator_flags(flags: Sequence[str] | str) -> dict[str, Any]:
    """A checker spec from a problem package's ``validator_flags`` (``"float_tolerance 1e-6"``)."""
    words = flags.split() if isinstance(flags, str) else list(flags)
    spec: dict[str, Any] = {"kind": "icpc"}
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("case_sensitive", "space_change_sensitive"):
            spec[word] = True
            i += 1
        elif word in ("float_tolerance", "float_absolute_tolerance", "float_relative_tolerance"):
            if i + 1 >= len(words):
                raise ValueError(f"validator flag {word} needs a value")
            spec[word] = _tolerance(words[i + 1], word)
            i += 2
        else:
            raise ValueError(f"unknown validator flag {word!r}")
    return spec


# -------------------------------------------------------------------------------------- numbers
def floats_close(expected: float, actual: float, abs_tol: float | None, rel_tol: float | None) -> bool:
    """|a - e| <= abs_tol or <= rel_tol * |e|; inf equals inf of the same sign, nan only nan."""
    if math.isnan(expected):
        return math.isnan(actual)
    if math.isinf(expected) or math.isinf(actual) or math.isnan(actual):
        return expected == actual
    diff = abs(actual - expected)
    return (abs_tol is not None and diff <= abs_tol) or (rel_tol is not None and diff <= rel_tol * abs(expected))


def _number_tokens_equal(e: str, a: str, abs_tol: float | None, rel_tol: float | None) -> bool:
    if e == a:
        return True
    if not _FLOAT.fullmatch(e) or not _FLOAT.fullmatch(a):
        return False
    if _INT.fullmatch(e):
        if _INT.fullmatch(a):
            return False  # two different integer texts ("007" vs "7" may be a string answer)
        return abs_tol is not None and _decimal_within(e, a, abs_tol)
    return floats_close(float(e), float(a), abs_tol, rel_tol)


def _decimal_within(e: str, a: str, abs_tol: float) -> bool:
    """|a - e| <= abs_tol computed exactly in decimal: an integer answer is never compared through a
    float (``1e16`` must not pass for ``10000000000000001``) and no size of number raises."""
    try:
        de, da = Decimal(e), Decimal(a)
    except InvalidOperation:
        return False
    if not da.is_finite():
        return False
    ctx = _exact_context(len(e) + len(a))
    return ctx.compare(ctx.abs(ctx.subtract(da, de)), Decimal(repr(abs_tol))) <= 0


def _exact_context(digits: int) -> Context:
    """A decimal context wide enough that subtracting two tokens of these lengths is exact."""
    return Context(prec=digits + 8, Emax=MAX_EMAX, Emin=MIN_EMIN)


# ---------------------------------------------------------------------------------- text chain
def _normalize_lines(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # Per-line rstrip, not a MULTILINE ``[ \t]+$`` regex: that backtracks quadratically over a long run of
    # spaces that does not end its line (50,000 spaces took 37 s).
    return "\n".join(line.rstrip(_LINE_END_WS) for line in text.split("\n")).rstrip("\n")


def _exact(expected: str, actual: str, checker: Checker) -> bool:
    return expected == actual


def _line_end_normalized(expected: str, actual: str, checker: Checker) -> bool:
    return _normalize_lines(expected) == _normalize_lines(actual)


def _whitespace_tokens(expected: str, actual: str, checker: Checker) -> bool:
    return expected.split() == actual.split()


def _float_tokens(expected: str, actual: str, checker: Checker) -> bool:
    e_tokens, a_tokens = expected.split(), actual.split()
    if len(e_tokens) != len(a_tokens):
        return False
    return all(_number_tokens_equal(e, a, checker.abs_tol, checker.rel_tol) for e, a in zip(e_tokens, a_tokens))


#: the lenient chain for program output, in order
TEXT_CHAIN = (
    ("exact", _exact),
    ("line_end_normalized", _line_end_normalized),
    ("whitespace_tokens", _whitespace_tokens),
    ("float_tokens", _float_tokens),
)


def lenient(expected: str, actual: str, checker: Checker | None = None) -> tuple[bool, str]:
    """The fallback chain on program output."""
    checker = checker or Checker()
    for name, comparator in TEXT_CHAIN:
        if comparator(expected, actual, checker):
            return True, name
    return False, "lenient"


def _stripped_lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(token) for token in line.split()]
    except InvalidOperation:
        return None


def strict(expected: str, actual: str, checker: Checker | None = None) -> tuple[bool, str]:
    """LiveCodeBench's comparison of program output."""
    if expected == actual:
        return True, "strict"
    e_lines, a_lines = _stripped_lines(expected), _stripped_lines(actual)
    if len(e_lines) != len(a_lines):
        return False, "strict"
    for e, a in zip(e_lines, a_lines):
        if e == a:
            continue
        e_dec, a_dec = _decimals(e), _decimals(a)
        if e_dec is None or a_dec is None or e_dec != a_dec:
            return False, "strict"
    return True, "strict"


def _c_float(token: bytes) -> float | None:
    """The token as a finite double, or None: not decimal float syntax, inf/nan, or out of range. Out of
    range means what makes strtod set ERANGE: overflow to infinity, and underflow -- a value whose digits
    are not all zero that comes out as zero or subnormal (``1e-4000`` is not ``0``)."""
    text = token.decode("ascii", "replace")
    if not _C_FLOAT.fullmatch(text):
        return None
    try:
        value = float(text.split("(")[0])
    except (ValueError, OverflowError):
        return None
    if not math.isfinite(value):
        return None
    if abs(value) < sys.float_info.min:
        mantissa = re.split(r"[eE]", text, maxsplit=1)[0]
        if _NONZERO_DIGIT.search(mantissa):
            return None  # underflow
    return value


_ASCII_WS = re.compile(rb"[ \t\n\v\f\r]+")


def icpc(expected: str | bytes, actual: str | bytes, checker: Checker | None = None) -> tuple[bool, str]:
    """The ICPC default output validator (flags in ``checker``)."""
    checker = checker or Checker(kind="icpc", abs_tol=None, rel_tol=None)
    e = expected.encode("utf-8", "surrogateescape") if isinstance(expected, str) else expected
    a = actual.encode("utf-8", "surrogateescape") if isinstance(actual, str) else actual
    if checker.space_change_sensitive:
        # whitespace runs must be identical, so the token/space skeletons must line up one to one
        e_parts, a_parts = _ASCII_WS.split(e), _ASCII_WS.split(a)
        if _ASCII_WS.findall(e) != _ASCII_WS.findall(a) or len(e_parts) != len(a_parts):
            return False, "icpc"
        pairs: Iterable[tuple[bytes, bytes]] = ((x, y) for x, y in zip(e_parts, a_parts) if x or y)
    else:
        e_tokens, a_tokens = e.split(), a.split()
        if len(e_tokens) != len(a_tokens):
            return False, "icpc"
        pairs = zip(e_tokens, a_tokens)
    for judge, team in pairs:
        if checker.uses_floats:
            j = _c_float(judge)
            if j is not None:
                t = _c_float(team)
                if t is None:
                    return False, "icpc"
                diff = abs(j - t)
                if not ((checker.abs_tol is not None and diff <= checker.abs_tol)
                        or (checker.rel_tol is not None and diff <= checker.rel_tol * abs(j))):
                    return False, "icpc"
                continue
        if checker.case_sensitive:
            if judge != team:
                return False, "icpc"
        elif judge.lower() != team.lower():
            return False, "icpc"
    return True, "icpc"


def compare_output(expected: str, actual: str | bytes, checker: Checker | Mapping[str, Any] | None = None
                   ) -> tuple[bool, str]:
    """Compare a program's output with the expected output under ``checker`` (a spec or Checker)."""
    checker = parse_checker(checker) if not isinstance(checker, Checker) else checker
    if checker.kind == "icpc":
        return icpc(expected, actual, checker)
    text = actual.decode("utf-8", "replace") if isinstance(actual, bytes) else actual
    if checker.kind == "strict":
        return strict(expected, text, checker)
    return lenient(expected, text, checker)


# --------------------------------------------------------------------------------- call values
def value_text(value: Any) -> str:
    """``str()`` of a returned value, the form LeetCodeDataset's outputs are written in."""
    return value if isinstance(value, str) else str(value)


def structural_equal(expected: Any, actual: Any, checker: Checker) -> bool:
    """Type-aware equality of an expected value and a returned value (see the module docstring)."""
    if expected is None:
        return actual is None
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, int):
        if isinstance(actual, int):
            return actual == expected
        if isinstance(actual, BigInt):
            return actual.digits == str(expected)
        if isinstance(actual, float):
            # exact rational arithmetic: a float never passes for a nearby 64-bit integer, and a huge
            # expected integer cannot overflow the comparison
            return (checker.abs_tol is not None and math.isfinite(actual)
                    and abs(Fraction(actual) - expected) <= Fraction(checker.abs_tol))
        return False
    if isinstance(expected, float):
        if isinstance(actual, (int, float)):
            try:
                return floats_close(expected, float(actual), checker.abs_tol, checker.rel_tol)
            except OverflowError:
                return False
        return False
    if isinstance(expected, str):
        if isinstance(actual, BigInt):
            return actual.digits == expected.strip()
        return isinstance(actual, str) and actual == expected
    if isinstance(expected, (list, tuple)):
        return (isinstance(actual, (list, tuple)) and len(actual) == len(expected)
                and all(structural_equal(e, a, checker) for e, a in zip(expected, actual)))
    if isinstance(expected, (set, frozenset)):
        return _set_equal(expected, actual, checker)
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or len(actual) != len(expected):
            return False
        if _typed_keys(expected) != _typed_keys(actual):
            return False  # {True: 2} is not {1: 2}, although Python hashes them alike
        for key, value in expected.items():
            if key not in actual or not structural_equal(value, actual[key], checker):
                return False
        return True
    if isinstance(expected, (Opaque, BigInt)):
        return expected == actual
    return False


def _typed_keys(values: Iterable[Any]) -> set[tuple[bool, Any]]:
    """Hashable values tagged with whether they are bools (Python's ``True == 1`` must not match)."""
    return {(isinstance(v, bool), v) for v in values}


def _set_equal(expected: set[Any] | frozenset[Any], actual: Any, checker: Checker) -> bool:
    if not isinstance(actual, (set, frozenset, list, tuple)):
        return False
    items = list(actual)
    if len(items) != len(expected):
        return False
    try:
        if (set(items) == set(expected) and len(set(items)) == len(items)
                and _typed_keys(items) == _typed_keys(expected)):
            return True
    except TypeError:
        pass
    if len(items) > 2000:
        return False
    # tolerant matching (floats): each expected element claims a distinct equal element
    free = list(items)
    for e in expected:
        for i, a in enumerate(free):
            if structural_equal(e, a, checker):
                del free[i]
                break
        else:
            return False
    return True


_UNSET: Any = object()


def compare_value(expected: str, actual: Any, checker: Checker | Mapping[str, Any] | None = None,
                  parsed: Any = _UNSET) -> tuple[bool, str]:
    """Compare a call-mode result with the expected output text. ``parsed`` may carry
    ``parse_expected(expected)`` computed once per test."""
    checker = parse_checker(checker) if not isinstance(checker, Checker) else checker
    text = value_text(actual)
    if checker.kind == "icpc":
        return icpc(expected, text, checker)
    if text == expected:
        return True, "exact" if checker.kind == "lenient" else "strict"
    if checker.kind == "strict":
        # LiveCodeBench turns a top-level tuple into a list before comparing; nested tuples stay.
        candidate = list(actual) if isinstance(actual, tuple) else actual
        try:
            return bool(json.loads(expected) == candidate), "strict"
        except (ValueError, TypeError):
            return False, "strict"
    value = parse_expected(expected) if parsed is _UNSET else parsed
    if structural_equal(value, actual, checker):
        return True, "structural"
    return False, "lenient"
