"""Any OpenAI-compatible endpoint as a model source (``vllm serve``, SGLang, OpenAI, ...).

Uses the official ``openai`` client (``AsyncOpenAI``) against the chat completions API: every sample
is one request with ``n = 1`` and its own ``seed``, so samples are independent and a resumed job asks
for exactly the missing ones. Messages are what training renders through the chat template: an
optional system message, then the user message of ``training.data.prompt_text``. We use chat
completions only (not the legacy completions API) because every server we target serves it and
applies the model's own chat template; to evaluate a base model, serve it with a chat template
(``vllm serve --chat-template``).

At most ``concurrency`` requests are in flight; the client retries 429, 5xx and connection errors
``max_retries`` times with exponential backoff (honouring ``Retry-After``) and gives up on a request
after ``timeout_s``. A request that still fails yields ``Generation(error=...)``: an infrastructure
error of that sample, not a wrong answer. The key comes from ``api_key`` or ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from training.evaluate.settings import EvalSettings
from training.evaluate.sources import Generation, SampleRequest


class OpenAISource:
    engine = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        system_prompt: str = "",
        concurrency: int = 16,
        timeout_s: float = 600.0,
        max_retries: int = 5,
        batch_size: int | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or ""
        if not self.api_key:
            raise ValueError("the openai engine needs an API key: set OPENAI_API_KEY (any value for a local server)")
        self.system_prompt = system_prompt
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        # A few rounds of requests per batch keep the endpoint busy while the previous batch is judged.
        self.batch_size = batch_size or 4 * concurrency

    def messages(self, request: SampleRequest) -> list[dict[str, str]]:
        out = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        out.append({"role": "user", "content": request.prompt})
        return out

    def generate(self, requests: Sequence[SampleRequest], settings: EvalSettings) -> list[Generation]:
        if not requests:
            return []
        return asyncio.run(self._generate_all(requests, settings))

    async def _generate_all(self, requests: Sequence[SampleRequest], settings: EvalSettings) -> list[Generation]:
        from openai import AsyncOpenAI

        # One client per call: its HTTP pool belongs to this event loop.
        client = AsyncOpenAI(
            base_url=self.base_url, api_key=self.api_key, timeout=self.timeout_s, max_retries=self.max_retries
        )
        gate = asyncio.Semaphore(self.concurrency)
        try:
            return list(await asyncio.gather(*(self._one(client, gate, r, settings) for r in requests)))
        finally:
            await client.close()

    async def _one(self, client: Any, gate: asyncio.Semaphore, request: SampleRequest, settings: EvalSettings) -> Generation:
        import openai

        async with gate:
            try:
                response = await client.chat.completions.create(
                    model=self.model,
                    messages=self.messages(request),
                    temperature=settings.temperature,
                    top_p=settings.top_p,
                    max_tokens=settings.max_tokens,
                    seed=request.seed,
                    n=1,
                )
            except (openai.OpenAIError, ValueError) as exc:  # ValueError: a body that is not JSON
                return Generation(text="", error=f"{type(exc).__name__}: {exc}"[:500])
        if not response.choices:
            return Generation(text="", error="the endpoint answered without choices")
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        return Generation(
            text=choice.message.content or "",
            truncated=choice.finish_reason == "length",
            tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )

    def close(self) -> None:
        return None


__all__ = ["OpenAISource"]
