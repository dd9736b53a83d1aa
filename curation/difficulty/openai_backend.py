"""The ``openai`` scorer: the official ``openai`` client against any OpenAI-compatible endpoint.

Configuration (arguments win over the environment):
``base_url`` / ``OPENAI_BASE_URL`` (unset = api.openai.com), ``api_key`` / ``OPENAI_API_KEY`` (may be
omitted when a base URL is given: local servers such as ``vllm serve`` accept any key), ``model`` /
``DIFFICULTY_MODEL`` (required).

Behaviour:
- One ``POST /chat/completions`` per sample (see ``_request`` for why not ``create``): temperature > 0 and ``seed = seed + index``, so the three samples differ
  only by randomness and a rerun of a sample index asks the same question with the same seed.
- ``response_format`` is a strict JSON schema; an endpoint that rejects ``response_format`` (400
  naming it) is asked again without it, once, and the scorer remembers. The answer is ALWAYS
  validated here (``prompt.parse_answer``): a malformed answer is a ``ScoreError``, never a default.
- 429, 5xx, timeouts and connection errors are retried up to ``max_retries`` times with exponential
  backoff and full jitter (``Retry-After`` is honoured up to ``backoff_max_s``); other 4xx fail at
  once. The client's own retries are off so every retry is counted in ``usage``.
- ``ascore_sample`` runs on one ``AsyncOpenAI`` client per event loop (one connection pool, reused),
  at most ``concurrency`` requests in flight; ``score_sample`` uses one sync client. ``usage`` sums
  requests, retries, failures and tokens over the scorer's life (thread-safe).
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from .core import ProblemInput, Sample, ScoreError, TokenUsage
from .prompt import PROMPT_VERSION, build_messages, parse_answer, response_format

_RETRYABLE = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)


class OpenAIScorer:
    backend = "openai"
    prompt_version = PROMPT_VERSION

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        concurrency: int = 8,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        temperature: float = 0.7,
        max_tokens: int = 1024,
        seed: int = 0,
        json_schema: bool = True,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 20.0,
    ) -> None:
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.model = model or os.environ.get("DIFFICULTY_MODEL") or ""
        if not self.model:
            raise ValueError("no model: pass model= or set DIFFICULTY_MODEL")
        key = api_key or os.environ.get("OPENAI_API_KEY") or ""
        if not key and not self.base_url:
            raise ValueError("no API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local endpoint)")
        self.api_key = key or "EMPTY"  # vLLM's convention for "no key needed"
        if concurrency < 1 or max_retries < 0 or timeout_s <= 0:
            raise ValueError("concurrency must be >= 1, max_retries >= 0 and timeout_s > 0")
        if temperature <= 0:
            raise ValueError("temperature must be > 0 so the samples are independent")
        self.concurrency = concurrency
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.json_schema = json_schema
        self._response_format = response_format()
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self._lock = threading.Lock()
        self._counts = {
            "requests": 0,
            "retries": 0,
            "failures": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
        }
        self._client: openai.OpenAI | None = None
        self._aclient: openai.AsyncOpenAI | None = None
        self._aloop: asyncio.AbstractEventLoop | None = None
        self._asem: asyncio.Semaphore | None = None

    # ---- accounting ----
    @property
    def usage(self) -> TokenUsage:
        with self._lock:
            return TokenUsage(**self._counts)

    def _count(self, **deltas: int) -> None:
        with self._lock:
            for k, v in deltas.items():
                self._counts[k] += v

    # ---- request / answer ----
    def _request(self, problem: ProblemInput, index: int) -> dict[str, Any]:
        """Arguments of ``client.post``: the chat-completions JSON body, exactly what ``create`` sends.

        Why ``post`` and not ``chat.completions.create``: ``create`` first walks every argument against
        the client's TypedDicts (messages and the nested JSON schema), a quarter of the client's CPU
        per request in ``bench/difficulty.py``; the body here is already plain JSON. Auth, base URL,
        connection pool, error classes and the ``ChatCompletion`` parsing are the client's own."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": build_messages(problem),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed + index,
        }
        if self.json_schema:
            body["response_format"] = self._response_format
        return {
            "cast_to": ChatCompletion,
            "body": body,
            "options": {"timeout": self.timeout_s, "security": {"bearer_auth": True}},
        }

    def _sample(self, response: Any, index: int) -> Sample:
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        self._count(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        choices = getattr(response, "choices", None)
        if not choices:
            raise ScoreError("the endpoint answered without choices")
        content = choices[0].message.content
        scores, rationales = parse_answer(content)
        return Sample(index, scores, rationales, content or "", prompt_tokens, completion_tokens)

    def _schema_rejected(self, exc: Exception) -> bool:
        text = str(exc).lower()
        return (
            self.json_schema
            and isinstance(exc, openai.BadRequestError)
            and ("response_format" in text or "json_schema" in text)
        )

    def _delay(self, attempt: int, exc: Exception) -> float:
        retry_after = None
        response = getattr(exc, "response", None)
        if response is not None:
            try:
                retry_after = float(response.headers.get("retry-after", ""))
            except (TypeError, ValueError):
                retry_after = None
        if retry_after is not None:
            return min(self.backoff_max_s, max(0.0, retry_after))
        # full jitter: uniform in [0, base * 2^attempt], capped
        return random.uniform(0, min(self.backoff_max_s, self.backoff_base_s * 2**attempt))

    def _give_up(self, exc: Exception, attempts: int) -> ScoreError:
        self._count(failures=1)
        status = getattr(exc, "status_code", None)
        what = f"HTTP {status}" if status else type(exc).__name__
        if isinstance(exc, ValueError):
            what = "the response body is not valid JSON"
        return ScoreError(f"endpoint failed after {attempts} attempt(s): {what}: {exc}")

    # ---- sync ----
    def score_sample(self, problem: ProblemInput, *, index: int) -> Sample:
        if self._client is None:
            self._client = openai.OpenAI(
                base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=self.timeout_s
            )
        attempt = 0
        while True:
            self._count(requests=1)
            try:
                response = self._client.post("/chat/completions", **self._request(problem, index))
            except Exception as exc:  # noqa: BLE001 - classified by _after_failure
                delay, attempt = self._after_failure(exc, attempt)
                time.sleep(delay)
                continue
            return self._sample(response, index)

    def _after_failure(self, exc: Exception, attempt: int) -> tuple[float, int]:
        """What follows a failed request, shared by the sync and async paths: ``(delay, attempt)`` of the
        next try, or raise. An endpoint that refuses the JSON-schema response format is asked again at
        once without it (not a retry); a retryable error waits its back-off while retries remain; an
        API error or a body that is not JSON (ValueError) gives up with a clear ScoreError."""
        if self._schema_rejected(exc):
            self.json_schema = False
            return 0.0, attempt
        if isinstance(exc, _RETRYABLE) and attempt < self.max_retries:
            self._count(retries=1)
            return self._delay(attempt, exc), attempt + 1
        if isinstance(exc, (openai.OpenAIError, ValueError)):
            raise self._give_up(exc, attempt + 1) from exc
        raise exc

    # ---- async ----
    def _async_client(self) -> tuple[openai.AsyncOpenAI, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._aclient is None or self._aloop is not loop or self._asem is None:
            self._aclient = openai.AsyncOpenAI(
                base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=self.timeout_s
            )
            self._aloop = loop
            self._asem = asyncio.Semaphore(self.concurrency)
        return self._aclient, self._asem

    async def ascore_sample(self, problem: ProblemInput, *, index: int) -> Sample:
        client, semaphore = self._async_client()
        attempt = 0
        while True:
            self._count(requests=1)
            try:
                async with semaphore:
                    response = await client.post("/chat/completions", **self._request(problem, index))
            except Exception as exc:  # noqa: BLE001 - classified by _after_failure
                delay, attempt = self._after_failure(exc, attempt)
                await asyncio.sleep(delay)
                continue
            return self._sample(response, index)

    async def aclose(self) -> None:
        """Close the async client's connections (``score_problems`` calls this at the end)."""
        if self._aclient is not None:
            await self._aclient.close()
            self._aclient = None
            self._aloop = None
            self._asem = None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
