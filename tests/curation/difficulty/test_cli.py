"""``python -m curation.difficulty`` end to end in a subprocess, with no database and no Django."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}  # no DJANGO_SETTINGS_MODULE, no DATABASE_URL
    return subprocess.run(
        [sys.executable, "-m", "curation.difficulty", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_scores_a_file_in_order_with_an_error_line_for_a_row_without_statement(tmp_path: Path) -> None:
    rows = [
        {
            "platform": "leetcode",
            "external_id": "a",
            "statement": "Return the sum of 1 <= n <= 10^5 numbers.",
        },
        {"id": "broken", "title": "no statement here"},
        {"id": "c", "statement": "Count paths in a graph modulo 10^9+7.", "tags": ["Graph"]},
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    proc = _run("score", "--backend", "heuristic", str(src))
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["id"] for o in out] == ["leetcode:a", "broken", "c"]
    assert "statement" in out[1]["error"] and set(out[1]) == {"id", "error"}
    assert out[0]["backend"] == "heuristic" and len(out[0]["samples"]) == 3
    assert proc.returncode == 1  # some rows are errors


def test_it_reads_stdin_and_applies_weights() -> None:
    row = json.dumps({"id": "x", "statement": "Sum 1 <= n <= 10^5 numbers."})
    proc = _run(
        "score",
        "--backend",
        "heuristic",
        "--samples",
        "1",
        "--weights",
        "edge_cases_constraints=1",
        "-",
        stdin=row + "\n",
    )
    (out,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0
    assert out["score"] == out["dimensions"]["edge_cases_constraints"]


def test_it_refuses_an_unknown_weight_with_exit_status_2() -> None:
    proc = _run("score", "--backend", "heuristic", "--weights", "speed=1", "-", stdin="")
    assert proc.returncode == 2 and "speed" in proc.stderr


def test_it_compares_two_scorings(tmp_path: Path) -> None:
    rows = [{"id": str(i), "statement": f"Given n <= 10^{i} numbers " + "and more " * i} for i in range(1, 7)]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(_run("score", "--backend", "heuristic", str(src)).stdout)
    b.write_text(_run("score", "--backend", "heuristic", "--samples", "1", str(src)).stdout)
    report = json.loads(_run("compare", str(a), str(b)).stdout)
    assert report["common"] == 6
    assert set(report["dimensions"]) >= {"reasoning_depth"}


def test_it_imports_no_django() -> None:
    code = "import sys, curation.difficulty.cli, curation.difficulty.calibrate; print(any(m.startswith('django') for m in sys.modules))"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert proc.stdout.strip() == "False"
