"""Browser test of the run form with its live check, under the enforced content security policy: pick a
preset, see the warning appear next to the field it concerns, fix the values for a tiny CPU run, launch
it and watch it train to the end; the browser reports no policy violation.

The launch goes to a real Celery worker on the ``gpu`` queue (marked ``integration``: a subprocess over
Redis reading the test database), started only once the run's page is open, so every point the chart
draws arrives live: a real run of the toy task on the tiny model, judged by the real evaluator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from training.models import RunStatus, TrainingRun

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOT = "/tmp/run_form.png"


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a warm-started tiny model, the toy release) built locally, nothing downloaded."""
    import torch

    from training.tiny import build_toy_model, toy_problems, write_release

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = build_toy_model(tmp_path_factory.mktemp("toy") / "model", sft_steps=40)
    finally:
        torch.set_num_threads(previous)
    return model, write_release(toy_problems(), tmp_path_factory.mktemp("release") / "toy.jsonl")


@pytest.fixture(autouse=True)
def _csp_enforced(settings: Any) -> None:
    from webapp import settings as project_settings

    settings.CONTENT_SECURITY_POLICY = project_settings._csp_policy


def _set(page: Any, path: str, value: str) -> None:
    box = page.locator(f'.config-field[data-field="{path}"]')
    section = box.locator("xpath=ancestor::details[1]")
    if section.count() and section.get_attribute("open") is None:
        section.locator("summary").click()
    box.locator("[data-config-field]").fill(value)


@pytest.mark.integration
@pytest.mark.slow
def test_it_picks_a_preset_warns_live_and_launches_a_tiny_cpu_run(
    page_as: Any, asgi_server: Any, trainer: Any, toy: tuple[Path, Path], settings: Any, tmp_path: Path,
    start_worker: Any,
) -> None:
    settings.RUNS_DIR = tmp_path / "runs"
    model_dir, release = toy
    page = page_as(trainer)
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    response = page.goto(f"{asgi_server.url}/training/runs/new/")
    assert "script-src" in response.headers["content-security-policy"]
    assert page.locator("#apply-preset").is_hidden()  # the script applies presets in place

    # the grpo preset: its KL term goes against KL-1, and the warning appears next to kl_coef
    page.check('input[data-preset][value="grpo"]')
    kl = page.locator('.config-field[data-field="kl_coef"]')
    page.wait_for_function("() => document.querySelector('#in-f-kl_coef').value === '0.04'")
    kl.locator("[data-role=warnings] .warn").wait_for()
    assert "KL-1" in kl.locator("[data-role=warnings]").text_content()
    assert kl.locator('[data-role=warnings] a[href$="#insight-KL-1"]').count() == 1
    assert page.input_value("#preset-value") == "grpo"

    # an invalid value is reported next to its field while typing, then fixed
    _set(page, "clip.eps_low", "2")
    page.locator('.config-field[data-field="clip.eps_low"] [data-role=error]').filter(
        has_text="must be in"
    ).wait_for()
    _set(page, "clip.eps_low", "0.2")

    # the values of a tiny CPU run
    page.fill("#run-name", "browser grpo tiny")
    for path, value in {
        "model": str(model_dir),
        "dataset.release": str(release),
        "device": "cpu",
        "cpu_threads": "1",
        "max_steps": "2",
        "group_size": "4",
        "prompts_per_step": "2",
        "minibatch_prompts": "2",
        "micro_batch_size": "8",
        "max_response_length": "16",
        "max_prompt_length": "128",
        "learning_rate": "0.001",
        "checkpoint_interval": "0",
        "reward.workers": "1",
    }.items():
        _set(page, path, value)
    page.wait_for_function(
        "() => !document.getElementById('run-form').dataset.checking"
        " && document.getElementById('memory-verdict') !== null"
        " && document.getElementById('memory-verdict').textContent.includes('CPU run')"
    )
    assert "preset: grpo" in page.text_content("#resolved-yaml")
    assert "max_response_length: 16" in page.text_content("#resolved-yaml")
    page.screenshot(path=SCREENSHOT, full_page=True)

    with page.expect_navigation():
        page.click("#launch")
    run = TrainingRun.objects.get(name="browser grpo tiny")
    assert page.url.endswith(f"/training/runs/{run.pk}/")
    assert run.status == RunStatus.QUEUED and run.config["preset"] == "grpo" and run.config["kl_coef"] == 0.04
    assert any(w["field"] == "kl_coef" for w in run.warnings)
    page.wait_for_function("() => document.getElementById('live-text').textContent === 'live'")

    # Only now a worker takes the queued run: the chart's points arrive over the socket.
    start_worker("form-gpu", queues=["gpu"], env={"OMP_NUM_THREADS": "1", "MICROCODER_RUNS_DIR": str(tmp_path / "runs")})
    points = "() => Number(document.querySelector('path[data-series=\"reward\"]')?.getAttribute('data-points'))"
    page.wait_for_function(f"() => ({points})() >= 1", timeout=180_000)
    page.wait_for_function(f"() => ({points})() === 2", timeout=180_000)
    page.wait_for_function("() => document.getElementById('run-status').textContent === 'succeeded'", timeout=60_000)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.last_step == 2, run.error
    assert violations == []


def test_it_copies_the_resolved_yaml_and_loads_an_uploaded_one(
    page_as: Any, asgi_server: Any, trainer: Any, tmp_path: Path
) -> None:
    page = page_as(trainer)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=asgi_server.url)
    page.goto(f"{asgi_server.url}/training/runs/new/?preset=dapo")
    page.click("#copy-yaml")
    page.wait_for_function("() => document.getElementById('copy-yaml').dataset.copied === '1'")
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert "preset: dapo" in copied and "eps_high: 0.28" in copied

    config = tmp_path / "mine.yaml"
    config.write_text("preset: grpo\nmax_steps: 7\nclip:\n  eps_low: lots\n")
    with page.expect_navigation():
        page.set_input_files("#config-file", str(config))  # choosing the file loads it
    assert page.input_value("#in-f-max_steps") == "7"
    error = page.locator('.config-field[data-field="clip.eps_low"] [data-role=error]')
    assert "must be a number" in error.text_content() and error.is_visible()  # its section opened
