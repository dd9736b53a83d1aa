"""Held-out evaluation during training: pass@1 / pass@k of the current policy every N steps.

Configured by the ``eval`` section (``training.config_sections.EvalConfig``). The run's own rollout
engine samples (so it sees the weights of the step just trained: the transformers engine shares the
policy module, vLLM receives them after each update) from the prompts the run trains with
(``training.data.render_prompt`` with the run's ``prompt`` section), and ``training.evaluate.evaluate``
judges with the run's checker, overlapping judging with generation. Every evaluation uses the same
per-sample seeds (derived from the run's seed), so successive points differ by the weights, not by
sampling luck. The engine samples the full distribution at ``eval.temperature`` (no top-p) in batches
of ``rollout.batch_size``; it draws a batch from one seed, so unlike the standalone evaluator a
sample here also depends on its batch.

Logged as ``eval/pass@1``, ``eval/pass@k`` and ``timing/eval_s`` (``training.metrics_names``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from training.config import GRPOConfig
from training.data import render_prompt
from training.evaluate import EvalSettings, Generation, SampleRequest, evaluate, load_rows
from training.rewards import Judge
from training.rollout import RolloutEngine


class EngineSource:
    """A ``ModelSource`` over a training rollout engine (token prompts in, completions out)."""

    engine = "rollout"

    def __init__(self, rollout: RolloutEngine, tokenizer: Any, config: GRPOConfig) -> None:
        self.rollout = rollout
        self.tokenizer = tokenizer
        self.prompt = config.prompt
        self.model = config.model
        self.batch_size = config.rollout.batch_size or 64

    def generate(self, requests: Sequence[SampleRequest], settings: EvalSettings) -> list[Generation]:
        if not requests:
            return []
        prompts = [
            list(self.tokenizer(render_prompt(self.tokenizer, r.prompt, self.prompt), add_special_tokens=False)["input_ids"])
            for r in requests
        ]
        comps = self.rollout.generate(
            prompts, n=1, temperature=settings.temperature, max_new_tokens=settings.max_tokens, seed=requests[0].seed
        )
        texts = self.tokenizer.batch_decode([c.token_ids for c in comps], skip_special_tokens=True)
        return [Generation(text=t, truncated=c.truncated, tokens=c.length) for t, c in zip(texts, comps)]

    def close(self) -> None:
        return None


class HeldOutEval:
    """Evaluates the run's policy on ``config.eval.release`` when ``due(step)``."""

    def __init__(self, config: GRPOConfig, *, rollout: RolloutEngine, tokenizer: Any, judge: Judge | None = None) -> None:
        ec = config.eval
        rows = load_rows(ec.release)
        self.rows = rows[: ec.max_problems] if ec.max_problems else rows
        self.every = ec.every_n_steps
        self.max_steps = config.max_steps
        self.judge = judge
        self.source = EngineSource(rollout, tokenizer, config)
        self.settings = EvalSettings(
            k=ec.k,
            temperature=ec.temperature,
            top_p=1.0,
            max_tokens=ec.max_tokens or config.max_response_length,
            seed=config.seed,
            checker=config.reward.checker,
            judge_workers=config.reward.workers or 0,
        )

    def due(self, step: int) -> bool:
        return step % self.every == 0 or step == self.max_steps

    def run(self) -> dict[str, float]:
        """``eval/pass@1``, ``eval/pass@k`` (omitted when every sample was an infrastructure error) and
        ``timing/eval_s``."""
        t0 = time.perf_counter()
        summary = evaluate(self.rows, self.source, self.settings, judge=self.judge, bootstrap=0).summary
        out = {"timing/eval_s": time.perf_counter() - t0}
        for name in ("pass@1", "pass@k"):
            if summary[name] is not None:
                out[f"eval/{name}"] = float(summary[name])
        return out


__all__ = ["EngineSource", "HeldOutEval"]
