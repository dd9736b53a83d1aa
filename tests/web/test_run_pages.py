"""Browser tests of the run pages: live charts over the websocket, the create form's insights."""

from __future__ import annotations

import math
from typing import Any

import pytest

from training import services
from training.models import Checkpoint, RunStatus, TrainingRun

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOT = "/tmp/run_page.png"


@pytest.fixture
def run(db: object, tmp_path: Any, settings: Any, trainer: Any) -> TrainingRun:
    """A running run of the trainer persona (its owner: it may cancel it) with 120 recorded steps of
    plausible metrics, samples and a checkpoint."""
    settings.RUNS_DIR = tmp_path / "runs"
    dataset = tmp_path / "release.jsonl"
    dataset.write_text("{}\n")
    run = services.run_create(
        name="qwen3-1.7b conditional mask p=0.1",
        config_dict={"model": "Qwen/Qwen3-1.7B", "dataset": {"release": str(dataset)}, "max_steps": 300},
        user=trainer,
    )
    TrainingRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, node="gpu-node-1", attempts=1)
    steps = list(range(1, 121))
    services.metrics_bulk_record(
        run_id=run.pk,
        steps=steps,
        metrics={
            "reward": [0.2 + 0.35 * (1 - math.exp(-s / 40)) + 0.03 * math.sin(s) for s in steps],
            "reward_std": [0.4 - 0.001 * s for s in steps],
            "frac_reward_zero_std": [0.3 + 0.002 * s for s in steps],
            "completions/mean_length": [3000 + 25 * s for s in steps],
            "completions/clipped_ratio": [0.05 + 0.0008 * s for s in steps],
            "mask/conditional_masked_ratio": [0.01 + 0.0002 * s for s in steps],
            "temperature": [1.2] * len(steps),
            "temperature/stage": [0.0] * len(steps),
            "diversity": [0.72 - 0.0003 * s + 0.01 * math.cos(s / 3) for s in steps],
            "entropy": [0.9 - 0.002 * s for s in steps],
            "timing/generate_s": [40 + 0.1 * s for s in steps],
            "timing/reward_s": [8 + 0.02 * s for s in steps],
            "timing/update_s": [20.0] * len(steps),
            "eval/infra_error_rate": [0.0 if s % 17 else 0.01 for s in steps],
        },
    )
    services.samples_record(run_id=run.pk, step=120, samples=[
        {"prompt": "Read an integer and print twice the number.", "completion": "```python\nprint(2*int(input()))\n```",
         "reward": 1.0, "verdict": "AC", "length": 14},
        {"prompt": "Read an integer and print twice the number.", "completion": "```python\nprint(int(input())+1)\n```",
         "reward": 0.0, "verdict": "WA", "length": 15},
    ])
    Checkpoint.objects.create(run=run, step=100, path=f"{run.output_dir}/checkpoints/checkpoint-00000100")
    return run


def _points(page: Any, series: str) -> int:
    return int(page.get_attribute(f'path[data-series="{series}"]', "data-points"))


def test_it_updates_the_chart_live_when_a_metric_is_published(
    page_as: Any, asgi_server: Any, trainer: Any, run: TrainingRun
) -> None:
    page = page_as(trainer)
    page.goto(f"{asgi_server.url}/training/runs/{run.pk}/")
    page.wait_for_function("() => document.getElementById('live-text').textContent === 'live'")
    page.wait_for_function("() => Number(document.querySelector('path[data-series=\"reward\"]')"
                           ".getAttribute('data-points')) === 120")

    asgi_server.call(services.metrics_record, run_id=run.pk, step=121, metrics={"reward": 0.9, "diversity": 0.7})

    page.wait_for_function("() => Number(document.querySelector('path[data-series=\"reward\"]')"
                           ".getAttribute('data-points')) === 121")
    assert page.text_content("#tile-step") == "121"
    assert page.text_content("#tile-reward") == "0.9"
    page.screenshot(path=SCREENSHOT, full_page=True)


