"""Hard and soft constraints of the "constraints" stage, as pure functions over ``ProblemFacts``.

A *hard* constraint that fails keeps a problem out of training (stage ``constraints_failed``); a hard
constraint that cannot be decided yet is ``pending`` (the reference solution has not been judged), and
is never reported as passed before the evaluator said so. A *soft* constraint records a quality
finding (too short a statement, no tags, hundreds of tests ...) and never fails the stage. Every
outcome carries a reason in words, shown on the problem page.

The thresholds live in the frozen ``ConstraintConfig``; ``ConstraintConfig.from_settings()`` reads
overrides from ``settings.CURATION_CONSTRAINTS`` (a dict of field -> value). Nothing here imports Django
at module level, so the checks are tested on hand-built facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

Kind = Literal["hard", "soft"]
Status = Literal["passed", "failed", "pending"]

HAS_TESTS = "has_tests"
TESTS_WELL_FORMED = "tests_well_formed"
LIMITS_VALID = "limits_valid"
REFERENCE_PASSES = "reference_passes"
STATEMENT_LENGTH = "statement_length"
TEST_COUNT = "test_count"
TAGS_PRESENT = "tags_present"
HAS_PUBLIC_EXAMPLE = "has_public_example"


@dataclass(frozen=True)
class ConstraintConfig:
    """Thresholds of the constraint stage (override via ``settings.CURATION_CONSTRAINTS``)."""

    min_statement_chars: int = field(
        default=80, metadata={"help": "Soft: a shorter statement is probably incomplete."}
    )
    max_statement_chars: int = field(
        default=12_000, metadata={"help": "Soft: a longer statement eats the prompt budget."}
    )
    min_tests: int = field(default=5, metadata={"help": "Soft: fewer tests let wrong solutions pass."})
    max_tests: int = field(
        default=100,
        metadata={
            "help": "Soft cap: with more tests only the first N are used for training (hundreds of tests "
            "per problem stall RL reward computation). Verification still runs all tests."
        },
    )
    min_time_limit_s: float = field(default=0.1, metadata={"help": "Hard: smallest valid time limit."})
    max_time_limit_s: float = field(default=60.0, metadata={"help": "Hard: largest valid time limit."})
    min_memory_mb: int = field(default=16, metadata={"help": "Hard: smallest valid memory limit."})
    max_memory_mb: int = field(default=8192, metadata={"help": "Hard: largest valid memory limit."})
    require_reference_solution: bool = field(
        default=True,
        metadata={
            "help": "Hard: a problem needs a reference solution the judge accepts. With False a problem "
            "without one passes that constraint (its tests stay unverified; the reason says so)."
        },
    )
    judge_languages: tuple[str, ...] = field(
        default=("python", "python3", "c", "cpp", "c++"),
        metadata={"help": "Languages the evaluator can run; other reference solutions are not judged."},
    )
    require_tags: bool = field(default=True, metadata={"help": "Soft: tags help balance a release."})

    def __post_init__(self) -> None:
        if not 0 <= self.min_statement_chars <= self.max_statement_chars:
            raise ValueError(
                "need 0 <= min_statement_chars <= max_statement_chars, got "
                f"{self.min_statement_chars} and {self.max_statement_chars}"
            )
        if not 1 <= self.min_tests <= self.max_tests:
            raise ValueError(f"need 1 <= min_tests <= max_tests, got {self.min_tests} and {self.max_tests}")
        if not 0 < self.min_time_limit_s <= self.max_time_limit_s:
            raise ValueError("need 0 < min_time_limit_s <= max_time_limit_s (seconds)")
        if not 0 < self.min_memory_mb <= self.max_memory_mb:
            raise ValueError("need 0 < min_memory_mb <= max_memory_mb (MiB)")
        if isinstance(self.judge_languages, str) or not self.judge_languages:
            raise ValueError("judge_languages must be a non-empty tuple of language names, e.g. ('python',)")

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ConstraintConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown constraint setting(s) {unknown}; valid: {sorted(known)}")
        values = dict(values)
        if "judge_languages" in values:
            values["judge_languages"] = tuple(values["judge_languages"])
        return cls(**values)

    @classmethod
    def from_settings(cls) -> ConstraintConfig:
        from django.conf import settings

        return cls.from_dict(dict(getattr(settings, "CURATION_CONSTRAINTS", {}) or {}))


@dataclass(frozen=True)
class SolutionFacts:
    language: str
    judged: bool  # the evaluator has returned a verdict
    verified: bool  # ... and it was AC on every test
    verdict: str = ""
    reason: str = ""


@dataclass(frozen=True)
class ProblemFacts:
    """What the checks look at. ``tests`` are ``(input, output)`` pairs of the current version."""

    io_mode: str
    fn_name: str
    statement: str
    time_limit_s: float
    memory_mb: int
    tags: tuple[str, ...]
    tests: tuple[tuple[Any, Any], ...]
    public_test_count: int
    checker_kind: str
    solutions: tuple[SolutionFacts, ...]


@dataclass(frozen=True)
class Outcome:
    name: str
    kind: Kind
    status: Status
    reason: str


def check_all(facts: ProblemFacts, config: ConstraintConfig) -> list[Outcome]:
    """Every constraint, hard first, in a stable order."""
    return [
        check_has_tests(facts),
        check_tests_well_formed(facts),
        check_limits_valid(facts, config),
        check_reference_passes(facts, config),
        check_statement_length(facts, config),
        check_test_count(facts, config),
        check_tags_present(facts, config),
        check_has_public_example(facts),
    ]


def training_test_limit(test_count: int, config: ConstraintConfig) -> int | None:
    """How many leading tests training uses: ``config.max_tests`` when capped, else ``None`` (all)."""
    return config.max_tests if test_count > config.max_tests else None


def stage_from_outcomes(outcomes: list[Outcome]) -> str:
    """``constraints_failed`` if a hard constraint failed, else ``constraints_pending`` if one is pending,
    else ``constraints_passed``. Soft outcomes never change the stage."""
    hard = [o.status for o in outcomes if o.kind == "hard"]
    if "failed" in hard:
        return "constraints_failed"
    if "pending" in hard:
        return "constraints_pending"
    return "constraints_passed"


# ------------------------------------------------------------------------------------------ hard


def check_has_tests(facts: ProblemFacts) -> Outcome:
    n = len(facts.tests)
    if n == 0:
        return Outcome(HAS_TESTS, "hard", "failed", "the problem has no tests, so no answer can be judged")
    return Outcome(HAS_TESTS, "hard", "passed", f"{n} test{'s' if n != 1 else ''}")


def check_tests_well_formed(facts: ProblemFacts) -> Outcome:
    """Strings only; a non-empty expected output; call mode needs a function name and arguments;
    the same input may not expect two different outputs (contradictory tests reject correct code)."""
    if not facts.tests:
        return Outcome(TESTS_WELL_FORMED, "hard", "failed", "no tests to check")
    if facts.io_mode == "call" and not facts.fn_name:
        return Outcome(TESTS_WELL_FORMED, "hard", "failed", "call-mode problem without a function name")
    assert_style = facts.checker_kind == "assert"
    seen: dict[str, tuple[int, str]] = {}
    for i, (inp, out) in enumerate(facts.tests, start=1):
        if not isinstance(inp, str) or not isinstance(out, str):
            return Outcome(TESTS_WELL_FORMED, "hard", "failed", f"test {i}: input and output must be text")
        if not out.strip():
            return Outcome(TESTS_WELL_FORMED, "hard", "failed", f"test {i}: empty expected output")
        if facts.io_mode == "call" and not assert_style and not inp.strip():
            return Outcome(TESTS_WELL_FORMED, "hard", "failed", f"test {i}: call-mode test without arguments")
        key = inp.strip()
        if not assert_style and key in seen and seen[key][1].strip() != out.strip():
            return Outcome(
                TESTS_WELL_FORMED, "hard", "failed",
                f"tests {seen[key][0]} and {i} have the same input but different expected outputs",
            )
        seen.setdefault(key, (i, out))
    return Outcome(TESTS_WELL_FORMED, "hard", "passed", f"all {len(facts.tests)} tests are well formed")


def check_limits_valid(facts: ProblemFacts, config: ConstraintConfig) -> Outcome:
    t, m = facts.time_limit_s, facts.memory_mb
    if not config.min_time_limit_s <= t <= config.max_time_limit_s:
        return Outcome(
            LIMITS_VALID, "hard", "failed",
            f"time limit {t:g} s is outside [{config.min_time_limit_s:g}, {config.max_time_limit_s:g}] s",
        )
    if not config.min_memory_mb <= m <= config.max_memory_mb:
        return Outcome(
            LIMITS_VALID, "hard", "failed",
            f"memory limit {m} MiB is outside [{config.min_memory_mb}, {config.max_memory_mb}] MiB",
        )
    return Outcome(LIMITS_VALID, "hard", "passed", f"time limit {t:g} s, memory limit {m} MiB")


def check_reference_passes(facts: ProblemFacts, config: ConstraintConfig) -> Outcome:
    """Passed only once the evaluator accepted a reference solution on every test; pending while a
    judgeable solution waits for its verdict; failed when every judgeable solution was rejected."""
    judgeable = [s for s in facts.solutions if s.language.lower() in config.judge_languages]
    if not judgeable:
        if not config.require_reference_solution:
            return Outcome(
                REFERENCE_PASSES, "hard", "passed",
                "no judgeable reference solution; not required by the configuration (tests unverified)",
            )
        if facts.solutions:
            langs = ", ".join(sorted({s.language for s in facts.solutions}))
            return Outcome(
                REFERENCE_PASSES, "hard", "failed",
                f"no reference solution in a judgeable language ({langs} given; "
                f"the judge runs {', '.join(config.judge_languages)})",
            )
        return Outcome(REFERENCE_PASSES, "hard", "failed", "no reference solution to verify the tests with")
    if any(s.verified for s in judgeable):
        return Outcome(REFERENCE_PASSES, "hard", "passed", "the evaluator accepted a reference solution on all tests")
    waiting = [s for s in judgeable if not s.judged]
    if waiting:
        return Outcome(
            REFERENCE_PASSES, "hard", "pending",
            f"{len(waiting)} reference solution{'s' if len(waiting) != 1 else ''} awaiting the evaluator",
        )
    worst = judgeable[0]
    detail = f": {worst.reason}" if worst.reason else ""
    return Outcome(
        REFERENCE_PASSES, "hard", "failed",
        f"the evaluator rejected every reference solution (first verdict {worst.verdict or '?'}{detail})",
    )


# ------------------------------------------------------------------------------------------ soft


def check_statement_length(facts: ProblemFacts, config: ConstraintConfig) -> Outcome:
    n = len(facts.statement.strip())
    lo, hi = config.min_statement_chars, config.max_statement_chars
    if n < lo:
        return Outcome(STATEMENT_LENGTH, "soft", "failed", f"statement has {n} characters (< {lo}); maybe incomplete")
    if n > hi:
        return Outcome(STATEMENT_LENGTH, "soft", "failed", f"statement has {n} characters (> {hi})")
    return Outcome(STATEMENT_LENGTH, "soft", "passed", f"statement has {n} characters (within [{lo}, {hi}])")


def check_test_count(facts: ProblemFacts, config: ConstraintConfig) -> Outcome:
    n = len(facts.tests)
    if n < config.min_tests:
        return Outcome(TEST_COUNT, "soft", "failed", f"{n} tests (< {config.min_tests}); wrong code may pass")
    if n > config.max_tests:
        return Outcome(
            TEST_COUNT, "soft", "failed",
            f"{n} tests (> {config.max_tests}); only the first {config.max_tests} are used for training",
        )
    return Outcome(TEST_COUNT, "soft", "passed", f"{n} tests (within [{config.min_tests}, {config.max_tests}])")


def check_tags_present(facts: ProblemFacts, config: ConstraintConfig) -> Outcome:
    if facts.tags:
        return Outcome(TAGS_PRESENT, "soft", "passed", "tags: " + ", ".join(facts.tags[:8]))
    if not config.require_tags:
        return Outcome(TAGS_PRESENT, "soft", "passed", "no tags (not required by the configuration)")
    return Outcome(TAGS_PRESENT, "soft", "failed", "no tags; the release cannot balance topics")


def check_has_public_example(facts: ProblemFacts) -> Outcome:
    if facts.public_test_count:
        return Outcome(HAS_PUBLIC_EXAMPLE, "soft", "passed", f"{facts.public_test_count} public example test(s)")
    return Outcome(HAS_PUBLIC_EXAMPLE, "soft", "failed", "no test is marked as a public example")
