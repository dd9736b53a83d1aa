"""The vLLM model source (GPU nodes only): offline batched sampling with a per-sample seed.

vLLM is imported lazily (``training.rollout.vllm_engine.import_vllm``), only after checking that CUDA
is available, so CPU machines never import it. Prompts are rendered exactly as in training
(``training.data.render_prompt`` with the model's tokenizer and a ``PromptConfig``); each request is
one sample (``n = 1``) with its own ``seed``, so samples do not depend on batching.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from training.config import PromptConfig
from training.data import render_prompt
from training.evaluate.settings import EvalSettings
from training.evaluate.sources import Generation, SampleRequest


class VLLMSource:
    engine = "vllm"

    def __init__(
        self,
        model: str,
        *,
        prompt: PromptConfig | None = None,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        batch_size: int = 256,
        enforce_eager: bool = False,
        dtype: str = "auto",
        device: str | None = None,
    ) -> None:
        import torch

        if not torch.cuda.is_available() or (device is not None and device == "cpu"):
            raise RuntimeError("the vllm engine needs a CUDA GPU; use --engine transformers on CPU")
        from training.rollout.vllm_engine import import_vllm

        vllm = import_vllm()
        self._vllm = vllm
        self.model = model
        self.batch_size = batch_size
        self.prompt = prompt or PromptConfig()
        kwargs: dict[str, Any] = {
            "model": model,
            "dtype": dtype,
            "gpu_memory_utilization": gpu_memory_utilization,
            "enforce_eager": enforce_eager,
            "enable_prefix_caching": True,  # the k samples of a problem share its prompt
        }
        if max_model_len:
            kwargs["max_model_len"] = max_model_len
        self.llm = vllm.LLM(**kwargs)
        self.tokenizer = self.llm.get_tokenizer()

    def generate(self, requests: Sequence[SampleRequest], settings: EvalSettings) -> list[Generation]:
        if not requests:
            return []
        vllm = self._vllm
        prompts = [render_prompt(self.tokenizer, r.prompt, self.prompt) for r in requests]
        params = [
            vllm.SamplingParams(
                n=1,
                temperature=settings.temperature,
                top_p=settings.top_p,
                max_tokens=settings.max_tokens,
                seed=r.seed,
            )
            for r in requests
        ]
        outputs = self.llm.generate(prompts, sampling_params=params, use_tqdm=False)
        gens = []
        for out in outputs:
            first = out.outputs[0]
            gens.append(
                Generation(
                    text=first.text, truncated=first.finish_reason == "length", tokens=len(first.token_ids)
                )
            )
        return gens

    def close(self) -> None:
        del self.llm


__all__ = ["VLLMSource"]