def test_it_replaces_a_replayed_step_instead_of_drawing_it_twice(
    page_as: Any, asgi_server: Any, viewer: Any, run: TrainingRun
) -> None:
    page = page_as(viewer)
    page.goto(f"{asgi_server.url}/training/runs/{run.pk}/")
    page.wait_for_function("() => document.getElementById('live-text').textContent === 'live'")
    page.wait_for_function("() => Number(document.querySelector('path[data-series=\"entropy\"]')"
                           ".getAttribute('data-points')) === 120")
    asgi_server.call(services.metrics_record, run_id=run.pk, step=120, metrics={"entropy": 2.0})
    page.wait_for_function("() => window.runCharts['entropy'].byKey['entropy'].ys[119] === 2.0")
    assert _points(page, "entropy") == 120


def test_it_shows_the_status_change_and_hides_cancel_when_the_run_ends(
    page_as: Any, asgi_server: Any, trainer: Any, run: TrainingRun
) -> None:
    page = page_as(trainer)
    page.goto(f"{asgi_server.url}/training/runs/{run.pk}/")
    page.wait_for_function("() => document.getElementById('live-text').textContent === 'live'")
    assert page.is_visible("#cancel-form") and page.is_hidden("#run-cancelling")
    asgi_server.call(services.run_cancel, run_id=run.pk)
    page.wait_for_selector("#run-cancelling", state="visible")
    assert page.is_hidden("#cancel-form")


def test_it_draws_at_most_four_points_per_pixel_column(page_as: Any, asgi_server: Any, viewer: Any, run: TrainingRun) -> None:
    page = page_as(viewer)
    page.goto(f"{asgi_server.url}/training/runs/{run.pk}/")
    drawn = page.evaluate(
        """() => {
          const box = document.createElement('div');
          box.style.width = '400px';
          document.body.appendChild(box);
          const chart = new MicroCharts.LineChart(box, {series: [{key: 'x'}]});
          const steps = [], values = [];
          for (let i = 0; i < 100000; i++) { steps.push(i); values.push(Math.sin(i / 500)); }
          chart.setSeries('x', steps, values);
          chart.render();
          return Number(box.querySelector('path[data-series="x"]').getAttribute('data-points'));
        }"""
    )
    assert 0 < drawn <= 4 * 400


def test_it_shows_the_insights_next_to_mask_probability_on_the_create_form(
    page_as: Any, asgi_server: Any, trainer: Any, db: object
) -> None:
    page = page_as(trainer)
    page.goto(f"{asgi_server.url}/training/runs/new/")
    insight = page.locator('[data-field="mask.probability"] .insight[data-insight="MASK-3"]')
    assert insight.is_visible()
    assert "0.3" in insight.text_content()


def test_a_metric_that_moves_by_a_rounding_step_draws_instead_of_freezing_the_page(
    page_as: Any, asgi_server: Any, viewer: Any, trainer: Any, tmp_path: Any, settings: Any
) -> None:
    """0.1 + 0.2 and 0.3 differ by one ulp: the axis is flat (one tick), not a loop over 1e16 ticks."""
    settings.RUNS_DIR = tmp_path / "runs"
    dataset = tmp_path / "release.jsonl"
    dataset.write_text("{}\n")
    flat = asgi_server.call(services.run_create, name="flat", user=trainer,
                            config_dict={"model": "tiny", "dataset": {"release": str(dataset)}, "max_steps": 10})
    asgi_server.call(services.metrics_bulk_record, run_id=flat.pk, steps=[1, 2, 3, 4],
                     metrics={"reward": [0.3, 0.1 + 0.2, 0.3, 0.1 + 0.2]})
    page = page_as(viewer)
    page.goto(f"{asgi_server.url}/training/runs/{flat.pk}/")
    page.wait_for_function("() => Number(document.querySelector('path[data-series=\"reward\"]')"
                           ".getAttribute('data-points')) === 4", timeout=10_000)
