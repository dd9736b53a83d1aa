"""Multi-process training (``training.distributed``): two gloo processes under torchrun on CPU give the
same per-step rewards, losses and final weights as one process, and a killed two-process run resumes
from its sharded checkpoint to the same result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch

from training.checkpoint import DCP_DIR, JsonlLog, latest_checkpoint
from training.distributed import DistContext, kill_tree
from training.rollout.base import Completion

ROOT = Path(__file__).resolve().parents[2]
STEPS = 3
#: one sample per forward chunk and zero-advantage samples skipped: the ranks run different numbers of
#: chunks, so the padding with idle passes (DistContext.padded_chunks) is exercised
SHARED: dict[str, Any] = {"micro_batch_size": 1, "skip_zero_advantage": True}
#: per-step metrics that must agree (timings and throughput are not deterministic)
COMPARED = ("reward", "loss", "grad_norm", "entropy", "completions/mean_length", "clip_ratio/region_mean")


# --- the single-process context is the identity ------------------------------------------------------


def test_the_single_process_context_changes_nothing() -> None:
    ctx = DistContext.single()
    assert (ctx.rank, ctx.world_size, ctx.is_main, ctx.is_distributed) == (0, 1, True, False)
    assert ctx.prompt_positions(6, 2) == list(range(6))
    assert ctx.local_rows([0, 1], 3) == [0, 1, 2, 3, 4, 5]
    assert ctx.padded_chunks([[1], [2]]) == [[1], [2]]
    assert ctx.sum_floats([1.5, 2.0]) == [1.5, 2.0] and ctx.max_float(3.0) == 3.0
    assert ctx.any_true(True) and not ctx.any_true(False)
    model = torch.nn.Linear(2, 2)
    assert ctx.shard_model(model, torch.device("cpu")) is model
    engine = object()
    assert ctx.wrap_engine(engine, model) is engine
    comps = [Completion(prompt_index=i, token_ids=[i], logprobs=[0.0], truncated=False) for i in (0, 0, 1, 1)]
    glob, texts, results = ctx.gather_rollout([0, 1], comps, ["a", "b", "c", "d"], [1, 2, 3, 4])
    assert [c.prompt_index for c in glob] == [0, 0, 1, 1] and texts == ["a", "b", "c", "d"]


def test_each_rank_gets_an_even_share_of_every_minibatch() -> None:
    # 8 prompts, 2 optimizer updates of 4 prompts, 2 processes: each takes half of each update
    assert DistContext(rank=0, world_size=2).prompt_positions(8, 2) == [0, 1, 4, 5]
    assert DistContext(rank=1, world_size=2).prompt_positions(8, 2) == [2, 3, 6, 7]
    assert DistContext(rank=1, world_size=2).local_rows([2, 3], 2) == [4, 5, 6, 7]
    with pytest.raises(ValueError, match=r"multiple of updates_per_rollout x processes \(2 x 2 = 4\)"):
        DistContext(rank=0, world_size=2).prompt_positions(6, 2)


# --- one process vs two (torchrun, gloo) ----------------------------------------------------------


@dataclass(frozen=True)
class RunResult:
    metrics: list[dict[str, Any]]
    weights: dict[str, torch.Tensor]
    initial: dict[str, torch.Tensor]


def _weights(model_dir: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    out: dict[str, torch.Tensor] = {}
    for f in sorted(model_dir.glob("*.safetensors")):
        out.update(load_file(str(f)))
    return out


def _result(output_dir: Path, initial: Path) -> RunResult:
    ckpt = latest_checkpoint(output_dir)
    assert ckpt is not None
    metrics = JsonlLog(output_dir / "metrics.jsonl").read()
    return RunResult(metrics, _weights(ckpt / "model"), _weights(initial))


def _config_file(toy_config: Callable[..., Any], out: Path, **overrides: Any) -> Path:
    cfg = toy_config(
        output_dir=str(out),
        max_steps=STEPS,
        checkpoint_interval=1,
        minibatch_prompts=2,
        **{**SHARED, **overrides},
    )
    path = out.parent / f"{out.name}.yaml"
    path.write_text(cfg.to_yaml())
    return path


def _torchrun(config_path: Path, nproc: int = 2) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "TORCHELASTIC_ERROR_FILE": ""}
    cmd = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
        "-m", "training.grpo", "--config", str(config_path), "--quiet",
    ]  # fmt: skip
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _kill(proc: subprocess.Popen[str]) -> None:
    """Kill torchrun and its workers (which run in sessions of their own)."""
    kill_tree(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.fixture
def torchrun() -> Iterator[Callable[[Path], subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(config_path: Path) -> subprocess.Popen[str]:
        proc = _torchrun(config_path)
        started.append(proc)
        return proc

    yield start
    for proc in started:  # a failed assertion never leaves workers behind
        _kill(proc)


def _finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    try:
        out, err = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise
    assert proc.returncode == 0, err[-4000:]
    return dict(json.loads(out.strip().splitlines()[-1]))


@pytest.fixture
def single_run(toy_config: Callable[..., Any], toy_model_dir: Path, tmp_path: Path) -> RunResult:
    """The reference: the same config trained by one process (in this one)."""
    from training.trainer import Trainer

    out = tmp_path / "one"
    cfg = toy_config(
        output_dir=str(out), max_steps=STEPS, checkpoint_interval=1, minibatch_prompts=2, **SHARED
    )
    trainer = Trainer(cfg)
    try:
        trainer.train()
    finally:
        trainer.close()
    return _result(out, toy_model_dir)


def _assert_same(one: RunResult, two: RunResult) -> None:
    assert [m["step"] for m in two.metrics] == list(range(1, STEPS + 1))
    for a, b in zip(one.metrics, two.metrics, strict=True):
        assert a["reward"] == b["reward"], f"step {a['step']}: the two runs sampled different rollouts"
        for key in COMPARED:
            assert b[key] == pytest.approx(a[key], rel=1e-4, abs=1e-6), f"step {a['step']} {key}"
    assert set(one.weights) <= set(two.weights)
    # Adam steps by about the learning rate (1e-3) whatever the gradient's size, so float32 summation
    # noise on a near-zero gradient can move a weight by a fraction of a step: 1e-4 is 10% of one step,
    # and every weight agrees to it (most to ~1e-6) after 6 updates that moved them by ~50x more.
    for name, tensor in one.weights.items():
        torch.testing.assert_close(two.weights[name], tensor, rtol=0.0, atol=1e-4, msg=name)
    moved = max(float((one.weights[k] - one.initial[k]).abs().max()) for k in one.initial)
    assert moved > 2e-3


@pytest.mark.slow
def test_two_processes_train_exactly_like_one(
    single_run: RunResult, toy_config: Callable[..., Any], toy_model_dir: Path, torchrun: Any, tmp_path: Path
) -> None:
    out = tmp_path / "two"
    result = _finish(torchrun(_config_file(toy_config, out)))
    assert result["last_step"] == STEPS
    ckpt = latest_checkpoint(out)
    assert ckpt is not None and (ckpt / DCP_DIR / ".metadata").is_file()  # sharded: one file per rank
    assert len(list((ckpt / DCP_DIR).glob("*.distcp"))) == 2
    _assert_same(single_run, _result(out, toy_model_dir))


@pytest.mark.slow
def test_a_killed_two_process_run_resumes_from_its_sharded_checkpoint(
    single_run: RunResult, toy_config: Callable[..., Any], toy_model_dir: Path, torchrun: Any, tmp_path: Path
) -> None:
    out = tmp_path / "two"
    config_path = _config_file(toy_config, out)
    proc = torchrun(config_path)
    deadline = time.time() + 180
    while time.time() < deadline and proc.poll() is None and latest_checkpoint(out) is None:
        time.sleep(0.02)
    assert proc.poll() is None, f"the run ended before it could be killed: {proc.communicate()[1][-4000:]}"
    _kill(proc)
    ckpt = latest_checkpoint(out)
    assert ckpt is not None and int(ckpt.name.split("-")[-1]) < STEPS

    result = _finish(torchrun(config_path))
    assert result["resumed_from"] == int(ckpt.name.split("-")[-1]) and result["last_step"] == STEPS
    _assert_same(single_run, _result(out, toy_model_dir))
