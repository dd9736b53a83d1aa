"""The worker's clean-up between solutions touches only what solutions left behind."""

from __future__ import annotations

import socket
from pathlib import Path

from evaluator._worker import Worker


def test_wiping_keeps_the_sandbox_entries_present_at_start_and_removes_solution_leftovers(tmp_path: Path) -> None:
    (tmp_path / "bound-venv" / "lib").mkdir(parents=True)  # stands for a bind mount under the private /tmp
    (tmp_path / "bound-venv" / "lib" / "site.py").write_text("x = 1\n")
    a, b = socket.socketpair()
    try:
        worker = Worker(a, {"root": str(tmp_path), "mode": "rlimit", "preimport": ()})
        (tmp_path / "s1").mkdir()
        (tmp_path / "s1" / "scratch.txt").write_text("left by a solution")
        (tmp_path / "stray.txt").write_text("left by a solution")
        worker._wipe()
    finally:
        a.close()
        b.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bound-venv"]
    assert (tmp_path / "bound-venv" / "lib" / "site.py").read_text() == "x = 1\n"
