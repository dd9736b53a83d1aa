"""``python -m training.grpo``: the resolved config, fix-it errors, and a killed run that resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from training.checkpoint import JsonlLog, latest_checkpoint
from training.grpo import main

ROOT = Path(__file__).resolve().parents[2]


def test_it_prints_the_resolved_config_and_the_insight_warnings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("model: /m\nkl_coef: 0.05\n")
    assert main(["--config", str(path), "--set", "mask.probability=0.2", "--print-config"]) == 0
    out = capsys.readouterr().out
    resolved = yaml.safe_load("\n".join(line for line in out.splitlines() if not line.startswith("#")))
    assert resolved["model"] == "/m" and resolved["mask"]["probability"] == 0.2
    assert resolved["clip"] == {"eps_low": 0.2, "eps_high": 0.28}
    assert "KL-1" in out


def test_an_invalid_value_exits_with_a_fix_it_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--set", "mask.policy=some", "--print-config"]) == 2
    assert "mask.policy must be one of" in capsys.readouterr().err


def test_it_lists_every_field_with_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list-fields"]) == 0
    out = capsys.readouterr().out
    assert "mask.repeat_window (int, default 128):" in out


def _cli(config_path: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "training.grpo", "--config", str(config_path), "--quiet"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_a_killed_run_resumes_from_its_last_checkpoint_without_lost_or_repeated_steps(
    toy_config: Callable[..., Any], tmp_path: Path
) -> None:
    cfg = toy_config(max_steps=8, checkpoint_interval=2)
    config_path = tmp_path / "run.yaml"
    config_path.write_text(cfg.to_yaml())
    metrics = JsonlLog(Path(cfg.output_dir) / "metrics.jsonl")

    proc = _cli(config_path)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        steps = [r["step"] for r in metrics.read()]
        if steps and steps[-1] >= 3 and latest_checkpoint(cfg.output_dir) is not None:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = [r["step"] for r in metrics.read()]
    ckpt = latest_checkpoint(cfg.output_dir)
    assert ckpt is not None and killed_at[-1] < 8

    proc = _cli(config_path)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["resumed_from"] == int(ckpt.name.split("-")[-1]) and result["last_step"] == 8
    assert [r["step"] for r in metrics.read()] == list(range(1, 9))
