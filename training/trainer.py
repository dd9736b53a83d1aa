"""The MicroCoder-GRPO training loop.

One step: choose prompts -> sample G responses each and judge them, refilling groups without signal
under DAPO's dynamic sampling (``training.step_sampling``) -> truncation masks -> rewards (with DAPO's
overlong shaping when on) -> group-relative advantages -> ``updates_per_rollout`` optimizer updates on
fixed minibatches of ``minibatch_prompts`` groups (clipped loss at the training temperature,
``training.update``) at the scheduled learning rate (``training.schedules``) -> sync weights into the
rollout engine -> metrics and sample table -> checkpoint every ``checkpoint_interval`` steps.

Every random choice of a step (prompts, sampling seed, mask draws) is a function of (seed, step), and
checkpoints hold weights, optimizer and RNG states, so a resumed run continues exactly where the
checkpoint was taken. The JSONL logs are cut back to the checkpoint's step on resume: no step is lost
or duplicated. ``on_resume(step)`` tells an outside store (the Django layer) to do the same.

Metric names and their meaning: ``training.metrics_names`` (the one list the docs, pages and tests
share). The rollout-side metrics are computed by ``training.step_metrics``, the update by
``training.update.policy_update``; this module drives the loop and callbacks, checkpoints are saved
and restored by ``training.trainer_checkpoint``. With an
``eval.release`` the policy is also evaluated on that held-out release every ``eval.every_n_steps``
steps and after the last one (``training.heldout``: ``eval/pass@1``, ``eval/pass@k`` in that step's
metrics).

This module imports nothing from Django.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from curation.records import ProblemRecord
from training.checkpoint import JsonlLog, latest_checkpoint, write_text_atomic
from training.config import GRPOConfig
from training.data import encode_prompts, load_release, problem_id
from training.distributed import DistContext
from training.heldout import HeldOutEval
from training.insights import check_config
from training.modeling import (
    enable_gradient_checkpointing,
    eos_token_ids,
    load_causal_lm,
    resolve_autocast,
    resolve_device,
    resolve_dtype,
    wants_gradient_checkpointing,
)
from training.rewards import Judge
from training.rollout import RolloutEngine, make_engine
from training.schedules import learning_rate_at
from training.step_metrics import finite_metrics, sample_rows, step_metrics
from training.step_sampling import Sampler
from training.step_scoring import score_batch
from training.temperature import TemperaturePolicy
from training.trainer_checkpoint import TrainerCheckpoints
from training.update import ForwardSetup, policy_update

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


class Trainer(TrainerCheckpoints):
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
        dist: DistContext | None = None,
    ) -> None:
        self.config = config
        # torchrun: one Trainer per rank (training.distributed); rank 0 alone writes logs and reports.
        self.dist = dist if dist is not None else DistContext.single()
        self.on_metrics = on_metrics
        self.on_samples = on_samples
        self.should_stop = should_stop
        self.on_resume = on_resume
        self.judge = judge
        self.reward_from_verdict = reward_from_verdict
        self.write_logs = write_logs and self.dist.is_main
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
        self.device = self.dist.device(resolve_device(cfg.device))
        self.dtype = resolve_dtype(cfg.dtype)
        self.autocast_dtype = resolve_autocast(cfg.mixed_precision, self.device)
        ckpt = latest_checkpoint(self.output_dir) if cfg.resume else None
        weights_path = str(ckpt / "model") if ckpt is not None else cfg.model
        self.tokenizer = AutoTokenizer.from_pretrained(weights_path)
        self.model = load_causal_lm(weights_path, self.dtype, self.device)
        # Forced, or on by itself for a large model (memory.checkpointing_min_params).
        min_params = cfg.memory.checkpointing_min_params
        if wants_gradient_checkpointing(self.model, cfg.gradient_checkpointing, min_params):
            enable_gradient_checkpointing(self.model)
        self.model.train()
        self.dist.check_batch(cfg.prompts_per_step, cfg.updates_per_rollout)
        self.model = self.dist.shard_model(self.model, self.device)  # FSDP2 under torchrun
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
        self.problem_ids = [problem_id(p) for p in self.problems]
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
            sleep_level=cfg.rollout.sleep_level,
        )
        self.engine = self.dist.wrap_engine(self.engine, self.model)  # samples on unsharded weights
        self.heldout = (
            HeldOutEval(cfg, rollout=self.engine, tokenizer=self.tokenizer, judge=self.judge)
            if cfg.eval.release
            else None
        )
        if self.write_logs:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            write_text_atomic(self.output_dir / "config.yaml", cfg.to_yaml())
        self._ready = True

    # --- temperature selection -------------------------------------------------------------------

    def select_temperature(self) -> None:
        """Diversity-determined T: sample the initial policy at each candidate and apply the rule."""
        result = self.sampler().select_temperature(self.temperature_policy)
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
            if self.dist.any_true(self.should_stop is not None and self.should_stop()):
                stopped = True
                break
            self.step += 1
            metrics, rows = self.train_step(self.step)
            if self.heldout is not None and self.heldout.due(self.step):
                metrics.update(self.heldout.run())  # eval/pass@1 beside this step's reward
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
        if not self.dist.is_main:
            return
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
        cfg = self.config
        return learning_rate_at(
            step,
            peak=cfg.learning_rate,
            schedule=cfg.lr_schedule,
            warmup_steps=cfg.lr_warmup_steps,
            max_steps=cfg.max_steps,
            min_ratio=cfg.lr_min_ratio,
        )

    def sampler(self) -> Sampler:
        """The sampling half of a step (training.step_sampling), on the trainer's current engine."""
        return Sampler(
            config=self.config,
            engine=self.engine,
            dist=self.dist,
            problems=self.problems,
            prompt_ids=self.prompt_ids,
            decode=lambda ids: self.tokenizer.batch_decode(ids, skip_special_tokens=True),
            judge=self.judge,
            reward_from_verdict=self.reward_from_verdict,
        )

    def train_step(self, step: int) -> tuple[dict[str, float], list[dict[str, Any]]]:
        """One full GRPO step; returns (metrics, sample table rows)."""
        cfg = self.config
        g_size = cfg.group_size
        t_step = time.perf_counter()
        temperature = self.temperature_policy.temperature(step)
        # sample and judge (with DAPO's dynamic sampling when on): training.step_sampling
        batch = self.sampler().step_batch(step, temperature)
        idx, comps, texts, results = batch.idx, batch.completions, batch.texts, batch.results
        prompts = [self.prompt_ids[i] for i in idx]
        # This process's share of the prompts (all of them without torchrun); see training.distributed.
        positions = self.dist.prompt_positions(len(prompts), cfg.updates_per_rollout)

        # masks, DAPO's overlong shaping when on, advantages: training.step_scoring
        scored = score_batch(cfg, step, comps, results)
        masks, rewards, adv = scored.masks, scored.rewards, scored.advantages

        t0 = time.perf_counter()
        lr = self.learning_rate(step)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        mine = self.dist.local_rows(positions, g_size)  # this process's rows (all of them without torchrun)
        update = policy_update(
            cfg,
            self.model,
            self.optimizer,
            ForwardSetup(self.pad_id, self.device, self.autocast_dtype),
            prompts,
            [comps[i] for i in mine],
            [scored.train_rewards[i] for i in mine],
            [masks[i] for i in mine],
            [adv.advantages[i] for i in mine],
            temperature,
            reference=self.reference,
            dist=self.dist,
        )
        self.engine.sync_weights(self.model)
        update_s = time.perf_counter() - t0

        self.num_tokens += sum(len(prompts[c.prompt_index]) + c.length for c in comps)
        metrics = step_metrics(
            comps,
            results,
            masks,
            adv.group_std,
            rewards,
            group_size=g_size,
            temperature=temperature,
            temperature_stage=self.temperature_policy.stage(step),
            diversity_groups=cfg.temperature.diversity_groups,
            diversity_tokens=cfg.temperature.diversity_tokens,
            num_tokens=self.num_tokens,
            epoch=step * cfg.prompts_per_step / len(self.problems),
        )
        metrics.update(update)
        if batch.filled is not None:
            metrics.update(batch.filled.metrics())
        metrics.update(scored.metrics())
        metrics.update(
            {
                "rollout/tokens_per_s": (
                    batch.generated_tokens / batch.generate_s if batch.generate_s else 0.0
                ),
                "timing/generate_s": batch.generate_s,
                "timing/reward_s": batch.reward_s,
                "timing/reward_wait_s": batch.reward_wait_s,
                "timing/update_s": update_s,
                "timing/step_s": time.perf_counter() - t_step,
                "learning_rate": lr,
            }
        )
        metrics = finite_metrics(metrics)
        rows = sample_rows(
            step,
            limit=cfg.samples_per_step,
            idx=idx,
            comps=comps,
            texts=texts,
            results=results,
            masks=masks,
            advantages=adv.advantages,
            problem_ids=self.problem_ids,
            prompt_texts=self.prompt_texts,
        )
        return metrics, rows

    def close(self) -> None:
        if self._ready:
            self.engine.close()


__all__ = [
    "MetricsCallback",
    "SamplesCallback",
    "TrainResult",
    "Trainer",
    "eos_token_ids",
    "load_causal_lm",
    "resolve_autocast",
    "resolve_device",
    "resolve_dtype",
]
