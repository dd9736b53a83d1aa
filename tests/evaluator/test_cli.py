"""``python -m evaluator`` end to end, as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(PROJECT))
    return subprocess.run([sys.executable, "-m", "evaluator", *args], capture_output=True, text=True,
                          input=stdin, env=env, cwd=PROJECT, timeout=120, check=False)


def test_judge_prints_one_verdict_for_a_problem_and_a_solution_file(tmp_path: Path) -> None:
    problem = {"id": "add", "mode": "stdin", "time_limit_s": 2,
               "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "2 2\n", "output": "4\n"}]}
    (tmp_path / "problem.json").write_text(json.dumps(problem))
    (tmp_path / "sol.py").write_text("print(sum(map(int, input().split())))\n")
    proc = run_cli("judge", str(tmp_path / "problem.json"), str(tmp_path / "sol.py"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1
    verdict = json.loads(lines[0])
    assert (verdict["id"], verdict["verdict"], verdict["passed"], verdict["total"]) == ("add", "AC", 2, 2)


def test_batch_prints_one_verdict_per_line_in_order(tmp_path: Path) -> None:
    cases = [
        {"id": "a", "mode": "stdin", "code": "print(1)", "tests": [{"input": "", "output": "1"}]},
        {"id": "b", "mode": "call", "code": "def f(x):\n    return x * 2", "fn_name": "f",
         "tests": [{"input": "21", "output": "42"}]},
        {"id": "c", "mode": "stdin", "code": "print(2)", "tests": [{"input": "", "output": "1"}]},
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in cases) + "\nnot json\n")
    proc = run_cli("batch", str(path), "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    verdicts = [json.loads(line) for line in proc.stdout.strip().splitlines()]
    assert [(v["id"], v["verdict"]) for v in verdicts] == [("a", "AC"), ("b", "AC"), ("c", "WA"), (None, "IE")]


def test_compare_exits_zero_when_equal_and_prints_the_method(tmp_path: Path) -> None:
    (tmp_path / "exp").write_text("0.5 1\n")
    (tmp_path / "act").write_text("5e-1 1\r\n")
    proc = run_cli("compare", str(tmp_path / "exp"), str(tmp_path / "act"))
    assert (proc.returncode, proc.stdout.strip()) == (0, "float_tokens")


def test_compare_exits_one_when_different(tmp_path: Path) -> None:
    (tmp_path / "exp").write_text("0.5\n")
    (tmp_path / "act").write_text("0.50000001\n")
    proc = run_cli("compare", str(tmp_path / "exp"), str(tmp_path / "act"), "--checker", "strict")
    assert (proc.returncode, proc.stdout.strip()) == (1, "strict")


def test_compare_validator_flags_imply_the_icpc_checker(tmp_path: Path) -> None:
    (tmp_path / "exp").write_text("Yes 1.0\n")
    (tmp_path / "act").write_text("yes 1.0000001\n")
    assert run_cli("compare", str(tmp_path / "exp"), str(tmp_path / "act"), "float_tolerance", "1e-6").returncode == 0
    proc = run_cli("compare", str(tmp_path / "exp"), str(tmp_path / "act"), "case_sensitive")
    assert (proc.returncode, proc.stdout.strip()) == (1, "icpc")


def test_compare_jsonl_answers_every_line(tmp_path: Path) -> None:
    lines = [{"id": 1, "expected": "1 2", "actual": "1  2", "checker": {"kind": "lenient"}},
             {"id": 2, "expected": "1 2", "actual": "2 1"},
             {"id": 3, "expected": "0.1", "actual": "0.10", "checker": "strict"}]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    proc = run_cli("compare", "--jsonl", str(path))
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(x) for x in proc.stdout.strip().splitlines()] == [
        {"id": 1, "equal": True, "method": "whitespace_tokens"},
        {"id": 2, "equal": False, "method": "lenient"},
        {"id": 3, "equal": True, "method": "strict"}]


def test_a_missing_file_is_a_usage_error() -> None:
    proc = run_cli("compare", "/nonexistent/expected", "/nonexistent/actual")
    assert proc.returncode == 2 and "error" in proc.stderr
