"""Browser test of a sweep end to end: a trainer launches a two-run sweep from the form, opens the
comparison page while both runs are still queued, and a real Celery worker on the ``gpu`` queue trains
them (tiny local Qwen3, real judge). Each run's points arrive on the page live, over its run socket
(worker -> Redis channel layer -> the test's daphne -> the browser), in the run's own colour.

Needs ``REDIS_URL`` and PostgreSQL (the worker is a subprocess reading the test database), like the
integration tests; skipped with the reason otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.training.test_django_real_run import tiny_model  # noqa: F401 - the module-scoped model fixture
from training.models import RunStatus, Sweep
from training.services.series import ema

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STEPS = 3
SCREENSHOT = "/tmp/sweep_compare.png"


def _points(page: Any, metric: str, run_id: int) -> int:
    return int(page.evaluate(
        "([m, id]) => { const s = window.compareCharts[m].byKey['run-' + id]; return s ? s.xs.length : 0; }",
        [metric, run_id],
    ))


def test_a_two_run_sweep_streams_both_runs_onto_the_comparison_page(
    page_as: Any, asgi_server: Any, trainer: Any, start_worker: Any, tiny_model: Path, tmp_path: Path,  # noqa: F811
    settings: Any,
) -> None:
    from training.config import field_paths
    from training.tiny import toy_problems, write_release

    settings.RUNS_DIR = tmp_path / "runs"
    release = write_release(toy_problems(), tmp_path / "toy.jsonl")
    base = (
        f"model: {tiny_model}\ndataset: {{release: {release}}}\ndevice: cpu\ncpu_threads: 1\nmax_steps: {STEPS}\n"
        "group_size: 2\nprompts_per_step: 2\nmax_response_length: 8\nmax_prompt_length: 512\n"
        "checkpoint_interval: 0\nsamples_per_step: 2\nreward: {workers: 1}\n"
    )
    if "minibatch_prompts" in field_paths():  # one update of the two prompts per step
        base += "minibatch_prompts: 2\n"
    page = page_as(trainer)
    page.goto(f"{asgi_server.url}/training/sweeps/new/")
    page.fill("input[name=name]", "two seeds")
    page.fill("textarea[name=base_config]", base)
    page.fill("input[name=seeds]", "0, 1")
    page.click("button#launch")
    page.wait_for_selector("#sweep-runs, #sweep-errors")
    assert page.locator("#sweep-errors").count() == 0, page.inner_text("#sweep-errors")

    sweep = Sweep.objects.get(name="two seeds")
    first, second = sweep.runs.order_by("id")
    assert (first.sweep_overrides, second.sweep_overrides) == ({"seed": 0}, {"seed": 1})
    assert {first.status, second.status} == {RunStatus.QUEUED}

    page.click("#compare-link")
    page.wait_for_selector(f'#compare-legend [data-run="{second.pk}"]')
    assert _points(page, "reward", first.pk) == _points(page, "reward", second.pk) == 0
    colours = page.evaluate(
        "(ids) => ids.map((id) => window.compareCharts.reward.byKey['run-' + id].color)", [first.pk, second.pk]
    )
    assert colours[0] != colours[1]
    page.wait_for_function("() => document.getElementById('live-text').textContent === 'live'")

    # Only now a worker takes the queued runs: every point the page shows arrives while it is open.
    start_worker("sweep-gpu", queues=["gpu"], env={"OMP_NUM_THREADS": "1", "MICROCODER_RUNS_DIR": str(tmp_path / "runs")})
    for run in (first, second):
        page.wait_for_function(
            "([id, n]) => { const s = window.compareCharts.reward.byKey['run-' + id]; return s && s.xs.length === n; }",
            arg=[run.pk, STEPS], timeout=240_000,
        )
        page.wait_for_selector(f'#compare-legend [data-run="{run.pk}"] .badge.ok', timeout=60_000)
    for run in (first, second):
        run.refresh_from_db()
        assert run.status == RunStatus.SUCCEEDED and run.last_step == STEPS, run.error
        assert _points(page, "completions/mean_length", run.pk) == STEPS
    rows = page.locator("#compare-summary tbody tr")
    assert rows.count() == 2
    assert page.locator(f'#compare-summary tbody tr[data-run="{first.pk}"] td').nth(2).text_content() == str(STEPS)
    assert page.evaluate(  # the run keeps its colour on the page's every chart
        "(id) => new Set(Object.values(window.compareCharts).map((c) => c.byKey['run-' + id].color)).size",
        first.pk,
    ) == 1
    # the smoothing control: 0 draws the recorded values, more smooths them as the server's EMA would
    entropy = f"window.compareCharts['entropy'].byKey['run-{first.pk}']"
    page.eval_on_selector("#smoothing", "(el) => { el.value = '0'; el.dispatchEvent(new Event('input')); }")
    raw = page.evaluate(f"{entropy}.ys")
    assert raw == page.evaluate(f"window.compareCharts['entropy'].buckets['run-{first.pk}'].mean")
    page.eval_on_selector("#smoothing", "(el) => { el.value = '0.9'; el.dispatchEvent(new Event('input')); }")
    assert page.evaluate(f"{entropy}.ys") == pytest.approx(ema(raw, [1] * len(raw), 0.9))
    page.screenshot(path=SCREENSHOT, full_page=True)
