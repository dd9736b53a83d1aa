"""The rollout engines: the transformers engine on the tiny model, the vLLM engine's CPU-side behaviour."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from training.loss import selective_log_softmax
from training.rollout import TransformersEngine, make_engine
from training.rollout.hf import lm_forward


@pytest.fixture(scope="module")
def policy(toy_model_dir: Path) -> tuple[torch.nn.Module, object]:
    from transformers import AutoTokenizer

    from training.trainer import load_causal_lm

    return load_causal_lm(
        str(toy_model_dir), torch.float32, torch.device("cpu")
    ), AutoTokenizer.from_pretrained(toy_model_dir)


def _engine(policy: tuple[torch.nn.Module, object]) -> TransformersEngine:
    model, tok = policy
    pad, eos = tok.pad_token_id, tok.eos_token_id  # type: ignore[attr-defined]
    return TransformersEngine(model, pad_token_id=pad, eos_token_ids=[eos])


PROMPTS = [[5, 6, 7, 8, 9], [10, 11], [12, 13, 14]]


def test_it_returns_n_samples_per_prompt_in_prompt_order(policy: tuple[torch.nn.Module, object]) -> None:
    out = _engine(policy).generate(PROMPTS, n=3, temperature=1.0, max_new_tokens=6, seed=0)
    assert [c.prompt_index for c in out] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert all(len(c.logprobs) == c.length <= 6 for c in out)


def test_logprobs_are_those_of_the_sampling_temperature(policy: tuple[torch.nn.Module, object]) -> None:
    model, _ = policy
    temperature = 1.7
    out = _engine(policy).generate(PROMPTS, n=2, temperature=temperature, max_new_tokens=8, seed=3)
    for c in out:
        if not c.length:
            continue
        prompt = PROMPTS[c.prompt_index]
        ids = torch.tensor([prompt + c.token_ids])
        with torch.no_grad():
            logits = lm_forward(model, ids, torch.ones_like(ids), torch.arange(ids.shape[1])[None])
        full = selective_log_softmax(
            logits[:, len(prompt) - 1 : -1], torch.tensor([c.token_ids]), temperature
        )
        assert full[0].tolist() == pytest.approx(c.logprobs, abs=1e-4)


def test_a_response_stops_at_eos_and_only_a_capped_one_is_truncated(
    policy: tuple[torch.nn.Module, object],
) -> None:
    _, tok = policy
    eos = tok.eos_token_id  # type: ignore[attr-defined]
    out = _engine(policy).generate(PROMPTS, n=4, temperature=1.0, max_new_tokens=24, seed=1)
    for c in out:
        if c.truncated:
            assert c.length == 24 and eos not in c.token_ids
        else:
            assert c.token_ids[-1] == eos and eos not in c.token_ids[:-1]
    assert any(not c.truncated for c in out)
    capped = _engine(policy).generate(PROMPTS, n=2, temperature=1.0, max_new_tokens=2, seed=1)
    assert all(c.truncated and c.length == 2 for c in capped if eos not in c.token_ids)


def test_the_same_seed_gives_the_same_samples_and_batching_does_not_change_them(
    policy: tuple[torch.nn.Module, object],
) -> None:
    a = _engine(policy).generate(PROMPTS, n=2, temperature=1.2, max_new_tokens=10, seed=7)
    b = _engine(policy).generate(PROMPTS, n=2, temperature=1.2, max_new_tokens=10, seed=7)
    assert [c.token_ids for c in a] == [c.token_ids for c in b]
    c = _engine(policy).generate(PROMPTS, n=2, temperature=1.2, max_new_tokens=10, seed=8)
    assert [x.token_ids for x in a] != [x.token_ids for x in c]


def test_dropping_finished_rows_changes_neither_samples_nor_logprobs(
    policy: tuple[torch.nn.Module, object],
) -> None:
    lazy = _engine(policy)
    lazy.compact_fraction = 2.0  # never drop finished rows
    eager = _engine(policy)
    eager.compact_fraction = 0.0  # drop them as soon as one finishes
    a = lazy.generate(PROMPTS, n=4, temperature=1.0, max_new_tokens=24, seed=2)
    b = eager.generate(PROMPTS, n=4, temperature=1.0, max_new_tokens=24, seed=2)
    assert any(not c.truncated for c in a) and any(c.truncated for c in a)
    assert [c.token_ids for c in a] == [c.token_ids for c in b]
    for x, y in zip(a, b):
        assert x.logprobs == pytest.approx(y.logprobs, abs=1e-4)


def test_an_unknown_engine_is_refused(policy: tuple[torch.nn.Module, object]) -> None:
    with pytest.raises(ValueError, match="transformers or vllm"):
        make_engine(
            "tgi", model=policy[0], model_path="x", pad_token_id=0, eos_token_ids=[0], max_model_len=8
        )


def test_a_missing_vllm_is_reported_with_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from training.rollout import vllm_engine

    monkeypatch.setitem(sys.modules, "vllm", None)  # makes `import vllm` raise ImportError
    with pytest.raises(RuntimeError, match="requirements-gpu.txt"):
        vllm_engine.import_vllm()


def test_the_vllm_engine_refuses_to_start_without_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from training.rollout import vllm_engine

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="CUDA"):
        vllm_engine.VLLMEngine("m", eos_token_ids=[0], max_model_len=16)
