"""Rollouts with vLLM (GPU only), colocated with the trainer in the same process and GPU.

vLLM is imported lazily inside the engine so that the rest of the trainer (and every CPU test) runs
without it. The engine:
- is built in-process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``) so the trainer can reach the model
  object vLLM executes and load new weights into it directly, with no extra process or IPC;
- asks for ``logprobs_mode="processed_logprobs"`` (vLLM >= 0.10.2) so the returned log-probabilities
  are those of the distribution actually sampled (after temperature), like the transformers engine's;
- samples with ``top_p=1, top_k=-1 (disabled), min_p=0``, a per-request seed, and stops on the
  tokenizer's end-of-sequence ids; truncation is ``finish_reason == "length"``;
- after each optimizer step, ``sync_weights`` streams the policy's parameters (HF names, which vLLM's
  ``load_weights`` maps onto its fused layers) into the engine and resets the prefix cache, whose
  entries were computed with the old weights.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from training.rollout.base import Completion

logger = logging.getLogger("training")

VLLM_MISSING = (
    "rollout.engine 'vllm' needs the vllm package on a CUDA machine: pip install -r requirements-gpu.txt "
    "(or set rollout.engine: transformers)"
)

# Where the executed model lives, newest vLLM layouts first (V1 in-process executor, then V0).
_MODEL_PATHS: tuple[tuple[str, ...], ...] = (
    ("llm_engine", "model_executor", "driver_worker", "worker", "model_runner", "model"),
    ("llm_engine", "model_executor", "driver_worker", "model_runner", "model"),
    (
        "llm_engine",
        "engine_core",
        "engine_core",
        "model_executor",
        "driver_worker",
        "worker",
        "model_runner",
        "model",
    ),
)


def import_vllm() -> Any:
    """The vllm module, or a RuntimeError that says how to get it."""
    try:
        import vllm
    except ImportError as exc:
        raise RuntimeError(VLLM_MISSING) from exc
    return vllm


def _resolve(obj: Any, path: Sequence[str]) -> Any:
    for name in path:
        obj = getattr(obj, name)
    return obj


def named_weights(model: torch.nn.Module) -> Iterator[tuple[str, torch.Tensor]]:
    """The policy's parameters under their HF names, detached, in the dtype vLLM runs."""
    for name, param in model.state_dict().items():
        yield name, param.detach()


class VLLMEngine:
    """A vllm.LLM sharing the GPU with the trainer (``gpu_memory_utilization`` bounds its share)."""

    def __init__(
        self,
        model_path: str,
        *,
        eos_token_ids: Sequence[int],
        max_model_len: int,
        gpu_memory_utilization: float = 0.35,
        dtype: str = "bfloat16",
        enforce_eager: bool = False,
        seed: int = 0,
    ) -> None:
        if not torch.cuda.is_available():
            raise RuntimeError(
                "rollout.engine 'vllm' needs a CUDA GPU; use rollout.engine: transformers on CPU"
            )
        # In-process engine core: the model object is then reachable for direct weight loading.
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        vllm = import_vllm()
        self._vllm = vllm
        self.eos_token_ids = sorted({int(t) for t in eos_token_ids})
        kwargs: dict[str, Any] = {
            "model": model_path,
            "dtype": dtype,
            "gpu_memory_utilization": gpu_memory_utilization,
            "max_model_len": max_model_len,
            "enforce_eager": enforce_eager,
            "enable_prefix_caching": True,  # the G samples of a prompt share its prefix
            "seed": seed,
        }
        try:
            self.llm = vllm.LLM(**kwargs, logprobs_mode="processed_logprobs")
            self.processed_logprobs = True
        except TypeError:
            # vLLM < 0.10.2 returns raw (T = 1) log-probabilities. The trainer recomputes pi_old itself,
            # so only the rollout/logprob_abs_diff diagnostic is affected.
            logger.warning("this vLLM has no logprobs_mode: engine log-probabilities ignore the temperature")
            self.llm = vllm.LLM(**kwargs)
            self.processed_logprobs = False

    def _executed_model(self) -> Any | None:
        for path in _MODEL_PATHS:
            try:
                return _resolve(self.llm, path)
            except AttributeError:
                continue
        return None

    def sync_weights(self, model: torch.nn.Module) -> None:
        target = self._executed_model()
        if target is not None:
            target.load_weights(weights=named_weights(model))
        elif hasattr(self.llm, "apply_model"):
            # Newer vLLM: run the loader inside the worker that owns the model (same process here).
            weights = list(named_weights(model))
            self.llm.apply_model(lambda m: m.load_weights(weights=weights))
        else:
            raise RuntimeError(
                "cannot reach the model inside this vLLM version to load weights; pin vllm to a version "
                "with LLM.apply_model or an in-process model_executor"
            )
        # Cached KV blocks were computed with the old weights.
        self.llm.reset_prefix_cache()

    def generate(
        self,
        prompts: list[list[int]],
        *,
        n: int,
        temperature: float,
        max_new_tokens: int,
        seed: int,
    ) -> list[Completion]:
        vllm = self._vllm
        requests = []
        for i, p in enumerate(prompts):
            params = vllm.SamplingParams(
                n=n,
                temperature=temperature,
                top_p=1.0,
                top_k=-1,
                min_p=0.0,
                max_tokens=max_new_tokens,
                logprobs=0,  # the sampled token's log-probability only
                seed=(int(seed) * 1_000_003 + i) % (2**31 - 1),
                stop_token_ids=self.eos_token_ids,
                skip_special_tokens=False,
                detokenize=False,
            )
            requests.append(({"prompt_token_ids": list(p)}, params))
        outputs = self.llm.generate(
            [r for r, _ in requests], sampling_params=[s for _, s in requests], use_tqdm=False
        )
        completions: list[Completion] = []
        for pi, request_output in enumerate(outputs):
            for out in request_output.outputs:
                ids = list(out.token_ids)
                logprobs = [float(step[tok].logprob) for step, tok in zip(out.logprobs or [], ids)]
                if len(logprobs) != len(ids):
                    raise RuntimeError("vLLM returned fewer log-probabilities than tokens")
                completions.append(
                    Completion(
                        prompt_index=pi,
                        token_ids=ids,
                        logprobs=logprobs,
                        truncated=out.finish_reason == "length",
                    )
                )
        return completions

    def close(self) -> None:
        del self.llm
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


__all__ = ["VLLM_MISSING", "VLLMEngine", "import_vllm", "named_weights"]
