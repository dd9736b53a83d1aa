"""Command-line jobs draw a progress bar on a terminal and stay quiet when piped: ``manage.py
import_problems``, ``python -m evaluator batch``, ``python -m curation.difficulty score`` and
``python -m training.evaluate``. The terminal case puts the command's stderr on a pseudo-terminal."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from curation.models import ImportBatch
from tests.curation.conftest import make_record
from tests.support.openai_server import FakeOpenAIServer
from tests.support.tty import Terminal, looks_like_a_progress_bar, run_with_tty_stderr
from tests.training.evaluate.test_openai_source import solver
from training.tiny import toy_problems, write_release

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "test"}


def _piped(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=ROOT, env=ENV, input=stdin, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    path = tmp_path / "cases.jsonl"
    rows = [
        {"id": f"c{i}", "mode": "stdin", "code": f"print({i})", "tests": [{"input": "", "output": str(i)}]}
        for i in range(4)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n")
    return path


def test_the_judge_batch_shows_a_bar_on_a_terminal(cases: Path) -> None:
    rc, out, err = run_with_tty_stderr(
        [sys.executable, "-m", "evaluator", "batch", str(cases)], cwd=ROOT, env=ENV
    )
    assert rc == 0, err
    assert [json.loads(line)["verdict"] for line in out.splitlines()] == ["AC"] * 4 + ["IE"]
    assert looks_like_a_progress_bar(err) and "5/5" in err  # every case reported, the invalid line too


def test_the_judge_batch_stays_quiet_when_piped(cases: Path) -> None:
    proc = _piped([sys.executable, "-m", "evaluator", "batch", str(cases)])
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 5
    assert proc.stderr == ""


@pytest.fixture
def statements(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    rows = [{"id": f"p{i}", "statement": f"Sum {i} numbers up to 10^{i + 3}."} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_scoring_shows_a_bar_with_its_total_on_a_terminal(statements: Path) -> None:
    args = [sys.executable, "-m", "curation.difficulty", "score", "--backend", "heuristic", str(statements)]
    rc, out, err = run_with_tty_stderr(args, cwd=ROOT, env=ENV)
    assert rc == 0, err
    assert len(out.splitlines()) == 3
    assert looks_like_a_progress_bar(err) and "3/3" in err


def test_scoring_stays_quiet_when_piped(statements: Path) -> None:
    proc = _piped(
        [sys.executable, "-m", "curation.difficulty", "score", "--backend", "heuristic", str(statements)]
    )
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 3
    assert proc.stderr == ""


def _evaluate_args(tmp_path: Path, base_url: str) -> list[str]:
    release = write_release(toy_problems(), tmp_path / "release.jsonl")
    return [
        sys.executable,
        "-m",
        "training.evaluate",
        "--model",
        "fake-model",
        "--engine",
        "openai",
        "--base-url",
        base_url,
        "--problems",
        str(release),
        "--k",
        "2",
    ]


def test_model_evaluation_shows_a_bar_on_a_terminal(tmp_path: Path) -> None:
    with FakeOpenAIServer(solver) as srv:
        rc, out, err = run_with_tty_stderr(_evaluate_args(tmp_path, srv.base_url), cwd=ROOT, env=ENV)
    assert rc == 0, err
    assert len(out.splitlines()) == len(toy_problems())
    samples = 2 * len(toy_problems())  # k=2 per problem: the bar knows its total
    assert looks_like_a_progress_bar(err) and f"{samples}/{samples}" in err


def test_model_evaluation_prints_only_its_summary_when_piped(tmp_path: Path) -> None:
    with FakeOpenAIServer(solver) as srv:
        proc = _piped(_evaluate_args(tmp_path, srv.base_url))
    assert proc.returncode == 0, proc.stderr
    assert "pass@1" in proc.stderr and "\r" not in proc.stderr


# ------------------------------------------------------------ import_problems (in-process: the test DB)


def _import_file(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "problems.jsonl"
    rows = [make_record(f"p{i}").to_export_dict() for i in range(n)]
    rows[3]["title"] = ""  # one rejected row
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.django_db
def test_import_problems_shows_rows_and_rejections_on_a_terminal(tmp_path: Path) -> None:
    tty = Terminal()
    terminal: Any = os.fdopen(tty.slave, "w")
    try:
        call_command(
            "import_problems",
            "--format",
            "microcoder",
            "--batch-size",
            "4",
            str(_import_file(tmp_path, 10)),
            stdout=io.StringIO(),
            stderr=terminal,
        )
    finally:
        terminal.close()
        tty.close()
    err = tty.text()
    assert looks_like_a_progress_bar(err)
    assert "10/10" in err and "rejected=1" in err  # the JSONL's rows are counted first: a bar with an end
    assert ImportBatch.objects.get().rejected_count == 1


@pytest.mark.django_db
def test_import_problems_prints_only_the_row_errors_when_piped(tmp_path: Path) -> None:
    err = io.StringIO()
    call_command(
        "import_problems",
        "--format",
        "microcoder",
        "--batch-size",
        "4",
        str(_import_file(tmp_path, 10)),
        stdout=io.StringIO(),
        stderr=err,
    )
    assert err.getvalue() == "row 4 (p3): empty or missing title\n"


def test_judge_batch_reports_every_case_once_before_it_returns() -> None:
    from evaluator import judge_batch

    cases: list[Any] = [
        {"id": "ok", "mode": "stdin", "code": "print(1)", "tests": [{"input": "", "output": "1"}]},
        {"id": "bad"},  # malformed: decided before judging
        {"id": "wa", "mode": "stdin", "code": "print(2)", "tests": [{"input": "", "output": "1"}] * 3},
    ]
    seen: list[int] = []
    verdicts = judge_batch(cases, workers=2, on_case_done=seen.append)
    assert sorted(seen) == [0, 1, 2]
    assert [v["verdict"] for v in verdicts] == ["AC", "IE", "WA"]
