"""Per-sample seeds: a sample depends only on its own seed (not on batch composition, chunking or the
number of processes), and on_group reports each finished group from inside generation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from training.data import sample_seed, step_sample_seeds
from training.rollout import Completion, TransformersEngine

PROMPTS = [[5, 6, 7, 8, 9], [10, 11], [12, 13, 14], [20, 21, 22, 23]]


def test_sample_seed_is_a_pure_function_of_its_four_numbers() -> None:
    assert sample_seed(0, 3, 2, 1) == sample_seed(0, 3, 2, 1)
    seeds = {sample_seed(s, st, p, j) for s in (0, 1) for st in (1, 2) for p in range(4) for j in range(4)}
    assert len(seeds) == 64 and all(0 <= x < 2**63 for x in seeds)
    assert sample_seed(-1, 1, 0, 0) >= 0
    assert step_sample_seeds(7, 2, [3, 0], 2) == [
        sample_seed(7, 2, 3, 0),
        sample_seed(7, 2, 3, 1),
        sample_seed(7, 2, 0, 0),
        sample_seed(7, 2, 0, 1),
    ]


@pytest.fixture(scope="module")
def policy(toy_model_dir: Path) -> tuple[torch.nn.Module, int, int]:
    from transformers import AutoTokenizer

    from training.modeling import load_causal_lm

    tok = AutoTokenizer.from_pretrained(toy_model_dir)
    model = load_causal_lm(str(toy_model_dir), torch.float32, torch.device("cpu"))
    return model, int(tok.pad_token_id), int(tok.eos_token_id)


def _engine(policy: tuple[torch.nn.Module, int, int], batch_size: int = 0) -> TransformersEngine:
    model, pad, eos = policy
    return TransformersEngine(model, pad_token_id=pad, eos_token_ids=[eos], batch_size=batch_size)


def _tokens(comps: list[Completion]) -> list[list[int]]:
    return [c.token_ids for c in comps]


def test_a_sample_depends_only_on_its_seed_not_on_batch_composition_or_process_split(
    policy: tuple[torch.nn.Module, int, int],
) -> None:
    n = 2
    seeds = step_sample_seeds(0, 1, range(len(PROMPTS)), n)
    kw: dict[str, Any] = {"n": n, "temperature": 1.3, "max_new_tokens": 12, "seed": 99}
    whole = _tokens(_engine(policy).generate(PROMPTS, sample_seeds=seeds, **kw))
    # Two "processes", each with half of the prompts and their global seeds.
    first = _tokens(_engine(policy).generate(PROMPTS[:2], sample_seeds=seeds[:4], **kw))
    second = _tokens(_engine(policy).generate(PROMPTS[2:], sample_seeds=seeds[4:], **kw))
    assert first + second == whole
    # Another order and another chunking: each prompt's samples follow its seeds.
    order = [3, 0, 2, 1]
    shuffled = _tokens(
        _engine(policy, batch_size=3).generate(
            [PROMPTS[i] for i in order],
            sample_seeds=[seeds[i * n + j] for i in order for j in range(n)],
            **kw,
        )
    )
    assert shuffled == [whole[i * n + j] for i in order for j in range(n)]
    # A different seed for one sample changes that sample only (and different samples differ).
    changed = list(seeds)
    changed[1] += 1
    other = _tokens(_engine(policy).generate(PROMPTS, sample_seeds=changed, **kw))
    assert other[0] == whole[0] and other[2:] == whole[2:]
    assert len({tuple(t) for t in whole}) > 1


def test_without_sample_seeds_the_call_seed_still_decides_and_a_wrong_count_is_refused(
    policy: tuple[torch.nn.Module, int, int],
) -> None:
    kw: dict[str, Any] = {"n": 2, "temperature": 1.3, "max_new_tokens": 10}
    a = _tokens(_engine(policy).generate(PROMPTS, seed=1, **kw))
    assert a == _tokens(_engine(policy, batch_size=3).generate(PROMPTS, seed=1, **kw))
    assert a != _tokens(_engine(policy).generate(PROMPTS, seed=2, **kw))
    with pytest.raises(ValueError, match="sample_seeds holds 3 seeds for 4 prompts x 2 samples"):
        _engine(policy).generate(PROMPTS, seed=1, sample_seeds=[1, 2, 3], **kw)


def test_on_group_reports_each_group_once_in_sample_order_during_generation(
    policy: tuple[torch.nn.Module, int, int],
) -> None:
    model = policy[0]
    forwards = [0]
    hook = model.register_forward_hook(lambda *_: forwards.__setitem__(0, forwards[0] + 1))
    reported: list[tuple[int, list[Completion], int]] = []
    samples: list[tuple[int, Completion]] = []
    try:
        out = _engine(policy, batch_size=2).generate(
            PROMPTS,
            n=2,
            temperature=1.0,
            max_new_tokens=8,
            seed=3,
            on_group=lambda i, comps: reported.append((i, comps, forwards[0])),
            on_sample=lambda row, comp: samples.append((row, comp)),
        )
    finally:
        hook.remove()
    assert sorted(row for row, _ in samples) == list(range(8))
    assert all(out[row] is comp for row, comp in samples)
    assert sorted(i for i, _, _ in reported) == [0, 1, 2, 3]
    for i, comps, _ in reported:
        assert comps == out[i * 2 : i * 2 + 2] and all(c.prompt_index == i for c in comps)
    # One chunk per group (batch_size = n): group 0 is reported before the later chunks ran.
    assert reported[0][0] == 0 and reported[0][2] < forwards[0]
