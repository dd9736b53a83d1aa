"""``python -m training.evaluate`` in a subprocess, against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.openai_server import FakeOpenAIServer
from tests.training.evaluate.test_openai_source import solver
from training.tiny import toy_problems, write_release

ROOT = Path(__file__).resolve().parents[3]


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "training.evaluate", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "OPENAI_API_KEY": "test", **env},
    )


def test_it_prints_one_row_per_problem_in_input_order_and_the_summary_on_stderr(tmp_path: Path) -> None:
    problems = toy_problems()
    dates = ["2025-02-01", "2025-03-01", None, "2024-05-01"]
    rows = [{**p.to_export_dict(), "contest_date": d} for p, d in zip(problems, dates)]
    release = tmp_path / "release.jsonl"
    release.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rates = tmp_path / "rates.jsonl"
    with FakeOpenAIServer(solver) as srv:
        proc = _run(["--model", "fake-model", "--engine", "openai", "--base-url", srv.base_url,
                     "--problems", str(release), "--k", "2", "--after", "2025-01-01",
                     "--pass-rates-out", str(rates)])
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in out] == ["toy:double", "toy:increment"]
    assert set(out[0]) == {"id", "attempts", "passed", "pass@1", "pass@k", "verdicts"}
    assert out[0]["verdicts"] == ["AC", "AC"] and out[0]["pass@1"] == 1.0
    assert [json.loads(line) for line in rates.read_text().splitlines()] == [
        {"platform": "toy", "external_id": "double", "passed": 2, "attempts": 2},
        {"platform": "toy", "external_id": "increment", "passed": 2, "attempts": 2},
    ]
    assert "pass@1" in proc.stderr and "no_contest_date: 1" in proc.stderr and "before_cutoff: 1" in proc.stderr


def test_it_drops_problems_the_training_release_contains(tmp_path: Path) -> None:
    problems = toy_problems()
    release = write_release(problems, tmp_path / "eval.jsonl")
    train = write_release(problems[:1], tmp_path / "train.jsonl")
    with FakeOpenAIServer(solver) as srv:
        proc = _run(["--model", "fake-model", "--engine", "openai", "--base-url", srv.base_url,
                     "--problems", str(release), "--k", "1", "--train-release", str(train),
                     "--exclude-contaminated"])
    assert proc.returncode == 0, proc.stderr
    ids: list[Any] = [json.loads(line)["id"] for line in proc.stdout.splitlines()]
    assert "toy:double" not in ids and len(ids) == 3
    assert "1 problems excluded" in proc.stderr


def test_bad_arguments_exit_2_and_a_missing_release_exits_1(tmp_path: Path) -> None:
    bad = _run(["--model", "m", "--engine", "openai", "--problems", "x.jsonl", "--after", "yesterday"])
    assert bad.returncode == 2 and "--after must be a date" in bad.stderr
    missing = _run(["--model", "m", "--engine", "openai", "--base-url", "http://127.0.0.1:9/v1",
                    "--problems", str(tmp_path / "none.jsonl")])
    assert missing.returncode == 1 and "no such release file" in missing.stderr
