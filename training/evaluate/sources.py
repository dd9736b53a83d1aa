"""Model sources behind one interface: where an evaluation's samples come from.

A source turns ``SampleRequest``s into ``Generation``s::

    source = make_source("transformers", "path/to/model")           # or a run checkpoint's model/ dir
    source = make_source("vllm", "Qwen/Qwen3-1.7B")                  # GPU nodes only (lazy import)
    source = make_source("openai", "served-name", base_url="http://host:8000/v1")  # any compatible API
    gens = source.generate(requests, settings)                       # same order as requests

- A request carries the problem id, the sample index, the sample's seed (``sample_seed(settings.seed,
  problem id, index)``) and the user message built by the training prompt builder
  (``training.data.prompt_text``: statement, format instruction for stdin vs call problems, starter
  code). Local sources render it exactly as training does (``training.data.render_prompt`` with a
  ``PromptConfig``: the tokenizer's chat template when it has one, the system prompt, enable_thinking);
  the OpenAI source sends the same text as chat messages (system message when configured, then user).
- Every sample is drawn from its own seed, so a sample does not depend on which other samples share
  its batch and a resumed job regenerates identical missing samples (transformers: a per-row torch
  generator; vLLM and OpenAI: the per-request ``seed`` parameter, which a server may honour only on
  the same hardware and batch shape, as OpenAI documents).
- ``Generation.error`` is set (and ``text`` empty) when the endpoint failed after its retries: the
  evaluator records such a sample as an infrastructure error, never as a wrong answer.
- ``batch_size`` is how many requests the evaluator hands to one ``generate`` call; judging of one
  batch overlaps the generation of the next.

This module imports nothing from Django; torch, transformers, vllm and openai load only with the
source that needs them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from training.evaluate.settings import EvalSettings

ENGINES = ("transformers", "vllm", "openai")


@dataclass(frozen=True)
class SampleRequest:
    """One sample to draw: problem ``key`` (``platform:external_id``), sample ``index``, its ``seed``
    and the user message ``prompt`` (``training.data.prompt_text`` of the problem)."""

    key: str
    index: int
    seed: int
    prompt: str


@dataclass(frozen=True)
class Generation:
    """A sampled completion: ``truncated`` = it hit max_tokens; ``error`` = the source failed."""

    text: str
    truncated: bool = False
    tokens: int = 0
    error: str | None = None


@runtime_checkable
class ModelSource(Protocol):
    engine: str
    model: str
    batch_size: int

    def generate(self, requests: Sequence[SampleRequest], settings: EvalSettings) -> list[Generation]:
        """One generation per request, in request order."""
        ...

    def close(self) -> None: ...


def sample_seed(seed: int, key: str, index: int) -> int:
    """The seed of sample ``index`` of problem ``key``: a 31-bit hash of (seed, key, index), stable
    across processes and Python versions (vLLM and OpenAI accept 31-bit seeds)."""
    digest = hashlib.blake2b(f"{seed}\x1f{key}\x1f{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & 0x7FFF_FFFF


def make_source(
    engine: str,
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    device: str | None = None,
    **kw: Any,
) -> ModelSource:
    """Build the source for ``engine``:

    - ``transformers``: ``model`` is a local directory (a run checkpoint's ``model/``) or a Hugging Face
      id; ``device`` 'auto' | 'cpu' | 'cuda[:N]'; kw ``prompt`` (PromptConfig), ``batch_size`` (default
      32), ``dtype``.
    - ``vllm``: GPU only (RuntimeError on a machine without CUDA, before importing vllm); kw ``prompt``,
      ``gpu_memory_utilization`` (0.9), ``max_model_len``, ``batch_size`` (256), ``enforce_eager``.
    - ``openai``: ``model`` is the served model name; ``base_url`` (else ``OPENAI_BASE_URL``), ``api_key``
      (else ``OPENAI_API_KEY``); kw ``system_prompt``, ``concurrency`` (16), ``timeout_s`` (600),
      ``max_retries`` (5, with backoff on 429 / 5xx / connection errors).
    """
    if engine == "transformers":
        from training.evaluate.hf_source import TransformersSource

        return TransformersSource(model, device=device or "auto", **kw)
    if engine == "vllm":
        from training.evaluate.vllm_source import VLLMSource

        return VLLMSource(model, **kw)
    if engine == "openai":
        from training.evaluate.openai_source import OpenAISource

        return OpenAISource(model, base_url=base_url, api_key=api_key, **kw)
    raise ValueError(f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}")


__all__ = ["ENGINES", "Generation", "ModelSource", "SampleRequest", "make_source", "sample_seed"]
