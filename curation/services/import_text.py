"""Text PostgreSQL refuses, found per row before anything is written.

PostgreSQL stores neither a NUL character (U+0000) in ``text``/``jsonb`` columns nor a lone UTF-16
surrogate (U+D800-U+DFFF, which JSON's ``"\\ud800"`` escapes can produce; it cannot even be encoded as
UTF-8). Such a row used to fail the whole batch, and the NUL in its reason then failed saving the
error report, leaving the batch ``running`` forever. Now:

- ``record_text_problem`` names the first field of a record that cannot be stored, so the import
  rejects that row alone with a clear reason. NUL is refused only where it would reach a text
  column: test inputs/outputs and ``extra`` are stored compressed, so a NUL there is kept (a test may
  legitimately feed a NUL byte to a program); a lone surrogate is refused everywhere.
- ``report_text`` makes any string safe to store in a report (the batch's message, a row's reason
  or external id): NUL and surrogates become visible escapes (``\\x00``, ``\\ud800``).
"""

from __future__ import annotations

import re
from typing import Any

from curation.records import ProblemRecord

_SURROGATE = re.compile("[\ud800-\udfff]")
_UNSAFE = re.compile("[\x00\ud800-\udfff]")
#: record fields stored in text columns (NUL refused too)
_COLUMN_FIELDS = ("platform", "external_id", "title", "statement", "starter_code", "fn_name", "difficulty", "url",
                  "license")


def _surrogate(value: str) -> str | None:
    if value.isascii():
        return None
    found = _SURROGATE.search(value)
    return f"a lone surrogate (U+{ord(found.group()):04X})" if found else None


def text_problem(value: str, *, nul_allowed: bool = False) -> str | None:
    """What in ``value`` PostgreSQL refuses (``"a NUL character (U+0000)"`` ...), or ``None``."""
    if not nul_allowed and "\x00" in value:
        return "a NUL character (U+0000)"
    return _surrogate(value)


def _nested_problem(value: Any, *, nul_allowed: bool) -> str | None:
    """``text_problem`` of every string (keys included) inside JSON-like ``value``."""
    if isinstance(value, str):
        return text_problem(value, nul_allowed=nul_allowed)
    if isinstance(value, dict):
        for key, item in value.items():
            found = _nested_problem(key, nul_allowed=nul_allowed) or _nested_problem(item, nul_allowed=nul_allowed)
            if found:
                return found
    elif isinstance(value, list | tuple):
        for item in value:
            found = _nested_problem(item, nul_allowed=nul_allowed)
            if found:
                return found
    return None


def record_text_problem(rec: ProblemRecord) -> str | None:
    """Why ``rec`` holds text that cannot be stored (the field and the character), or ``None``."""
    checks: list[tuple[str, Any, bool]] = [(name, getattr(rec, name), False) for name in _COLUMN_FIELDS]
    checks += [("contest_date", rec.contest_date or "", False), ("tags", rec.tags, False),
               ("checker", rec.checker, False), ("extra", rec.extra, True)]
    checks += [(f"solution {i} {part}", getattr(s, part), False)
               for i, s in enumerate(rec.solutions, start=1) for part in ("code", "language")]
    checks += [(f"test {i} {part}", getattr(t, part), True)
               for i, t in enumerate(rec.tests, start=1) for part in ("input", "output")]
    for where, value, nul_allowed in checks:
        found = _nested_problem(value, nul_allowed=nul_allowed)
        if found:
            return f"{where} contains {found}, which the database cannot store"
    return None


def report_text(value: str) -> str:
    """``value`` with NUL and lone surrogates written as visible escapes: always storable."""
    if value.isascii() and "\x00" not in value:
        return value
    return _UNSAFE.sub(lambda m: "\\x00" if m.group() == "\x00" else f"\\u{ord(m.group()):04x}", value)
