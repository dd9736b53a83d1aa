"""Worker housekeeping: clean-up between solutions, and one uid per pool slot."""

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


def test_every_slot_of_a_large_pool_gets_a_uid_of_its_own() -> None:
    from evaluator.sandbox import SandboxConfig, WorkerProcess

    config = SandboxConfig()
    uids = {WorkerProcess(config, slot=i)._uid() for i in range(200)}
    assert len(uids) == 200
    assert max(uids) < 2**32 - 1
