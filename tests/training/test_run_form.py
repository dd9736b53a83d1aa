"""The run form without JavaScript: start from a preset or a run, essentials first, warnings and errors
next to their fields, the memory plan, YAML download and upload, launch with a preset."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from training import services
from training.config import config_from_dict
from training.models import TrainingRun

URL = "/training/runs/new/"


@pytest.fixture(autouse=True)
def runs_dir(settings: Any, tmp_path: Path) -> Path:
    settings.RUNS_DIR = tmp_path / "runs"
    return settings.RUNS_DIR


def _field(html: str, path: str) -> str:
    """The HTML of one config field's block."""
    match = re.search(
        rf'<div class="config-field[^"]*" id="f-{re.escape(path)}" data-field="{re.escape(path)}">.*?'
        r'(?=<div class="config-field|</details>|</fieldset>)',
        html,
        re.S,
    )
    assert match is not None, path
    return match.group(0)


def _value(html: str, path: str) -> str:
    block = _field(html, path)
    found = (
        re.search(r'value="([^"]*)"', block)
        if "<select" not in block
        else re.search(r'<option value="([^"]*)" selected', block)
    )
    return found.group(1) if found else re.search(r"<textarea[^>]*>(.*?)</textarea>", block, re.S).group(1)  # type: ignore[union-attr]


def _post(dataset: str, action: str, **fields: str) -> dict[str, str]:
    return {
        "name": "form run",
        "release_id": "",
        "action": action,
        "model": "tiny",
        "dataset.release": dataset,
        "device": "cpu",
        **fields,
    }


def test_it_shows_the_essential_fields_first_and_folds_the_rest(client_as: Any, trainer: Any) -> None:
    html = client_as(trainer).get(URL).content.decode()
    before, folded = html.split('<details class="config-section"', 1)
    for path in (
        "model",
        "max_steps",
        "max_response_length",
        "temperature.value",
        "mask.policy",
        "mask.probability",
        "kl_coef",
        "clip.eps_low",
        "clip.eps_high",
    ):
        assert f'data-field="{path}"' in before, path
    assert 'name="release_id"' in before
    for path in ("learning_rate", "group_size", "reward.checker", "rollout.engine", "eval.k"):
        assert f'data-field="{path}"' in folded and f'data-field="{path}"' not in before, path
    assert "<details" in folded and " open>" not in folded.split("</details>", 1)[0]  # folded by default


def test_it_starts_from_a_preset(client_as: Any, trainer: Any) -> None:
    html = client_as(trainer).get(URL + "?preset=grpo").content.decode()
    assert _value(html, "kl_coef") == "0.04" and _value(html, "clip.eps_high") == "0.2"
    assert 'id="preset-value" value="grpo"' in html
    assert 'value="grpo" data-preset checked' in html
    assert "kl_coef" in _field(html, "kl_coef") and "KL-1" in _field(html, "kl_coef")  # the preset's KL warns


def test_it_refuses_an_unknown_preset_with_the_names(client_as: Any, trainer: Any) -> None:
    html = client_as(trainer).get(URL + "?preset=ppo").content.decode()
    assert "Unknown preset" in html and "grpo, dapo, microcoder" in html


def test_it_starts_from_a_previous_run_with_its_preset(client_as: Any, trainer: Any, dataset: str) -> None:
    base = services.run_create(
        name="dapo base",
        config_dict={"preset": "dapo", "model": "tiny", "dataset": {"release": dataset}},
        user=trainer,
    )
    html = client_as(trainer).get(URL + f"?from={base.pk}").content.decode()
    assert 'value="dapo base (copy)"' in html and _value(html, "model") == "tiny"
    assert 'id="preset-value" value="dapo"' in html


def test_it_shows_a_warning_next_to_its_field_with_a_link_to_the_insight(
    client_as: Any, trainer: Any, dataset: str
) -> None:
    html = (
        client_as(trainer).post(URL, _post(dataset, "check", **{"mask.probability": "0.5"})).content.decode()
    )
    block = _field(html, "mask.probability")
    assert "has-warning" in block and "already behaves like masking all" in block
    assert 'href="/training/insights/#insight-MASK-3"' in block
    assert "already behaves like masking all" not in _field(html, "kl_coef")


