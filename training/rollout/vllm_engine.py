"""Rollouts with vLLM (GPU only), colocated with the trainer in the same process and GPU.

vLLM is imported lazily inside the engine so that the rest of the trainer (and every CPU test) runs
without it. The engine:

- runs vLLM's engine core in-process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``, set before vLLM is
  imported) so the trainer reaches the model object vLLM executes and loads new weights into it
  directly, tensor by tensor, with no extra process and no copy of the model through IPC. When vLLM
  runs its engine core in another process anyway (the variable set to 1 by the environment, or a vLLM
  that ignores it) the engine refuses to start and says how to fix it, instead of silently pickling
  the whole model across processes at every step;
- is built with ``enable_sleep_mode=True`` and ``gpu_memory_utilization`` from the config. After each
  rollout it sleeps (``rollout.sleep_level``): level 1 offloads its weights to CPU memory and frees
  the KV cache, level 2 (default) discards the weights too, since the next ``sync_weights`` overwrites
  them anyway; 0 keeps everything resident. ``sync_weights`` wakes the weights only, loads the policy's
  parameters and resets the prefix cache; ``generate`` wakes the KV cache, so during the update vLLM
  holds no KV cache (and, at level 2, no weights);
- asks for ``logprobs_mode="processed_logprobs"`` (vLLM >= 0.10.2) so the returned log-probabilities
  are those of the distribution actually sampled (after temperature), like the transformers engine's;
- samples every response as its own request (``n=1``) with its own seed (``sample_seeds``: the
  trainer's ``training.data.sample_seed`` of the sample's global prompt position), so no two samples
  share noise and a sample does not depend on which other prompts share the batch or on the number of
  processes; ``top_p=1, top_k=-1 (disabled), min_p=0``; stops on the tokenizer's end-of-sequence ids;
  truncation is ``finish_reason == "length"``. Requests go through the in-process engine's
  ``add_request`` / ``step`` loop so ``on_group`` fires as soon as a prompt's n samples are done.
- under torchrun every rank builds its own vLLM on its own GPU (vLLM's ``external_launcher`` executor,
  which takes the rank's device from torchrun's environment); ``sync_weights`` gathers each sharded
  parameter (``DTensor.full_tensor``, a collective every rank runs in the same order) and streams it
  into the engine one tensor at a time.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from training.rollout.base import Completion, GroupCallback, GroupTracker, resolve_sample_seeds

logger = logging.getLogger("training")

VLLM_MISSING = (
    "rollout.engine 'vllm' needs the vllm package on a CUDA machine: pip install -r requirements-gpu.txt "
    "(or set rollout.engine: transformers)"
)
MULTIPROCESSING_ERROR = (
    "vLLM runs its engine core in a separate process (V1 multiprocessing), so the trainer cannot load "
    "new weights into the model in place: every sync would pickle the whole model across processes. "
    "Run the trainer with VLLM_ENABLE_V1_MULTIPROCESSING=0 (unset it, or export "
    "VLLM_ENABLE_V1_MULTIPROCESSING=0, before the trainer starts), or use rollout.engine: transformers."
)
_MP_ENV = "VLLM_ENABLE_V1_MULTIPROCESSING"

# Where the executed model lives, newest vLLM layouts first (V1 in-process engine core, then V0).
_MODEL_PATHS: tuple[tuple[str, ...], ...] = (
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
    ("llm_engine", "model_executor", "driver_worker", "worker", "model_runner", "model"),
    ("llm_engine", "model_executor", "driver_worker", "model_runner", "model"),
)

_request_ids = itertools.count()


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
    """The policy's parameters under their HF names, detached and whole: an FSDP2-sharded parameter
    (DTensor) is gathered with ``full_tensor()`` (a collective: every rank iterates in the same order)."""
    for name, param in model.state_dict().items():
        tensor = param.detach()
        full = getattr(tensor, "full_tensor", None)
        yield name, (full() if callable(full) else tensor)


def check_in_process(llm: Any) -> None:
    """Raise when vLLM's engine core runs in another process (see ``MULTIPROCESSING_ERROR``)."""
    client = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
    if client is not None and "MPClient" in type(client).__name__:
        raise RuntimeError(MULTIPROCESSING_ERROR)


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
        sleep_level: int = 2,
    ) -> None:
        if sleep_level not in (0, 1, 2):
            raise ValueError(f"rollout.sleep_level must be 0, 1 or 2, got {sleep_level}")
        if not torch.cuda.is_available():
            raise RuntimeError(
                "rollout.engine 'vllm' needs a CUDA GPU; use rollout.engine: transformers on CPU"
            )
        # In-process engine core: the model object is then reachable for direct weight loading.
        if os.environ.get(_MP_ENV, "0").strip() not in ("", "0"):
            raise RuntimeError(MULTIPROCESSING_ERROR)
        os.environ[_MP_ENV] = "0"
        vllm = import_vllm()
        self._vllm = vllm
        self.eos_token_ids = sorted({int(t) for t in eos_token_ids})
        self.sleep_level = sleep_level
        kwargs: dict[str, Any] = {
            "model": model_path,
            "dtype": dtype,
            "gpu_memory_utilization": gpu_memory_utilization,
            "max_model_len": max_model_len,
            "enforce_eager": enforce_eager,
            "enable_prefix_caching": True,  # the G samples of a prompt share its prefix
            "seed": seed,
        }
        if sleep_level:
            kwargs["enable_sleep_mode"] = True
        if int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:
            # torchrun: each rank runs its own engine on its own GPU, inside the rank's process.
            kwargs["distributed_executor_backend"] = "external_launcher"
        try:
            self.llm = vllm.LLM(**kwargs, logprobs_mode="processed_logprobs")
            self.processed_logprobs = True
        except TypeError:
            # vLLM < 0.10.2 returns raw (T = 1) log-probabilities. The trainer recomputes pi_old itself,
            # so only the rollout/logprob_abs_diff diagnostic is affected.
            logger.warning("this vLLM has no logprobs_mode: engine log-probabilities ignore the temperature")
            self.llm = vllm.LLM(**kwargs)
            self.processed_logprobs = False
        check_in_process(self.llm)
        # What is resident on the GPU now: a fresh engine holds both.
        self.weights_awake = True
        self.kv_awake = True
        self.weights_current = True  # False once level-2 sleep discarded them and no sync followed

    # --- sleep mode ------------------------------------------------------------------------------

    def sleep(self) -> None:
        """Free the KV cache (and offload or discard the weights) until the next rollout."""
        if not self.sleep_level or not (self.weights_awake or self.kv_awake):
            return
        self.llm.sleep(level=self.sleep_level)
        self.weights_awake = self.kv_awake = False
        if self.sleep_level == 2:
            self.weights_current = False

    def _wake(self, tag: str) -> None:
        if tag == "weights" and self.weights_awake or tag == "kv_cache" and self.kv_awake:
            return
        try:
            self.llm.wake_up(tags=[tag])
        except TypeError:  # a vLLM without tags wakes everything at once
            self.llm.wake_up()
            self.weights_awake = self.kv_awake = True
            return
        if tag == "weights":
            self.weights_awake = True
        else:
            self.kv_awake = True

    # --- weights ---------------------------------------------------------------------------------

    def _executed_model(self) -> Any | None:
        for path in _MODEL_PATHS:
            try:
                return _resolve(self.llm, path)
            except AttributeError:
                continue
        return None

    def sync_weights(self, model: torch.nn.Module) -> None:
        """Load ``model``'s current parameters into the engine in place (waking only its weights)."""
        self._wake("weights")
        target = self._executed_model()
        if target is not None:
            target.load_weights(weights=named_weights(model))
        elif hasattr(self.llm, "apply_model"):
            # Newer vLLM: run the loader inside the worker that owns the model. check_in_process made
            # sure that worker is this process, so the weights are passed by reference, not pickled.
            weights = named_weights(model)
            self.llm.apply_model(lambda m: m.load_weights(weights=weights))
        else:
            raise RuntimeError(
                "cannot reach the model inside this vLLM version to load weights; pin vllm to a version "
                "with LLM.apply_model or an in-process model_executor"
            )
        self.weights_current = True
        # Cached KV blocks were computed with the old weights.
        self.llm.reset_prefix_cache()

    # --- sampling --------------------------------------------------------------------------------

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
    ) -> list[Completion]:
        if temperature <= 0:
            raise ValueError("temperature must be > 0 (greedy decoding has no sampling log-probabilities)")
        if not self.weights_current:
            raise RuntimeError(
                "vLLM discarded its weights (rollout.sleep_level 2) and no sync_weights followed: "
                "call sync_weights(model) before generate"
            )
        seeds = resolve_sample_seeds(seed, len(prompts), n, sample_seeds)
        self._wake("weights")
        self._wake("kv_cache")
        try:
            return self._run(prompts, n, temperature, max_new_tokens, seeds, on_group)
        finally:
            self.sleep()

    def _params(self, temperature: float, max_new_tokens: int, seed: int) -> Any:
        return self._vllm.SamplingParams(
            n=1,
            temperature=temperature,
            top_p=1.0,
            top_k=-1,
            min_p=0.0,
            max_tokens=max_new_tokens,
            logprobs=0,  # the sampled token's log-probability only
            seed=seed,
            stop_token_ids=self.eos_token_ids,
            skip_special_tokens=False,
            detokenize=False,
        )

    def _run(
        self,
        prompts: list[list[int]],
        n: int,
        temperature: float,
        max_new_tokens: int,
        seeds: list[int],
        on_group: GroupCallback | None,
    ) -> list[Completion]:
        engine = self.llm.llm_engine
        batch = next(_request_ids)
        rows: dict[str, int] = {}
        for i, p in enumerate(prompts):
            for j in range(n):
                row = i * n + j
                request_id = f"mc-{batch}-{row}"
                rows[request_id] = row
                engine.add_request(
                    request_id,
                    {"prompt_token_ids": list(p)},
                    self._params(temperature, max_new_tokens, seeds[row]),
                )
        tracker = GroupTracker(n, on_group)
        done: dict[int, Completion] = {}
        while len(done) < len(rows):
            if not engine.has_unfinished_requests():
                raise RuntimeError(f"vLLM finished {len(done)} of {len(rows)} requests and has no more work")
            for out in engine.step():
                if not out.finished or out.request_id not in rows:
                    continue
                row = rows[out.request_id]
                completion = _completion(row // n, out.outputs[0])
                done[row] = completion
                tracker.add(row, completion)
        return [done[r] for r in range(len(rows))]

    def close(self) -> None:
        del self.llm
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def _completion(prompt_index: int, out: Any) -> Completion:
    ids = list(out.token_ids)
    logprobs = [float(step[tok].logprob) for step, tok in zip(out.logprobs or [], ids, strict=False)]
    if len(logprobs) != len(ids):
        raise RuntimeError("vLLM returned fewer log-probabilities than tokens")
    return Completion(
        prompt_index=prompt_index,
        token_ids=ids,
        logprobs=logprobs,
        truncated=out.finish_reason == "length",
    )


__all__ = [
    "MULTIPROCESSING_ERROR",
    "VLLM_MISSING",
    "VLLMEngine",
    "check_in_process",
    "import_vllm",
    "named_weights",
]
