"""Fixtures of the training core tests: a tiny toy-task model built once per session (nothing downloaded)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_torch_thread() -> Iterator[None]:
    """Tiny models run many small ops: one intra-op thread is far faster than two contending ones."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def toy_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy task's warm-started tiny Qwen3 (a 'confused coder': mostly the wrong program)."""
    from training.tiny import build_toy_model

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return build_toy_model(tmp_path_factory.mktemp("toy") / "model", sft_steps=150)
    finally:
        torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def toy_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from training.tiny import toy_problems, write_release

    return write_release(toy_problems(), tmp_path_factory.mktemp("release") / "toy.jsonl")


@pytest.fixture
def toy_config(toy_model_dir: Path, toy_release: Path, tmp_path: Path) -> Callable[..., Any]:
    """``toy_config(**dotted_overrides)`` -> a small CPU GRPOConfig on the toy task."""
    from training.config import load_config

    def make(**overrides: Any) -> Any:
        base: dict[str, Any] = {
            "model": str(toy_model_dir),
            "dataset.release": str(toy_release),
            "output_dir": str(tmp_path / "run"),
            "device": "cpu",
            "cpu_threads": 1,
            "max_steps": 3,
            "group_size": 4,
            "prompts_per_step": 4,
            "minibatch_prompts": 4,  # one on-policy update per step unless a test asks for more
            "micro_batch_size": 16,
            "learning_rate": 1e-3,
            "max_response_length": 24,
            "max_prompt_length": 128,
            "temperature.value": 1.0,
            "checkpoint_interval": 0,
            "samples_per_step": -1,
            "reward.workers": 2,
        }
        base.update({k.replace("__", "."): v for k, v in overrides.items()})
        return load_config(None, base)

    return make


@pytest.fixture
def dataset(tmp_path: Path) -> str:
    """A placeholder dataset file for run configs that never reach the data loader."""
    path = tmp_path / "release.jsonl"
    path.write_text("{}\n")
    return str(path)


@pytest.fixture
def release(tmp_path: Path) -> Any:
    """The toy problems as a release in the database (the model evaluation tests)."""
    from .evaluation_support import make_release, toy_records

    return make_release(tmp_path, toy_records())


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Model evaluation task messages sent (the task itself is not run)."""
    from training import tasks_evaluation

    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(tasks_evaluation.run_model_evaluation, "apply_async", lambda **kw: sent.append(kw))
    return sent
