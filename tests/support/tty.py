"""Run a command with its stderr on a pseudo-terminal (a progress bar's "is this a terminal?" case)."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def open_terminal(rows: int = 24, columns: int = 120) -> tuple[int, int]:
    """A pty pair (master, slave) with a window size, as a real terminal has (a fresh pty is 0 x 0, and
    tqdm draws nothing in zero columns)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    return master, slave


class Terminal:
    """A pty whose output a thread drains as it is written: ``slave`` is the fd to hand to a writer
    (a child's stderr, or ``os.fdopen`` in this process); ``text()`` is what was written, once the
    slave side is closed."""

    def __init__(self) -> None:
        self.master, self.slave = open_terminal()
        self._chunks: list[bytes] = []
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: the writer closed its end
                return
            if not data:
                return
            self._chunks.append(data)

    def close(self) -> None:
        """Wait for the last output (the slave side must be closed by now), then close the master."""
        self._reader.join(timeout=10)
        os.close(self.master)

    def text(self) -> str:
        return b"".join(self._chunks).decode("utf-8", "replace")


def run_with_tty_stderr(
    args: Sequence[str], *, cwd: Path, env: dict[str, str], timeout: float = 120, stdin: str | None = None
) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``args`` whose stderr is a pty (so ``sys.stderr.isatty()`` is
    true in the child) while stdout stays a pipe. The pty is drained on a thread as the child writes."""
    terminal = Terminal()
    try:
        proc: Any = subprocess.Popen(
            list(args),
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=terminal.slave,
            text=True,
        )
        os.close(terminal.slave)
        out, _ = proc.communicate(stdin, timeout=timeout)
    finally:
        terminal.close()
    return proc.returncode, out, terminal.text()


def looks_like_a_progress_bar(stderr: str) -> bool:
    """tqdm's redraws: carriage returns and a ``|...|`` bar or an ``it/s``-style rate."""
    return "\r" in stderr and ("|" in stderr or "/s]" in stderr)
