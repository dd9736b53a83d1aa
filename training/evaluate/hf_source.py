"""The transformers model source: a local model or a run checkpoint, on CPU or GPU.

Builds on the rollout engine's pieces (``training.rollout.hf``: KV cache and forward pass) with
a decode loop of its own, because evaluation needs two things training sampling does not: top-p, and
one random stream per sample. Each row draws its exponential-race noise (argmax(p / E), E ~ Exp(1),
samples from p) from a torch generator seeded with the request's seed, and finished rows leave the
batch, so a sample depends only on its seed and prompt, not on its batch neighbours (up to the
floating-point effects of batch shape on the logits).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from training.config import PromptConfig
from training.data import render_prompt
from training.evaluate.settings import EvalSettings
from training.evaluate.sources import Generation, SampleRequest
from training.modeling import eos_token_ids, load_causal_lm, resolve_device, resolve_dtype
from training.rollout.hf import lm_forward, make_cache


def top_p_filter(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """Zero every token outside the smallest set whose probability reaches ``top_p``. (B, V) -> (B, V)."""
    if top_p >= 1.0:
        return probs
    sorted_p, order = probs.sort(dim=-1, descending=True)
    drop = (sorted_p.cumsum(-1) - sorted_p) >= top_p  # the mass before a token already reached top_p
    return torch.zeros_like(probs).scatter(-1, order, sorted_p.masked_fill(drop, 0.0))


class TransformersSource:
    """Samples with a transformers causal LM (see module docstring). ``module`` / ``tokenizer`` may be
    passed in (an already loaded model); otherwise they load from ``model``."""

    engine = "transformers"

    def __init__(
        self,
        model: str,
        *,
        device: str = "auto",
        prompt: PromptConfig | None = None,
        batch_size: int = 32,
        dtype: str = "auto",
        module: torch.nn.Module | None = None,
        tokenizer: Any = None,
    ) -> None:
        from transformers import AutoTokenizer

        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.model = model
        self.batch_size = batch_size
        self.prompt = prompt or PromptConfig()
        self.device = resolve_device(device)
        if dtype == "auto":
            torch_dtype = torch.bfloat16 if self.device.type == "cuda" else torch.float32
        else:
            torch_dtype = resolve_dtype(dtype)
        self.tokenizer = tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(model)
        self.module = module if module is not None else load_causal_lm(model, torch_dtype, self.device)
        self.module.eval()
        self.eos_ids = eos_token_ids(self.tokenizer, self.module)
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else self.eos_ids[0])

    def render(self, request: SampleRequest) -> str:
        """The prompt string the model sees: exactly what training feeds it for this problem."""
        return render_prompt(self.tokenizer, request.prompt, self.prompt)

    def generate(self, requests: Sequence[SampleRequest], settings: EvalSettings) -> list[Generation]:
        if not requests:
            return []
        ids = [list(self.tokenizer(self.render(r), add_special_tokens=False)["input_ids"]) for r in requests]
        with torch.inference_mode():
            tokens, finished = self._decode(ids, [r.seed for r in requests], settings)
        texts = self.tokenizer.batch_decode(tokens, skip_special_tokens=True)
        return [
            Generation(text=text, truncated=not done, tokens=len(toks))
            for text, toks, done in zip(texts, tokens, finished)
        ]

    def _decode(
        self, prompts: list[list[int]], seeds: list[int], settings: EvalSettings
    ) -> tuple[list[list[int]], list[bool]]:
        device = self.device
        b = len(prompts)
        width = max(len(p) for p in prompts)
        input_ids = torch.full((b, width), self.pad_id, dtype=torch.long, device=device)
        attention = torch.zeros((b, width), dtype=torch.long, device=device)
        for i, p in enumerate(prompts):
            if p:
                input_ids[i, width - len(p) :] = torch.tensor(p, dtype=torch.long, device=device)
                attention[i, width - len(p) :] = 1
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        eos = set(self.eos_ids)
        gens = [torch.Generator(device=device).manual_seed(int(s)) for s in seeds]
        tokens: list[list[int]] = [[] for _ in range(b)]
        finished = [False] * b
        active = list(range(b))  # original row of each batch row

        cache = make_cache(self.module)
        logits = lm_forward(self.module, input_ids, attention, positions, cache, logits_to_keep=1)[:, -1, :]
        next_pos = positions[:, -1:] + 1  # (B_active, 1)
        for t in range(settings.max_tokens):
            probs = top_p_filter(torch.softmax(logits.float() / settings.temperature, dim=-1), settings.top_p)
            vocab = probs.shape[-1]
            noise = torch.stack(
                [torch.empty(vocab, device=device).exponential_(generator=gens[r]) for r in active]
            )  # (B_active, V): each row's own stream
            tok = torch.argmax(probs / noise, dim=-1)  # (B_active,)
            keep: list[int] = []
            for j, (r, token) in enumerate(zip(active, tok.tolist())):
                tokens[r].append(int(token))
                if int(token) in eos:
                    finished[r] = True
                else:
                    keep.append(j)
            if t == settings.max_tokens - 1 or not keep:
                break
            attention = torch.cat(
                [attention, torch.ones((attention.shape[0], 1), dtype=attention.dtype, device=device)], 1
            )
            if len(keep) < len(active):
                index = torch.tensor(keep, dtype=torch.long, device=device)
                cache.batch_select_indices(index)
                attention, next_pos, tok = attention[index], next_pos[index], tok[index]
                active = [active[j] for j in keep]
            logits = lm_forward(self.module, tok.unsqueeze(-1), attention, next_pos, cache)[:, -1, :]
            next_pos = next_pos + 1
        return tokens, finished

    def close(self) -> None:
        return None


__all__ = ["TransformersSource", "top_p_filter"]
