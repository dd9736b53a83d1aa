"""A real MicroCoder-GRPO run through the Celery task, in-process: tiny local Qwen3, real evaluator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from training import selectors, services
from training.models import Checkpoint, RunSample, RunStatus, TrainingRun
from webapp import realtime

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from training.data import prompt_text
    from training.tiny import build_tiny_model, toy_completion, toy_problems

    texts = [prompt_text(p) for p in toy_problems()] + [toy_completion("print(2*int(input()))")]
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", texts=texts * 4, hidden_size=32,
                            num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64)


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, dict[str, Any]]]:
    events: list[tuple[str, str, dict[str, Any]]] = []
    monkeypatch.setattr(realtime, "publish", lambda group, kind, data: events.append((group, kind, data)))
    return events


def test_it_trains_a_tiny_model_through_the_task_and_streams_every_step(
    tiny_model: Path, tmp_path: Path, settings: Any, published: list[tuple[str, str, dict[str, Any]]]
) -> None:
    from training.tasks import train_run
    from training.tiny import toy_problems, write_release

    settings.RUNS_DIR = tmp_path / "runs"
    release = write_release(toy_problems(), tmp_path / "toy.jsonl")
    config = {
        "model": str(tiny_model), "dataset": {"release": str(release)}, "device": "cpu", "max_steps": 2,
        "group_size": 2, "prompts_per_step": 2, "minibatch_prompts": 2, "max_response_length": 8, "max_prompt_length": 512,
        "checkpoint_interval": 1, "samples_per_step": -1, "reward": {"workers": 1},
    }
    run = services.run_create(name="tiny", config_dict=config)

    assert train_run.apply(args=[run.pk]).get() == RunStatus.SUCCEEDED

    run.refresh_from_db()
    assert run.last_step == 2 and run.error == ""
    assert selectors.run_metric_arrays(run_id=run.pk, name="reward")[0].tolist() == [1, 2]
    assert selectors.run_metric_arrays(run_id=run.pk, name="temperature")[1].tolist() == [1.2, 1.2]
    assert {"completions/mean_length", "mask/conditional_masked_ratio", "timing/generate_s",
            "eval/infra_error_rate", "diversity"} <= set(run.latest_metrics)
    assert RunSample.objects.filter(run=run, step=2).count() == 4
    assert list(Checkpoint.objects.filter(run=run).values_list("step", flat=True)) == [1, 2]
    group = realtime.run_group(run.pk)
    assert [d["step"] for g, kind, d in published if g == group and kind == realtime.RUN_METRICS] == [1, 2]
    assert [d["step"] for g, kind, d in published if kind == realtime.RUN_SAMPLES] == [1, 2]
    assert [d["status"] for g, kind, d in published if kind == realtime.RUN_STATUS] == ["running", "succeeded"]
    assert TrainingRun.objects.get(pk=run.pk).status == RunStatus.SUCCEEDED
