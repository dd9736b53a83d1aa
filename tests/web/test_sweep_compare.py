"""Browser tests of sweeps and the comparison page.

End to end: a trainer launches a two-run sweep from the form, opens the comparison page while both runs
are still queued, and a real Celery worker on the ``gpu`` queue trains them (tiny local Qwen3, real
judge). Each run's points arrive on the page live, over its run socket (worker -> Redis channel layer ->
the test's daphne -> the browser), in the run's own colour. That test needs ``REDIS_URL`` and PostgreSQL
(the worker is a subprocess reading the test database), like the integration tests; skipped with the
reason otherwise. The others drive the page over recorded metrics, under the enforced content policy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.training.test_django_real_run import tiny_model  # noqa: F401 - the module-scoped model fixture
from training.models import RunStatus, Sweep, TrainingRun
from training.services.series import ema

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STEPS = 3
SCREENSHOT = "/tmp/sweep_compare.png"


def _points(page: Any, metric: str, run_id: int) -> int:
    return int(page.evaluate(
        "([m, id]) => { const s = window.compareCharts[m].byKey['run-' + id]; return s ? s.xs.length : 0; }",
        [metric, run_id],
    ))


@pytest.mark.integration
@pytest.mark.slow
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


# --- the page over recorded metrics (no worker) ----------------------------------------------------


@pytest.fixture
def recorded(db: object, trainer: Any, tmp_path: Path, settings: Any) -> Sweep:
    """A running two-seed sweep of the trainer: 5,000 recorded steps each (so buckets hold many points),
    run 1 with a one-step reward spike at step 2,500."""
    import math

    from training import services
    from training.services import sweeps

    settings.RUNS_DIR = tmp_path / "runs"
    dataset = tmp_path / "release.jsonl"
    dataset.write_text("{}\n")
    sweep = sweeps.sweep_create(name="seeds", base_config={"model": "tiny", "dataset": {"release": str(dataset)}},
                                seeds=[0, 1], user=trainer, launch=False)
    steps = list(range(1, 5001))
    for k, run in enumerate(sweep.runs.order_by("id")):
        reward = [0.2 + 0.1 * k + 0.3 * (1 - math.exp(-s / 1500)) for s in steps]
        if k == 0:
            reward[2499] = 5.0
        services.metrics_bulk_record(run_id=run.pk, steps=steps, metrics={
            "reward": reward, "entropy": [1.0 - 0.0001 * s for s in steps], "temperature": [1.2] * len(steps),
            "completions/clipped_ratio": [0.1 - 0.01 * k] * len(steps),
        })
    sweep.runs.update(status=RunStatus.RUNNING)
    return sweep


@pytest.fixture
def csp(settings: Any) -> None:
    from webapp import settings as project_settings

    settings.CONTENT_SECURITY_POLICY = project_settings._csp_policy


def test_the_comparison_page_overlays_runs_keeps_spikes_and_follows_them_live(
    page_as: Any, asgi_server: Any, viewer: Any, recorded: Sweep, csp: None
) -> None:
    from training import services

    first, second = recorded.runs.order_by("id")
    page = page_as(viewer)
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e.stack)))
    page.goto(f"{asgi_server.url}/training/compare/?runs={first.pk},{second.pk}")
    page.wait_for_function("() => document.getElementById('live-text').textContent === 'live'")
    buckets = page.evaluate(f"window.compareCharts.reward.buckets['run-{first.pk}']")
    assert 100 <= len(buckets["steps"]) <= 600 and sum(buckets["count"]) == 5000
    assert max(buckets["max"]) == 5.0  # the one-step spike survives in the band
    assert page.locator(f'polygon[data-band="run-{first.pk}"]').count() >= 1
    assert page.is_hidden('.chart[data-metric="eval/pass@1"]')  # no held-out set: no panel

    asgi_server.call(services.metrics_record, run_id=second.pk, step=5001, metrics={"reward": 0.95})
    page.wait_for_function(f"() => window.compareCharts.reward.buckets['run-{second.pk}'].steps.slice(-1)[0] === 5001")
    row = page.locator(f'#compare-summary tbody tr[data-run="{second.pk}"] td')
    page.wait_for_function(f"() => document.querySelector('#compare-summary tr[data-run=\"{second.pk}\"] td:nth-child(3)')"
                           ".textContent === '5001'")
    assert row.nth(4).text_content() == "0.95"  # reward final

    # sort by best reward, descending: the spiking run first; by best clipped ratio (lower is better): run 2
    page.click('#compare-summary th[data-sort="reward|best"]')
    assert page.locator("#compare-summary tbody tr").first.get_attribute("data-run") == str(first.pk)
    page.click('#compare-summary th[data-sort="completions/clipped_ratio|best"]')
    assert page.locator("#compare-summary tbody tr").first.get_attribute("data-run") == str(second.pk)

    page.uncheck(f'#compare-legend [data-run="{first.pk}"] input')
    assert page.evaluate(f"window.compareCharts.reward.byKey['run-{first.pk}'].path.style.display") == "none"
    assert violations == [] and errors == []


def test_the_sweep_page_follows_its_runs_statuses_live(
    page_as: Any, asgi_server: Any, trainer: Any, recorded: Sweep, csp: None
) -> None:
    from training import services

    first, second = recorded.runs.order_by("id")
    page = page_as(trainer)
    page.goto(f"{asgi_server.url}/training/sweeps/{recorded.pk}/")
    page.wait_for_function("() => document.getElementById('live-text').textContent === 'live'")
    assert page.text_content("#sweep-status") == "running"
    asgi_server.call(services.run_cancel, run_id=first.pk)  # running: cancel requested, still running
    TrainingRun.objects.filter(pk__in=[first.pk, second.pk]).update(status=RunStatus.QUEUED)
    asgi_server.call(services.run_cancel, run_id=second.pk)  # queued: cancelled at once
    page.wait_for_function(
        f"() => document.querySelector('tr[data-run=\"{second.pk}\"] .run-status').textContent === 'cancelled'"
    )
    assert page.text_content("#sweep-status") == "running"  # the first is still queued