def test_it_shows_a_parse_error_next_to_its_field_and_opens_its_section(
    client_as: Any, trainer: Any, dataset: str
) -> None:
    html = client_as(trainer).post(URL, _post(dataset, "check", group_size="two")).content.decode()
    block = _field(html, "group_size")
    assert "has-error" in block and "must be an integer" in block
    section = html.split('id="section-run"', 1)[1].split(">", 1)[0]
    assert " open" in section
    assert _value(html, "group_size") == "two"  # the user's text is kept


def test_it_attaches_the_cores_validation_error_to_its_field(
    client_as: Any, trainer: Any, dataset: str
) -> None:
    html = client_as(trainer).post(URL, _post(dataset, "launch", **{"clip.eps_low": "2"})).content.decode()
    assert "clip.eps_low must be in (0, 1)" in _field(html, "clip.eps_low")
    assert not TrainingRun.objects.exists()


#: the 1.7B model is checkpointed by itself (memory.checkpointing_min_params): off, so the advice names it
NO_AUTO_CHECKPOINTING = {"memory.checkpointing_min_params": "0"}


def test_it_shows_the_memory_plan_with_advice(client_as: Any, trainer: Any, dataset: str) -> None:
    html = (
        client_as(trainer)
        .post(URL, _post(dataset, "check", model="Qwen/Qwen3-1.7B", device="auto", **NO_AUTO_CHECKPOINTING))
        .content.decode()
    )
    plan = html.split('id="memory-plan"', 1)[1].split('id="yaml-tools"', 1)[0]
    assert "does not fit" in plan and "gradient_checkpointing: true" in plan
    assert 'data-component="activations"' in plan
    cpu = client_as(trainer).post(URL, _post(dataset, "check", model="Qwen/Qwen3-0.6B")).content.decode()
    assert "CPU run: no GPU budget" in cpu


def test_it_downloads_the_resolved_yaml(client_as: Any, trainer: Any, dataset: str) -> None:
    response = client_as(trainer).post(URL, _post(dataset, "yaml", preset="dapo", **{"clip.eps_high": "0.3"}))
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    data = yaml.safe_load(response.content)
    assert data["preset"] == "dapo" and data["clip"]["eps_high"] == 0.3
    assert config_from_dict(data).to_dict() == data


def _upload(client: Any, content: bytes, name: str = "c.yaml") -> str:
    body = {
        "name": "",
        "action": "upload",
        "config_file": SimpleUploadedFile(name, content, "application/yaml"),
    }
    response = client.post(URL, body)
    assert response.status_code == 200
    return str(response.content.decode())


def test_it_fills_the_form_from_an_uploaded_yaml(client_as: Any, trainer: Any) -> None:
    html = _upload(client_as(trainer), b"preset: grpo\nmodel: acme/coder\nmask:\n  probability: 0.2\n")
    assert _value(html, "model") == "acme/coder" and _value(html, "mask.probability") == "0.2"
    assert _value(html, "kl_coef") == "0.04"  # from the preset named in the file
    assert 'id="preset-value" value="grpo"' in html


def test_it_reports_an_invalid_uploaded_value_next_to_its_field(client_as: Any, trainer: Any) -> None:
    html = _upload(client_as(trainer), b"max_steps: 10\nclip:\n  eps_low: lots\n")
    assert "clip.eps_low must be a number" in _field(html, "clip.eps_low")
    assert _value(html, "clip.eps_low") == "lots" and _value(html, "max_steps") == "10"


@pytest.mark.parametrize(
    "content,message",
    [
        (b"- a\n- b\n", "must be a mapping"),
        (b"max_steps: [1\n", "not valid YAML"),
        (b"max_stepz: 3\n", "unknown field(s) max_stepz"),
    ],
)
def test_it_refuses_an_unusable_uploaded_file_with_the_reason(
    client_as: Any, trainer: Any, content: bytes, message: str
) -> None:
    assert message in _upload(client_as(trainer), content)


def test_it_refuses_an_oversized_upload(client_as: Any, trainer: Any) -> None:
    assert "larger than 256 KB" in _upload(client_as(trainer), b"#" * (300 * 1024))


def test_it_launches_a_run_from_a_preset(
    client_as: Any, trainer: Any, dataset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from training import tasks

    monkeypatch.setattr(tasks.train_run, "apply_async", lambda **kw: None)
    response = client_as(trainer).post(URL, _post(dataset, "launch", preset="grpo", kl_coef="0.02"))
    run = TrainingRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "training:run-detail", args=[run.pk]
    )
    assert run.config["preset"] == "grpo" and run.config["kl_coef"] == 0.02
    assert run.config["clip"]["eps_high"] == 0.2  # the preset's value for a field the form did not send
