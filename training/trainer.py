"""The MicroCoder-GRPO training loop.

One step: choose prompts -> sample G responses each -> judge them (rewards) -> truncation masks ->
group-relative advantages -> ``updates_per_rollout`` optimizer updates (token-level clipped loss at
the training temperature) -> sync weights into the rollout engine -> metrics and sample table ->
checkpoint every ``checkpoint_interval`` steps.

Every random choice of a step (prompts, sampling seed, mask draws) is a function of (seed, step), and
checkpoints hold weights, optimizer and RNG states, so a resumed run continues exactly where the
checkpoint was taken. The JSONL logs are cut back to the checkpoint's step on resume: no step is lost
or duplicated. ``on_resume(step)`` tells an outside store (the Django layer) to do the same.

Metric names (every step; a metric that is undefined at a step, e.g. ``kl`` without a reference
model, is omitted rather than reported as NaN): ``reward``, ``reward_std``, ``frac_reward_zero_std``,
``completions/mean_length``, ``completions/min_length``, ``completions/max_length``,
``completions/mean_terminated_length``, ``completions/clipped_ratio``, ``entropy`` (mean per-token entropy
of the sampling distribution: from the transformers engine while sampling, else from the first update's
forward pass over the samples it trains on),
``clip_ratio/low_mean``, ``clip_ratio/high_mean``, ``clip_ratio/region_mean``,
``mask/conditional_masked_ratio`` (masked share of all samples, whatever the mask policy),
``mask/truncated_masked_ratio`` (masked share of truncated samples), ``temperature``,
``temperature/stage``, ``diversity``, ``diversity/reward_nonconstant_frac``, ``timing/generate_s``,
``timing/reward_s``, ``timing/update_s``, ``timing/step_s``, ``eval/infra_error_rate``,
``eval/no_answer_rate``, ``verdict/<V>`` (share of samples with verdict V), ``loss``, ``kl``,
``grad_norm``, ``learning_rate``, ``num_tokens`` (cumulative prompt + completion tokens), ``epoch``,
``rollout/tokens_per_s`` (generated tokens / generation time), ``policy/ratio_max_dev`` (max |rho - 1| over the step's loss tokens: 0 with one update per rollout),
``rollout/logprob_abs_diff`` (mean |engine logprob - trainer logprob| before the first update: 0 up
to numerics for the transformers engine; the vLLM/trainer mismatch otherwise).

This module imports nothing from Django.
"""

from __future__ import annotations

import json
import logging
import math
import time
import typing
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from curation.records import ProblemRecord
from training.checkpoint import (
    JsonlLog,
    latest_checkpoint,
    load_trainer_state,
    restore_rng_state,
    save_checkpoint,
    write_text_atomic,
)
from training.config import GRPOConfig
from training.data import encode_prompts, load_release, problem_id, step_prompt_indices
from training.insights import check_config
from training.loss import clipped_policy_loss, group_advantages, selective_log_softmax, token_entropy
from training.masking import MaskDecision, compute_masks
from training.rewards import Judge, RewardResult, score_completions
from training.rollout import Completion, RolloutEngine, make_engine
from training.rollout.hf import autocast, lm_forward
from training.temperature import TemperaturePolicy, diversity, reward_nonconstant_fraction

logger = logging.getLogger("training")

MetricsCallback = Callable[[int, dict[str, float]], None]
SamplesCallback = Callable[[int, list[dict[str, Any]]], None]


