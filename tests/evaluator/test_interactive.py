"""Interactive problems (ICPC protocol: validator and solution on pipes) and multi-pass problems."""

from __future__ import annotations

from evaluator.runner import judge_batch, judge_case

from .conftest import FAST
from .program_fixtures import (
    GUESS_INTERACTOR_PY,
    GUESS_NO_FLUSH,
    GUESS_OK,
    GUESS_SILENT,
    GUESS_TESTS,
    GUESS_WRONG,
    MULTIPASS_FIRST_ONLY,
    MULTIPASS_OK,
    MULTIPASS_VALIDATOR_PY,
    checker_spec,
)

INTERACTOR = checker_spec(GUESS_INTERACTOR_PY, "python")
C_GUESS = r'''
#include <stdio.h>
#include <string.h>
int main(void) {
    int lo = 1, hi = 1000; char reply[32];
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        printf("%d\n", mid); fflush(stdout);
        if (scanf("%31s", reply) != 1) return 1;
        if (!strcmp(reply, "correct")) return 0;
        if (!strcmp(reply, "higher")) lo = mid + 1; else hi = mid - 1;
    }
    return 0;
}
'''


def game(code: str, **extra: object) -> dict[str, object]:
    return {"id": "guess", "code": code, "tests": GUESS_TESTS, "interactive": True, "checker": INTERACTOR,
            "time_limit_s": 0.5, **extra}


def test_it_accepts_a_solution_that_plays_the_game_correctly() -> None:
    verdict = judge_case(game(GUESS_OK), config=FAST)
    assert (verdict["verdict"], verdict["passed"], verdict["method"]) == ("AC", 2, "interactive")


def test_it_accepts_a_c_solution_that_flushes() -> None:
    assert judge_case(game(C_GUESS, language="c"), config=FAST)["verdict"] == "AC"


def test_it_gives_wa_when_the_validator_rejects() -> None:
    verdict = judge_case(game(GUESS_WRONG), config=FAST)
    assert verdict["verdict"] == "WA"
    assert verdict["tests"][0]["message"] == "too many guesses"


def test_it_gives_tle_to_a_solution_that_never_flushes() -> None:
    verdict = judge_case(game(GUESS_NO_FLUSH), config=FAST)
    assert verdict["verdict"] == "TLE"


def test_it_gives_wa_to_a_silent_solution() -> None:
    verdict = judge_case(game(GUESS_SILENT), config=FAST)
    assert verdict["verdict"] == "WA"
    assert verdict["tests"][0]["message"] == "the solution stopped before guessing"


def test_it_lets_the_validators_wa_win_over_a_crash() -> None:
    crash_after_reply = "print(1, flush=True)\ninput()\nraise SystemExit(3)\n"
    quitting = checker_spec("import sys\nsys.stdin.readline()\nprint('bye', flush=True)\nsys.exit(43)\n", "python")
    verdict = judge_case(game(crash_after_reply, checker=quitting), config=FAST)
    assert verdict["verdict"] == "WA"


def test_it_gives_re_when_the_validator_accepts_but_the_solution_crashes() -> None:
    accept = checker_spec("import sys\nsys.stdin.read()\nsys.exit(42)\n", "python")
    verdict = judge_case(game("raise ValueError('boom')\n", checker=accept), config=FAST)
    assert verdict["verdict"] == "RE"


def test_it_reports_a_crashing_validator_as_a_judge_error() -> None:
    broken = checker_spec("import sys\nsys.exit(7)\n", "python")
    verdict = judge_case(game(GUESS_OK, checker=broken), config=FAST)
    assert verdict["verdict"] == "IE" and "exited with code 7" in verdict["message"]


def test_it_refuses_an_interactive_case_without_a_validator() -> None:
    verdict = judge_case({"code": GUESS_OK, "tests": GUESS_TESTS, "interactive": True}, config=FAST)
    assert verdict["verdict"] == "IE" and "need a checker program" in verdict["message"]


def multipass(code: str) -> dict[str, object]:
    return {"code": code, "tests": [{"input": "1 10\n", "output": ""}], "passes": 2,
            "checker": checker_spec(MULTIPASS_VALIDATOR_PY, "python")}


def test_it_runs_the_next_pass_with_the_validators_nextpass_file() -> None:
    ok, first_only = judge_batch([multipass(MULTIPASS_OK), multipass(MULTIPASS_FIRST_ONLY)], config=FAST)
    assert ok["verdict"] == "AC"
    assert first_only["verdict"] == "WA" and first_only["tests"][0]["message"] == "pass 2: expected 12"


def test_it_runs_interactive_multi_pass_problems() -> None:
    echo_validator = ("import sys\nk = int(open(sys.argv[1]).read())\nprint(k, flush=True)\n"
                      "ok = sys.stdin.readline().strip() == str(2 * k)\n"
                      "if ok and k < 4:\n    open(sys.argv[3] + 'nextpass.in', 'w').write(str(k * 2))\n"
                      "sys.exit(42 if ok else 43)\n")
    case = {"code": "print(2 * int(input()), flush=True)\n", "tests": [{"input": "1", "output": ""}],
            "interactive": True, "passes": 3, "checker": checker_spec(echo_validator, "python")}
    assert judge_case(case, config=FAST)["verdict"] == "AC"
    wrong = dict(case, code="k = int(input())\nprint(2 * k if k == 1 else k, flush=True)\n")
    assert judge_case(wrong, config=FAST)["verdict"] == "WA"
