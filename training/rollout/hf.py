"""Rollouts with a transformers causal LM: batched sampling with a KV cache, on CPU or GPU.

A plain decode loop instead of ``model.generate``: the policy needs exactly the sampled tokens, their
log-probabilities at the sampling temperature and per-token entropies, and the loop avoids
``generate``'s per-token processor machinery (which dominates the time of small models). Prompts are
left-padded with explicit position ids; finished sequences are dropped from the batch (and their KV
cache rows with them) once enough of them have finished, so long stragglers do not pay for short
answers. Sampling draws from softmax(logits / T) exactly (no top-k / top-p), the distribution the
GRPO ratio assumes. Every sample (row) has its own seed and generator (``sample_seeds``, else derived
from ``seed``), so a sample depends only on its seed and the weights: not on the batch it shares, the
chunking (``batch_size``), when finished rows are dropped, or how many processes split the prompts.
``on_sample`` is called the moment each response ends and ``on_group`` as soon as all n samples of a
prompt are finished, from inside the decode loop, so a caller can judge them while the rest generate.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import Any

import torch

from training.rollout.base import (
    Completion,
    GroupCallback,
    GroupTracker,
    SampleCallback,
    resolve_sample_seeds,
)


def make_cache(model: torch.nn.Module) -> Any:
    """A fresh DynamicCache for ``model`` (its constructor signature changed across versions)."""
    from transformers import DynamicCache

    try:
        return DynamicCache(config=model.config)  # type: ignore[arg-type]
    except TypeError:
        return DynamicCache()


def lm_forward(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    position_ids: torch.Tensor,
    cache: Any = None,
    *,
    logits_to_keep: int = 0,
) -> torch.Tensor:
    """Logits of a causal LM forward pass. The cache goes positionally: transformers 4.x names the
    argument ``past_key_values`` and 5.x ``cache``; the cache object is updated in place."""
    kwargs: dict[str, Any] = {"use_cache": cache is not None}
    if logits_to_keep:
        kwargs["logits_to_keep"] = logits_to_keep
    out = model(input_ids, attention_mask, position_ids, cache, **kwargs)
    return out.logits


def row_generator(device: torch.device, seed: int) -> torch.Generator:
    """The sampling generator of one sample (row), seeded with its sample seed."""
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed) & 0x7FFF_FFFF_FFFF_FFFF)
    return gen


def _add_at(groups: GroupTracker, offset: int, row: int, completion: Completion) -> None:
    groups.add(offset + row, completion)


def autocast(device: torch.device, dtype: torch.dtype | None) -> contextlib.AbstractContextManager[object]:
    """torch.autocast on ``device`` with ``dtype``, or a no-op context when ``dtype`` is None."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