@dataclass(frozen=True)
class TrainResult:
    """How ``train()`` ended: ``last_step`` completed, whether a stop was requested, where it resumed."""

    last_step: int
    stopped: bool
    resumed_from: int | None
    output_dir: str


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def resolve_dtype(name: str) -> torch.dtype:
    if name == "auto":
        return torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def resolve_autocast(name: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype of forward passes, or None for none."""
    if name == "bf16" or (name == "auto" and device.type == "cuda"):
        return torch.bfloat16
    return None


def load_causal_lm(path: str, dtype: torch.dtype, device: torch.device) -> torch.nn.Module:
    from transformers import AutoModelForCausalLM

    try:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    except TypeError:  # transformers < 4.56 spells it torch_dtype
        model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=dtype)
    return typing.cast(torch.nn.Module, model.to(device))  # type: ignore[arg-type]


def eos_token_ids(tokenizer: Any, model: Any) -> list[int]:
    """End-of-sequence ids: the tokenizer's plus the generation config's (Qwen3 has two)."""
    ids: set[int] = set()
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    gen_cfg = getattr(model, "generation_config", None)
    extra = getattr(gen_cfg, "eos_token_id", None) if gen_cfg is not None else None
    if isinstance(extra, int):
        ids.add(extra)
    elif isinstance(extra, list | tuple):
        ids.update(int(x) for x in extra)
    if not ids:
        raise ValueError("the tokenizer defines no eos token: set tokenizer.eos_token before training")
    return sorted(ids)


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else float("nan")


class Trainer:
    """Runs MicroCoder-GRPO for ``config``. Callbacks (all optional):

    - ``on_metrics(step, metrics)`` after every step (metrics: name -> finite float);
    - ``on_samples(step, rows)`` with the step's sample table;
    - ``should_stop()`` polled after every step: True checkpoints the current step and returns;
    - ``on_resume(step)`` once when training resumes from a checkpoint taken at ``step``: drop any
      stored metrics after that step (they will be produced again).

    ``problems`` replaces ``dataset.release``; ``judge`` and ``reward_from_verdict`` replace
    ``evaluator.judge_batch`` and ``evaluator.reward_from_verdict`` (tests, other judges).
    With ``write_logs`` the run writes metrics.jsonl, samples.jsonl and config.yaml into output_dir.
    """

    def __init__(
        self,
        config: GRPOConfig,
        *,
        on_metrics: MetricsCallback | None = None,
        on_samples: SamplesCallback | None = None,
        should_stop: Callable[[], bool] | None = None,
        on_resume: Callable[[int], None] | None = None,
        problems: Sequence[ProblemRecord] | None = None,
        judge: Judge | None = None,
        reward_from_verdict: Callable[..., float | None] | None = None,
        write_logs: bool = True,
    ) -> None:
        self.config = config
        self.on_metrics = on_metrics
        self.on_samples = on_samples
        self.should_stop = should_stop
        self.on_resume = on_resume
        self.judge = judge
        self.reward_from_verdict = reward_from_verdict
        self.write_logs = write_logs
        self._given_problems = list(problems) if problems is not None else None
        self.output_dir = Path(config.output_dir)
        self.metrics_log = JsonlLog(self.output_dir / "metrics.jsonl")
        self.samples_log = JsonlLog(self.output_dir / "samples.jsonl")
        self.temperature_policy = TemperaturePolicy(config.temperature)
        self.warnings = check_config(config)
        self.step = 0
        self.num_tokens = 0
        self.resumed_from: int | None = None
        self._ready = False

    # --- setup -----------------------------------------------------------------------------------

    def setup(self) -> None:
        """Load tokenizer, policy, problems, engine and optimizer; resume from a checkpoint if any."""
        if self._ready:
            return
        cfg = self.config
        from transformers import AutoTokenizer

        if cfg.cpu_threads > 0:
            torch.set_num_threads(cfg.cpu_threads)
        torch.manual_seed(cfg.seed)
        np.random.seed(cfg.seed % (2**32))
        self.device = resolve_device(cfg.device)
        self.dtype = resolve_dtype(cfg.dtype)
        self.autocast_dtype = resolve_autocast(cfg.mixed_precision, self.device)
        ckpt = latest_checkpoint(self.output_dir) if cfg.resume else None
        weights_path = str(ckpt / "model") if ckpt is not None else cfg.model
        self.tokenizer = AutoTokenizer.from_pretrained(weights_path)
        self.model = load_causal_lm(weights_path, self.dtype, self.device)
        if cfg.gradient_checkpointing:
            self.model.gradient_checkpointing_enable()  # type: ignore[operator]
        self.model.train()
        self.eos_ids = eos_token_ids(self.tokenizer, self.model)
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else self.eos_ids[0])

        if self._given_problems is not None:
            problems = self._given_problems
        else:
            if not cfg.dataset.release:
                raise ValueError("dataset.release is empty: point it at an exported release JSONL file")
            problems = load_release(cfg.dataset.release, max_problems=cfg.dataset.max_problems)
        self.problems, self.prompt_ids, self.prompt_texts, dropped = encode_prompts(
            self.tokenizer, problems, cfg.prompt, cfg.max_prompt_length
        )
        if dropped:
            logger.warning(
                "left out %d problems whose prompts exceed max_prompt_length=%d",
                dropped,
                cfg.max_prompt_length,
            )

        self.reference: torch.nn.Module | None = None
        if cfg.kl_coef > 0:
            self.reference = load_causal_lm(cfg.model, self.dtype, self.device).eval()
            for p in self.reference.parameters():
                p.requires_grad_(False)

        self.optimizer = torch.optim.AdamW(
            [p for p in self.model.parameters() if p.requires_grad],
            lr=cfg.learning_rate,
            weight_decay=cfg.weight_decay,
        )
        if ckpt is not None:
            self._restore(ckpt)
        self.engine: RolloutEngine = make_engine(
            cfg.rollout.engine,
            model=self.model,
            model_path=weights_path,
            pad_token_id=self.pad_id,
            eos_token_ids=self.eos_ids,
            max_model_len=cfg.max_prompt_length + cfg.max_response_length,
            batch_size=cfg.rollout.batch_size,
            gpu_memory_utilization=cfg.rollout.gpu_memory_utilization,
            enforce_eager=cfg.rollout.enforce_eager,
            dtype="bfloat16" if self.device.type == "cuda" else "float32",
            autocast_dtype=self.autocast_dtype,
            seed=cfg.seed,
        )
        if self.write_logs:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            write_text_atomic(self.output_dir / "config.yaml", cfg.to_yaml())
        self._ready = True

    def _restore(self, ckpt: Path) -> None:
        state = load_trainer_state(ckpt)
        self.optimizer.load_state_dict(state["optimizer"])
        self.step = int(state["step"])
        self.num_tokens = int(state.get("num_tokens", 0))
        self.temperature_policy.load_state_dict(state.get("temperature_policy", {}))
        restore_rng_state(state["rng"])
        self.resumed_from = self.step
        if self.write_logs:
            self.metrics_log.truncate_after(self.step)
            self.samples_log.truncate_after(self.step)
        if self.on_resume is not None:
            self.on_resume(self.step)
        logger.info("resumed from %s at step %d", ckpt, self.step)

    def checkpoint(self) -> Path:
        return save_checkpoint(
            self.output_dir,
            self.step,
            model=self.model,
            tokenizer=self.tokenizer,
            optimizer=self.optimizer,
            state={
                "num_tokens": self.num_tokens,
                "temperature_policy": self.temperature_policy.state_dict(),
                "config": self.config.to_dict(),
            },
            keep=self.config.checkpoint_keep,
        )

    # --- temperature selection -------------------------------------------------------------------

    def select_temperature(self) -> None:
        """Diversity-determined T: sample the initial policy at each candidate and apply the rule."""
        cfg = self.config
        n_prompts = min(cfg.temperature.selection_prompts, len(self.problems))
        idx = step_prompt_indices(len(self.problems), n_prompts, 1, cfg.seed + 7919)
        prompts = [self.prompt_ids[i] for i in idx]
        tokens = min(cfg.temperature.diversity_tokens, cfg.max_response_length)

        def measure(t: float) -> float:
            comps = self.engine.generate(
                prompts,
                n=cfg.group_size,
                temperature=t,
                max_new_tokens=tokens,
                seed=cfg.seed * 7_919 + int(t * 1000),
            )
            groups = [
                [c.token_ids for c in comps[g * cfg.group_size : (g + 1) * cfg.group_size]]
                for g in range(len(prompts))
            ]
            return diversity(groups, tokens)

        result = self.temperature_policy.select(measure)
        logger.info("temperature selection %s -> T=%.2f", result.measurements, result.chosen)
        if self.write_logs:
            write_text_atomic(
                self.output_dir / "temperature_selection.json", json.dumps(result.to_dict(), indent=2)
            )

    # --- the loop --------------------------------------------------------------------------------

    def train(self) -> TrainResult:
        self.setup()
        cfg = self.config
        for w in self.warnings:
            logger.warning("%s", w)
        if self.temperature_policy.needs_selection:
            self.select_temperature()
        stopped = False
        last_saved = self.step if self.resumed_from is not None else -1
        while self.step < cfg.max_steps:
            if self.should_stop is not None and self.should_stop():
                stopped = True
                break
            self.step += 1
            metrics, rows = self.train_step(self.step)
            self._emit(self.step, metrics, rows)
            interval = cfg.checkpoint_interval
            if (interval and self.step % interval == 0) or self.step == cfg.max_steps:
                self.checkpoint()
                last_saved = self.step
        if stopped and last_saved != self.step and self.step > 0:
            self.checkpoint()
        return TrainResult(
            last_step=self.step,
            stopped=stopped,
            resumed_from=self.resumed_from,
            output_dir=str(self.output_dir),
        )

    def _emit(self, step: int, metrics: dict[str, float], rows: list[dict[str, Any]]) -> None:
        if self.write_logs:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            self.metrics_log.append({"step": step, **metrics})
            for row in rows:
                self.samples_log.append(row)
        if self.on_metrics is not None:
            self.on_metrics(step, metrics)
        if self.on_samples is not None:
            self.on_samples(step, rows)

    def learning_rate(self, step: int) -> float:
        warm = self.config.lr_warmup_steps
        return self.config.learning_rate * (min(1.0, step / warm) if warm > 0 else 1.0)

    def train_step(self, step: int) -> tuple[dict[str, float], list[dict[str, Any]]]:
        """One full GRPO step; returns (metrics, sample table rows)."""
        cfg = self.config
        g_size = cfg.group_size
        t_step = time.perf_counter()
        temperature = self.temperature_policy.temperature(step)
        idx = step_prompt_indices(len(self.problems), cfg.prompts_per_step, step, cfg.seed)
        prompts = [self.prompt_ids[i] for i in idx]

        t0 = time.perf_counter()
        comps = self.engine.generate(
            prompts,
            n=g_size,
            temperature=temperature,
            max_new_tokens=cfg.max_response_length,
            seed=cfg.seed * 1_000_003 + step,
        )
        generate_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        texts = self.tokenizer.batch_decode([c.token_ids for c in comps], skip_special_tokens=True)
        sample_problems = [self.problems[idx[c.prompt_index]] for c in comps]
        results = score_completions(
            sample_problems,
            texts,
            [c.truncated for c in comps],
            cfg.reward,
            judge=self.judge,
            reward_from_verdict=self.reward_from_verdict,
        )
        reward_s = time.perf_counter() - t0

        uniforms = np.random.default_rng([cfg.seed, step, 1]).random(len(comps)).tolist()
        masks = compute_masks(
            cfg.mask.policy,
            [c.token_ids for c in comps],
            [c.truncated for c in comps],
            [r.verdict for r in results],
            uniforms,
            probability=cfg.mask.probability,
            window=cfg.mask.repeat_window,
            ngram_size=cfg.mask.ngram_size,
            ngram_threshold=cfg.mask.ngram_repeat_threshold,
        )
        rewards = [r.reward for r in results]
        adv = group_advantages(rewards, g_size, [m.masked for m in masks])

        t0 = time.perf_counter()
        lr = self.learning_rate(step)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        update = self._update(prompts, comps, rewards, masks, adv.advantages, temperature)
        self.engine.sync_weights(self.model)
        update_s = time.perf_counter() - t0

        self.num_tokens += sum(len(prompts[c.prompt_index]) + c.length for c in comps)
        metrics = self._metrics(step, comps, results, masks, adv.group_std, rewards, update, temperature)
        metrics.update(
            {
                "rollout/tokens_per_s": sum(c.length for c in comps) / generate_s if generate_s > 0 else 0.0,
                "timing/generate_s": generate_s,
                "timing/reward_s": reward_s,
                "timing/update_s": update_s,
                "timing/step_s": time.perf_counter() - t_step,
                "learning_rate": lr,
            }
        )
        metrics = {k: float(v) for k, v in metrics.items() if v is not None and math.isfinite(float(v))}
        rows = self._sample_rows(step, idx, comps, texts, results, masks, adv.advantages)
        return metrics, rows

    # --- update ----------------------------------------------------------------------------------

    def _batch_tensors(
        self, prompts: Sequence[list[int]], comps: Sequence[Completion]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:
        """Left-padded prompts + right-padded completions: ids, attention, positions (B, P+C),
        completion ids and completion mask (B, C), and C."""
        width_p = max(len(prompts[c.prompt_index]) for c in comps)
        width_c = max(max(c.length for c in comps), 1)
        b = len(comps)
        ids = torch.full((b, width_p + width_c), self.pad_id, dtype=torch.long)
        attn = torch.zeros((b, width_p + width_c), dtype=torch.long)
        comp_ids = torch.full((b, width_c), self.pad_id, dtype=torch.long)
        comp_mask = torch.zeros((b, width_c), dtype=torch.float32)
        for i, c in enumerate(comps):
            p = prompts[c.prompt_index]
            if p:
                ids[i, width_p - len(p) : width_p] = torch.tensor(p)
                attn[i, width_p - len(p) : width_p] = 1
            if c.length:
                ids[i, width_p : width_p + c.length] = torch.tensor(c.token_ids)
                attn[i, width_p : width_p + c.length] = 1
                comp_ids[i, : c.length] = torch.tensor(c.token_ids)
                comp_mask[i, : c.length] = 1.0
        pos = (attn.cumsum(-1) - 1).clamp(min=0)
        dev = self.device
        return ids.to(dev), attn.to(dev), pos.to(dev), comp_ids.to(dev), comp_mask.to(dev), width_c

    def _logprobs(
        self,
        model: torch.nn.Module,
        prompts: Sequence[list[int]],
        comps: Sequence[Completion],
        temperature: float,
        *,
        want_entropy: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Per-token log-probabilities of the completions at temperature T: (B, C), the mask (B, C),
        and optionally the per-token entropies (B, C)."""
        ids, attn, pos, comp_ids, comp_mask, width_c = self._batch_tensors(prompts, comps)
        with autocast(self.device, self.autocast_dtype):
            logits = lm_forward(model, ids, attn, pos, logits_to_keep=width_c + 1)[:, :-1, :]  # (B, C, V)
        logp = selective_log_softmax(logits, comp_ids, temperature)
        ent = token_entropy(logits, temperature) if want_entropy else None
        return logp, comp_mask, ent

    def _update(
        self,
        prompts: Sequence[list[int]],
        comps: Sequence[Completion],
        rewards: Sequence[float | None],
        masks: Sequence[MaskDecision],
        advantages: Sequence[float],
        temperature: float,
    ) -> dict[str, float]:
        cfg = self.config
        n = len(comps)
        loss_sample = [rewards[i] is not None and not masks[i].masked for i in range(n)]
        need_forward = [
            loss_sample[i]
            and comps[i].length > 0
            and not (cfg.skip_zero_advantage and cfg.kl_coef == 0 and advantages[i] == 0.0)
            for i in range(n)
        ]
        engine_entropy = all(c.entropy_sum is not None for c in comps)
        per_update = n // cfg.updates_per_rollout
        minibatches = [
            list(range(u * per_update, (u + 1) * per_update)) for u in range(cfg.updates_per_rollout)
        ]
        mbs = cfg.micro_batch_size

        # Off-policy updates need pi_old from before the first update (ratio = 1 only for the first).
        old: dict[int, torch.Tensor] = {}
        if cfg.updates_per_rollout > 1:
            with torch.no_grad():
                todo = [i for i in range(n) if need_forward[i]]
                for s in range(0, len(todo), mbs):
                    chunk = todo[s : s + mbs]
                    lp, _, _ = self._logprobs(self.model, prompts, [comps[i] for i in chunk], temperature)
                    for j, i in enumerate(chunk):
                        old[i] = lp[j, : comps[i].length].detach()

        tokens = low = high = kl_sum = ratio_dev = 0.0
        ent_sum = ent_tokens = 0.0
        diff_sum = diff_tokens = 0.0
        losses: list[float] = []
        grad_norms: list[float] = []
        params = [p for p in self.model.parameters() if p.requires_grad]
        for u, mb in enumerate(minibatches):
            normalizer = float(sum(comps[i].length for i in mb if loss_sample[i]))
            todo = [i for i in mb if need_forward[i]]
            self.optimizer.zero_grad(set_to_none=False)
            for p in params:
                if p.grad is None:
                    p.grad = torch.zeros_like(p)  # an update without signal still steps (Adam momentum)
            mb_loss = 0.0
            for s in range(0, len(todo), mbs):
                chunk = todo[s : s + mbs]
                chunk_comps = [comps[i] for i in chunk]
                logp, cmask, ent = self._logprobs(
                    self.model, prompts, chunk_comps, temperature, want_entropy=not engine_entropy and u == 0
                )
                if u == 0:
                    with torch.no_grad():
                        for j, c in enumerate(chunk_comps):
                            engine_lp = torch.tensor(c.logprobs, dtype=torch.float32, device=logp.device)
                            diff_sum += float((logp[j, : c.length].detach() - engine_lp).abs().sum())
                            diff_tokens += c.length
                if ent is not None:
                    ent_sum += float((ent * cmask).sum())
                    ent_tokens += float(cmask.sum())
                if old:
                    old_lp = torch.zeros_like(logp)
                    for j, i in enumerate(chunk):
                        old_lp[j, : comps[i].length] = old[i]
                else:
                    old_lp = logp.detach()
                ref_lp = None
                if self.reference is not None:
                    with torch.no_grad():
                        ref_lp, _, _ = self._logprobs(self.reference, prompts, chunk_comps, temperature)
                adv_t = torch.tensor([advantages[i] for i in chunk], dtype=torch.float32, device=logp.device)
                loss, st = clipped_policy_loss(
                    logp,
                    old_lp,
                    adv_t,
                    cmask,
                    eps_low=cfg.clip.eps_low,
                    eps_high=cfg.clip.eps_high,
                    normalizer=normalizer,
                    ref_logp=ref_lp,
                    kl_coef=cfg.kl_coef,
                )
                loss.backward()
                mb_loss += float(loss.detach())
                tokens += st.tokens
                low += st.clipped_low
                high += st.clipped_high
                kl_sum += st.kl_sum
                ratio_dev = max(ratio_dev, st.ratio_max_dev)
            if cfg.max_grad_norm > 0:
                grad_norms.append(float(torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)))
            self.optimizer.step()
            losses.append(mb_loss)

        out: dict[str, float] = {"loss": _mean(losses), "policy/ratio_max_dev": ratio_dev}
        if grad_norms:
            out["grad_norm"] = _mean(grad_norms)
        if tokens:
            out["clip_ratio/low_mean"] = low / tokens
            out["clip_ratio/high_mean"] = high / tokens
            out["clip_ratio/region_mean"] = (low + high) / tokens
        else:
            out.update(
                {"clip_ratio/low_mean": 0.0, "clip_ratio/high_mean": 0.0, "clip_ratio/region_mean": 0.0}
            )
        if self.reference is not None and tokens:
            out["kl"] = kl_sum / tokens
        if engine_entropy:
            total_len = sum(c.length for c in comps)
            if total_len:
                out["entropy"] = sum(c.entropy_sum or 0.0 for c in comps) / total_len
        elif ent_tokens:
            out["entropy"] = ent_sum / ent_tokens
        if diff_tokens:
            out["rollout/logprob_abs_diff"] = diff_sum / diff_tokens
        return out

    # --- metrics ---------------------------------------------------------------------------------

    def _metrics(
        self,
        step: int,
        comps: Sequence[Completion],
        results: Sequence[RewardResult],
        masks: Sequence[MaskDecision],
        group_std: Sequence[float],
        rewards: Sequence[float | None],
        update: dict[str, float],
        temperature: float,
    ) -> dict[str, float]:
        cfg = self.config
        n = len(comps)
        g_size = cfg.group_size
        valid = [r for r in rewards if r is not None]
        groups = [list(range(g * g_size, (g + 1) * g_size)) for g in range(n // g_size)]
        stds = [s for s in group_std if not math.isnan(s)]
        lengths = [c.length for c in comps]
        terminated = [c.length for c in comps if not c.truncated]
        truncated = sum(1 for c in comps if c.truncated)
        masked = sum(1 for m in masks if m.masked)
        verdicts = Counter(r.verdict for r in results)
        group_rewards = [[float(r) for i in g if (r := rewards[i]) is not None] for g in groups]
        m: dict[str, float] = {
            "reward": _mean(valid),
            "reward_std": _mean(stds),
            "frac_reward_zero_std": _mean([1.0 if s == 0.0 else 0.0 for s in stds]),
            "completions/mean_length": _mean(lengths),
            "completions/min_length": float(min(lengths)) if lengths else float("nan"),
            "completions/max_length": float(max(lengths)) if lengths else float("nan"),
            "completions/mean_terminated_length": _mean(terminated),
            "completions/clipped_ratio": truncated / n if n else float("nan"),
            "mask/conditional_masked_ratio": masked / n if n else float("nan"),
            "mask/truncated_masked_ratio": masked / truncated if truncated else 0.0,
            "temperature": temperature,
            "temperature/stage": float(self.temperature_policy.stage(step)),
            "diversity": diversity(
                [[comps[i].token_ids for i in g] for g in groups[: cfg.temperature.diversity_groups or None]],
                cfg.temperature.diversity_tokens,
            ),
            "diversity/reward_nonconstant_frac": reward_nonconstant_fraction(group_rewards),
            "eval/infra_error_rate": verdicts.get("IE", 0) / n if n else float("nan"),
            "eval/no_answer_rate": verdicts.get("NA", 0) / n if n else float("nan"),
            "num_tokens": float(self.num_tokens),
            "epoch": step * cfg.prompts_per_step / len(self.problems),
        }
        for verdict in ("AC", "WA", "TLE", "MLE", "RE", "CE", "IE", "NA"):
            m[f"verdict/{verdict}"] = verdicts.get(verdict, 0) / n if n else 0.0
        m.update(update)
        return m

    def _sample_rows(
        self,
        step: int,
        idx: Sequence[int],
        comps: Sequence[Completion],
        texts: Sequence[str],
        results: Sequence[RewardResult],
        masks: Sequence[MaskDecision],
        advantages: Sequence[float],
    ) -> list[dict[str, Any]]:
        limit = (
            len(comps) if self.config.samples_per_step < 0 else min(self.config.samples_per_step, len(comps))
        )
        rows = []
        for i in range(limit):
            c = comps[i]
            pi = idx[c.prompt_index]
            rows.append(
                {
                    "step": step,
                    "index": i,
                    "group": c.prompt_index,
                    "problem_id": problem_id(self.problems[pi]),
                    "prompt": self.prompt_texts[pi],
                    "completion": texts[i],
                    "reward": results[i].reward,
                    "verdict": results[i].verdict,
                    "passed": results[i].passed,
                    "total": results[i].total,
                    "length": c.length,
                    "truncated": c.truncated,
                    "masked": masks[i].masked,
                    "advantage": advantages[i],
                }
            )
        return rows

    def close(self) -> None:
        if self._ready:
            self.engine.close()


__all__ = ["MetricsCallback", "SamplesCallback", "TrainResult", "Trainer", "eos_token_ids", "load_causal_lm"]
