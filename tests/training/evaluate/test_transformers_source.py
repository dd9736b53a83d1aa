"""The transformers source with the tiny toy model: plumbing, per-sample seeds, top-p."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from training.evaluate import EvalSettings, SampleRequest, evaluate, make_source, sample_seed
from training.evaluate.hf_source import top_p_filter

SETTINGS = EvalSettings(k=2, temperature=1.0, top_p=1.0, max_tokens=24, seed=3, judge_workers=2)


@pytest.fixture(scope="module")
def source(toy_model_dir: Path) -> Any:
    return make_source("transformers", str(toy_model_dir), device="cpu", batch_size=4)


def test_it_evaluates_the_tiny_model_on_the_toy_release(source: Any, toy_rows: list[dict[str, Any]]) -> None:
    summary = evaluate(toy_rows, source, SETTINGS)
    assert len(summary.problems) == 4
    for p in summary.problems:
        assert p.attempts + p.infra_errors == 2 and len(p.verdicts) == 2
        # IE can happen on an overloaded machine (a judge worker missing its deadline twice).
        assert set(p.verdicts) <= {"AC", "WA", "RE", "CE", "NA", "TLE", "IE"}
    # The warm-started model writes programs: at least one sample of the run reaches the judge.
    assert any(v != "NA" for p in summary.problems for v in p.verdicts)


def test_a_sample_does_not_depend_on_its_batch(source: Any) -> None:
    from training.data import prompt_text
    from training.tiny import toy_problems

    problems = toy_problems()

    def req(i: int, index: int) -> SampleRequest:
        key = f"toy:{problems[i].external_id}"
        return SampleRequest(key, index, sample_seed(3, key, index), prompt_text(problems[i]))

    batch = source.generate([req(0, 0), req(1, 0), req(2, 1), req(0, 1)], SETTINGS)
    alone = source.generate([req(2, 1)], SETTINGS)
    assert alone[0].text == batch[2].text


def test_top_p_keeps_the_smallest_set_reaching_p() -> None:
    probs = torch.tensor([[0.5, 0.3, 0.15, 0.05]])
    assert (top_p_filter(probs, 0.75) > 0).tolist() == [[True, True, False, False]]
    assert (top_p_filter(probs, 0.85) > 0).tolist() == [[True, True, True, False]]
    assert (top_p_filter(probs, 0.4) > 0).tolist() == [[True, False, False, False]]
    assert top_p_filter(probs, 1.0) is probs


def test_the_vllm_engine_refuses_a_machine_without_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="CUDA"):
        make_source("vllm", "any-model")
    assert "vllm" not in sys.modules


def test_it_renders_the_prompt_training_renders(source: Any) -> None:
    from training.config import PromptConfig
    from training.data import prompt_text, render_prompt
    from training.tiny import toy_problems

    problem = toy_problems()[0]
    request = SampleRequest("toy:double", 0, 1, prompt_text(problem))
    assert source.render(request) == render_prompt(source.tokenizer, prompt_text(problem), PromptConfig())