class TransformersEngine:
    """Samples from the very policy module being trained (no weight copy, so ``sync_weights`` is a no-op)."""

    def __init__(
        self,
        model: torch.nn.Module,
        *,
        pad_token_id: int,
        eos_token_ids: Sequence[int],
        batch_size: int = 0,
        compact_fraction: float = 0.125,
        autocast_dtype: torch.dtype | None = None,
    ) -> None:
        if not eos_token_ids:
            raise ValueError("the transformers engine needs at least one end-of-sequence token id")
        self.model = model
        self.pad_token_id = int(pad_token_id)
        self.eos_token_ids = sorted({int(t) for t in eos_token_ids})
        self.batch_size = batch_size
        self.compact_fraction = compact_fraction
        self.autocast_dtype = autocast_dtype

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def sync_weights(self, model: torch.nn.Module) -> None:
        if model is not self.model:
            self.model = model

    def close(self) -> None:
        return None

    def generate(
        self,
        prompts: list[list[int]],
        *,
        n: int,
        temperature: float,
        max_new_tokens: int,
        seed: int,
        sample_seeds: Sequence[int] | None = None,
        on_group: GroupCallback | None = None,
        on_sample: SampleCallback | None = None,
    ) -> list[Completion]:
        if temperature <= 0:
            raise ValueError("temperature must be > 0 (greedy decoding has no sampling log-probabilities)")
        rows = [(pi, p) for pi, p in enumerate(prompts) for _ in range(n)]
        seeds = resolve_sample_seeds(seed, len(prompts), n, sample_seeds)
        step = self.batch_size if self.batch_size > 0 else max(len(rows), 1)
        groups = GroupTracker(n, on_group, on_sample)
        was_training = self.model.training
        self.model.eval()
        try:
            out: list[Completion] = []
            for start in range(0, len(rows), step):
                out.extend(
                    self._generate_chunk(
                        rows[start : start + step],
                        seeds[start : start + step],
                        temperature,
                        max_new_tokens,
                        functools.partial(_add_at, groups, start),
                    )
                )
            return out
        finally:
            self.model.train(was_training)

    def _generate_chunk(
        self,
        rows: list[tuple[int, list[int]]],
        seeds: Sequence[int],
        temperature: float,
        max_new_tokens: int,
        on_done: Callable[[int, Completion], None],
    ) -> list[Completion]:
        with torch.inference_mode(), autocast(self.device, self.autocast_dtype):
            return self._decode(rows, seeds, temperature, max_new_tokens, on_done)

    def _decode(
        self,
        rows: list[tuple[int, list[int]]],
        seeds: Sequence[int],
        temperature: float,
        max_new_tokens: int,
        on_done: Callable[[int, Completion], None],
    ) -> list[Completion]:
        device = self.device
        b = len(rows)
        width = max(len(p) for _, p in rows)
        input_ids = torch.full((b, width), self.pad_token_id, dtype=torch.long, device=device)
        attention = torch.zeros((b, width), dtype=torch.long, device=device)
        for i, (_, p) in enumerate(rows):
            if p:
                input_ids[i, width - len(p) :] = torch.tensor(p, dtype=torch.long, device=device)
                attention[i, width - len(p) :] = 1
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        eos = torch.tensor(self.eos_token_ids, dtype=torch.long, device=device)

        tokens: list[list[int]] = [[] for _ in range(b)]
        logps: list[list[float]] = [[] for _ in range(b)]
        entropy = [0.0] * b
        finished = [False] * b
        done: list[Completion | None] = [None] * b
        gens = [row_generator(device, s) for s in seeds]

        def complete(r: int) -> None:
            comp = Completion(
                prompt_index=rows[r][0],
                token_ids=tokens[r],
                logprobs=logps[r],
                truncated=not finished[r],
                entropy_sum=entropy[r],
            )
            done[r] = comp
            on_done(r, comp)

        active = torch.arange(b, device=device)  # original row of each batch row
        n_done_in_batch = 0

        cache = make_cache(self.model)
        logits = lm_forward(self.model, input_ids, attention, positions, cache, logits_to_keep=1)[:, -1, :]
        next_pos = positions[:, -1:] + 1  # (B_active, 1)
        rows_now = list(range(b))
        for t in range(max_new_tokens):
            logp_all = torch.log_softmax(logits.float() / temperature, dim=-1)  # (B_active, V)
            probs = logp_all.exp()
            # Exponential race: argmax(p / E) with E ~ Exp(1) samples from p. Each row draws its noise
            # from its own generator (seeded by its sample seed), so what a row samples depends only
            # on its seed and the weights: not on the other rows, the chunking or when finished rows
            # are dropped from the batch.
            unit = torch.ones_like(probs[0])
            noise = torch.stack(
                [
                    unit if finished[r] else torch.empty_like(unit).exponential_(generator=gens[r])
                    for r in rows_now
                ]
            )
            tok = torch.argmax(probs / noise, dim=-1)  # (B_active,)
            tok_logp = logp_all.gather(-1, tok.unsqueeze(-1)).squeeze(-1)
            ent = -(probs * logp_all).nan_to_num(0.0).sum(-1)
            is_eos = torch.isin(tok, eos)
            tok_l, lp_l, ent_l, eos_l, rows_l = (
                tok.tolist(),
                tok_logp.tolist(),
                ent.tolist(),
                is_eos.tolist(),
                active.tolist(),
            )
            for j, r in enumerate(rows_l):
                if finished[r]:
                    continue
                tokens[r].append(tok_l[j])
                logps[r].append(lp_l[j])
                entropy[r] += ent_l[j]
                if eos_l[j]:
                    finished[r] = True
                    n_done_in_batch += 1
                    complete(r)
            if t == max_new_tokens - 1 or all(finished):
                break
            attention = torch.cat(
                [attention, torch.ones((attention.shape[0], 1), dtype=attention.dtype, device=device)], 1
            )
            if n_done_in_batch and n_done_in_batch >= self.compact_fraction * attention.shape[0]:
                keep = torch.tensor(
                    [j for j, r in enumerate(rows_l) if not finished[r]], dtype=torch.long, device=device
                )
                cache.batch_select_indices(keep)
                attention, next_pos, tok, active = attention[keep], next_pos[keep], tok[keep], active[keep]
                rows_now = active.tolist()
                n_done_in_batch = 0
            logits = lm_forward(self.model, tok.unsqueeze(-1), attention, next_pos, cache)[:, -1, :]
            next_pos = next_pos + 1
        for r in range(b):
            if done[r] is None:
                complete(r)  # truncated: reached the cap without an end-of-sequence token
        return [c for c in done if c is not None]


__all__ = ["TransformersEngine", "lm_forward", "make_cache"]
