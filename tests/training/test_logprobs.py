"""Chunked log-probabilities (training.logprobs): same values and gradients as the full-logits method,
and a backward-pass peak that does not grow with sequence length x vocabulary."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from training.logprobs import (
    FSDP_METHOD,
    chunked_logprobs,
    full_logits_logprobs,
    model_logprobs,
    split_lm_head,
)
from training.loss import selective_log_softmax, token_entropy
from training.rollout.hf import lm_forward

ROOT = Path(__file__).resolve().parents[2]


def _problem(
    n: int = 37, h: int = 6, v: int = 50, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(0)
    hidden = torch.randn(n, h, generator=gen, dtype=dtype)
    weight = torch.randn(v, h, generator=gen, dtype=dtype)
    bias = torch.randn(v, generator=gen, dtype=dtype)
    targets = torch.randint(0, v, (n,), generator=gen)
    return hidden, weight, bias, targets


def test_gradcheck_with_bias_temperature_and_chunks_that_do_not_divide_the_tokens() -> None:
    hidden, weight, bias, targets = _problem(n=13, h=4, v=11, dtype=torch.float64)
    inputs = tuple(t.clone().requires_grad_(True) for t in (hidden, weight, bias))

    def f(h: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return chunked_logprobs(h, w, targets, 1.3, bias=b, chunk_tokens=5)[0]

    assert torch.autograd.gradcheck(f, inputs)


@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_values_entropy_and_gradients_match_the_full_logits_method(chunk: int) -> None:
    hidden, weight, _, targets = _problem()
    upstream = torch.randn(hidden.shape[0])
    upstream[5:12] = 0.0  # padding tokens: a whole zero chunk is skipped in the backward pass
    grads = []
    for method in ("full", "chunked"):
        h, w = hidden.clone().requires_grad_(True), weight.clone().requires_grad_(True)
        if method == "full":
            logits = (h @ w.t())[None]
            logp = selective_log_softmax(logits, targets[None], 0.7)[0]
            ent = token_entropy(logits.detach(), 0.7)[0]
        else:
            logp, maybe_ent = chunked_logprobs(h, w, targets, 0.7, chunk_tokens=chunk, want_entropy=True)
            assert maybe_ent is not None and not maybe_ent.requires_grad
            ent = maybe_ent
        (logp * upstream).sum().backward()
        grads.append((logp.detach(), ent, h.grad, w.grad))
    (a, ae, ah, aw), (b, be, bh, bw) = grads
    assert torch.allclose(a, b, atol=1e-5)
    assert torch.allclose(ae, be, atol=1e-5)
    assert ah is not None and bh is not None and torch.allclose(ah, bh, atol=1e-5)
    assert aw is not None and bw is not None and torch.allclose(aw, bw, atol=1e-5)


def test_leading_dimensions_are_kept_and_bad_inputs_are_refused() -> None:
    hidden, weight, _, targets = _problem(n=12)
    logp, ent = chunked_logprobs(hidden.reshape(3, 4, -1), weight, targets.reshape(3, 4))
    assert logp.shape == (3, 4) and ent is None
    assert torch.allclose(logp.reshape(-1), full_logits_logprobs(hidden @ weight.t(), targets)[0], atol=1e-5)
    with pytest.raises(ValueError, match="temperature"):
        chunked_logprobs(hidden, weight, targets, 0.0)
    with pytest.raises(ValueError, match="targets"):
        chunked_logprobs(hidden, weight, targets[:5])


@pytest.fixture(scope="module")
def model(toy_model_dir: Path) -> torch.nn.Module:
    from training.modeling import load_causal_lm

    return load_causal_lm(str(toy_model_dir), torch.float32, torch.device("cpu"))


def _batch() -> tuple[torch.Tensor, ...]:
    ids = torch.tensor([[0, 0, 5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15, 16, 1, 1]])
    attn = torch.tensor([[0, 0, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 0, 0]])
    pos = (attn.cumsum(-1) - 1).clamp(min=0)
    return ids, attn, pos, ids[:, -4:]


def test_the_tiny_model_gives_the_same_logprobs_and_parameter_gradients(model: torch.nn.Module) -> None:
    assert split_lm_head(model) is not None  # Qwen3: base model + linear head, the chunked path
    ids, attn, pos, targets = _batch()
    upstream = torch.randn(targets.shape, generator=torch.Generator().manual_seed(3))
    results: list[tuple[torch.Tensor, list[torch.Tensor]]] = []
    for method in ("full", "chunked"):
        model.zero_grad(set_to_none=True)
        if method == "full":
            logits = lm_forward(model, ids, attn, pos, logits_to_keep=targets.shape[1] + 1)[:, :-1, :]
            logp = selective_log_softmax(logits, targets, 1.2)
        else:
            logp, _ = model_logprobs(model, ids, attn, pos, targets, 1.2, chunk_tokens=3)
        (logp * upstream).sum().backward()
        results.append((logp.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]))
    (a, ga), (b, gb) = results
    assert torch.allclose(a, b, atol=1e-5)
    assert len(ga) == len(gb) > 0
    assert all(torch.allclose(x, y, atol=1e-5) for x, y in zip(ga, gb))


def test_one_process_calls_the_chunked_route_directly_and_checks_the_temperature(
    model: torch.nn.Module,
) -> None:
    parts = split_lm_head(model)
    assert parts is not None and parts[0] is model.model and parts[1] is model.get_output_embeddings()
    ids, attn, pos, targets = _batch()
    with torch.no_grad():
        model_logprobs(model, ids, attn, pos, targets, 1.0)
    assert FSDP_METHOD not in vars(model)  # the FSDP2 forward method is registered on sharded models only
    with pytest.raises(ValueError, match="temperature must be > 0"), torch.no_grad():
        model_logprobs(model, ids, attn, pos, targets, 0.0)


def test_a_head_that_is_not_a_plain_linear_layer_takes_the_full_logits_path(
    model: torch.nn.Module, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model.config, "final_logit_softcapping", 30.0, raising=False)
    assert split_lm_head(model) is None
    ids, attn, pos, targets = _batch()
    with torch.no_grad():
        logp, ent = model_logprobs(model, ids, attn, pos, targets, 1.0, want_entropy=True)
        logits = lm_forward(model, ids, attn, pos, logits_to_keep=targets.shape[1] + 1)[:, :-1, :]
    assert torch.allclose(logp, selective_log_softmax(logits, targets, 1.0), atol=1e-6)
    assert ent is not None and torch.allclose(ent, token_entropy(logits, 1.0), atol=1e-5)


def _peak(method: str, seq: int, vocab: int = 151_936, hidden: int = 16) -> float:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "logprobs_memory.py"),
            "--child",
            method,
            str(seq),
            str(vocab),
            str(hidden),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    import json

    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return float(result["peak_mib"])


def test_backward_peak_memory_no_longer_scales_with_sequence_length_times_vocabulary() -> None:
    """Qwen's vocabulary (151,936): the full-logits method adds about five float32 (seq x V) copies at
    its peak; the chunked head adds about one chunk's worth, and not more at 3x the sequence length."""
    short, long = 192, 576
    one_copy_mib = short * 151_936 * 4 / 2**20  # 111 MiB at 192 tokens
    # Measured from a big parent, as in the whole suite: a child's ru_maxrss would start at this
    # process's size (Linux keeps it across fork + exec), so the peak must be the child's own (VmHWM).
    ballast = bytearray(800 * 2**20)
    ballast[:: 4096] = b"\x01" * len(range(0, len(ballast), 4096))
    full = _peak("full", short)
    chunked_short = _peak("chunked", short)
    chunked_long = _peak("chunked", long)
    del ballast
    assert full > 3 * one_copy_mib  # the old method keeps several copies
    assert chunked_long < full / 1.5  # 3x the tokens, still far below the old peak at 1x
    # The full method would grow by ~10 copies from 192 to 576 tokens; the chunked one stays flat.
    assert chunked_long < chunked_short + 2 * one_copy_mib


def test_under_bfloat16_autocast_the_head_matmul_runs_in_bfloat16_like_the_model_head(
    model: torch.nn.Module,
) -> None:
    from training.rollout.hf import autocast

    ids, attn, pos, targets = _batch()
    with torch.no_grad():
        chunked, _ = model_logprobs(model, ids, attn, pos, targets, 1.0, autocast_dtype=torch.bfloat16)
        with autocast(ids.device, torch.bfloat16):
            logits = lm_forward(model, ids, attn, pos, logits_to_keep=targets.shape[1] + 1)[:, :-1, :]
        full = selective_log_softmax(logits, targets, 1.0)
        exact, _ = model_logprobs(model, ids, attn, pos, targets, 1.0)
    assert chunked.dtype == torch.float32
    assert torch.allclose(chunked, full, atol=2e-2)  # both bf16 matmuls, float32 log-softmax
    assert not torch.equal(chunked, exact)  # the bf16 rounding is really there
