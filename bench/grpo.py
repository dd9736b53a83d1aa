"""Seconds per GRPO step: this trainer against TRL's GRPOTrainer, measured in the same run (CPU).

    .venv/bin/python bench/grpo.py [--steps 12] [--warmup 2] [--prompts 4] [--group 8] [--length 32]
    .venv/bin/python bench/grpo.py --gpu [--model PATH_OR_HF_ID] [--prompts 64] [--group 8] [--length 4096]

CPU (default): both trainers train the same locally built tiny Qwen3 (``training.tiny``, warm-started
on the toy coding task) with the same prompts, prompts per step, group size, response cap,
temperature, learning rate, clip range (0.2 / 0.28), token-level loss, no KL, one update per rollout
and one forward/backward over the whole batch, and the same reward (the real evaluator through
``training.rewards``). For the same work, ``skip_zero_advantage`` is off in the compared runs (TRL
forwards every sample); a last figure shows our default with it on. Ours runs twice on the same work:
judging the whole batch after generation (``reward.overlap=false``, what TRL does) and judging each
response in a background thread the moment it ends while the rest still generate (the default). A
step is measured end to end (generation + reward + update) as the interval between consecutive step
ends, after ``--warmup`` steps. Prints the times, mean completion lengths (so the work is visibly
comparable), our split (generate / judge busy time / the part of judging not hidden behind
generation / update) and the ratios ours / TRL. Target: <= 0.7x with the judge overlapped.

GPU (``--gpu``): vLLM rollout throughput (generated tokens per second for one step's batch) and the
split of our step time into generate / reward / update over ``--steps`` steps with rollout.engine=vllm.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _ours(
    model_dir: Path,
    out: Path,
    args: argparse.Namespace,
    *,
    skip_zero: bool,
    overlap: bool = True,
    engine: str = "transformers",
    device: str = "cpu",
    micro_batch: int | None = None,
    before_train: Callable[[Any], None] | None = None,
) -> list[dict[str, float]]:
    from training.config import load_config
    from training.tiny import toy_problems
    from training.trainer import Trainer

    cfg = load_config(
        None,
        {
            "model": str(model_dir),
            "output_dir": str(out),
            "device": device,
            "max_steps": args.steps,
            "group_size": args.group,
            "prompts_per_step": args.prompts,
            "minibatch_prompts": args.prompts,  # one update per rollout, as TRL's default num_iterations=1
            "micro_batch_size": micro_batch or args.prompts * args.group,
            "learning_rate": args.lr,
            "max_response_length": args.length,
            "max_prompt_length": 512,
            "temperature.value": args.temperature,
            "checkpoint_interval": 0,
            "resume": False,
            "samples_per_step": 0,
            "skip_zero_advantage": skip_zero,
            "seed": args.seed,
            "cpu_threads": args.threads if device == "cpu" else 0,
            "rollout.engine": engine,
            "reward.workers": args.workers,
            "reward.overlap": overlap,
            "dataset.release": args.release or "",
        },
    )
    stamps: list[float] = []
    metrics: list[dict[str, float]] = []

    def on_metrics(step: int, m: dict[str, float]) -> None:
        stamps.append(time.perf_counter())
        metrics.append(m)

    problems = None if args.release else toy_problems()
    trainer = Trainer(cfg, on_metrics=on_metrics, write_logs=False, problems=problems)
    trainer.setup()
    if before_train is not None:
        before_train(trainer)
    start = time.perf_counter()
    try:
        trainer.train()
    finally:
        trainer.close()
    ends = [start, *stamps]
    for m, a, b in zip(metrics, ends, ends[1:]):
        m["bench/step_s"] = b - a
    return metrics


def _trl(model_dir: Path, out: Path, args: argparse.Namespace) -> list[dict[str, float]]:
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer, TrainerCallback
    from transformers.trainer_callback import PrinterCallback, ProgressCallback
    from trl import GRPOConfig, GRPOTrainer

    from training.config import RewardConfig
    from training.data import prompt_text
    from training.rewards import score_completions
    from training.tiny import toy_problems
    from training.trainer import load_causal_lm

    problems = toy_problems()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = load_causal_lm(str(model_dir), torch.float32, torch.device("cpu"))
    eos = tokenizer.eos_token_id
    rows = [{"prompt": prompt_text(p), "problem_index": i} for i, p in enumerate(problems)]
    dataset = Dataset.from_list(rows * max(1, (args.steps + 2) * args.prompts // len(rows) + 1))
    reward_cfg = RewardConfig(workers=args.workers)

    def evaluator_reward(
        prompts: list[str],
        completions: list[str],
        completion_ids: list[list[int]],
        problem_index: list[int],
        **_: Any,
    ) -> list[float | None]:
        truncated = [len(ids) >= args.length and (not ids or ids[-1] != eos) for ids in completion_ids]
        results = score_completions([problems[i] for i in problem_index], completions, truncated, reward_cfg)
        return [r.reward for r in results]

    stamps: list[float] = []
    lengths: list[float] = []

    class Clock(TrainerCallback):  # type: ignore[misc]
        def on_step_end(self, *a: Any, **k: Any) -> None:
            stamps.append(time.perf_counter())

        def on_log(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            logs = kwargs.get("logs")
            if logs and "completions/mean_length" in logs:
                lengths.append(float(logs["completions/mean_length"]))

    config = GRPOConfig(
        output_dir=str(out),
        use_cpu=True,
        bf16=False,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        max_steps=args.steps,
        learning_rate=args.lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        seed=args.seed,
        per_device_train_batch_size=args.prompts * args.group,
        gradient_accumulation_steps=1,
        steps_per_generation=1,
        num_generations=args.group,
        num_iterations=1,
        max_completion_length=args.length,
        temperature=args.temperature,
        top_p=1.0,
        top_k=0,
        beta=0.0,
        epsilon=0.2,
        epsilon_high=0.28,
        loss_type="dapo",
        scale_rewards="group",
        mask_truncated_completions=False,
        disable_dropout=True,
        log_completions=False,
        dataloader_num_workers=0,
        disable_tqdm=True,
        log_level="error",
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[evaluator_reward],
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[Clock()],
    )
    for quiet in (PrinterCallback, ProgressCallback):
        trainer.remove_callback(quiet)
    start = time.perf_counter()
    trainer.train()
    ends = [start, *stamps]
    return [
        {"bench/step_s": b - a, "completions/mean_length": lengths[i] if i < len(lengths) else float("nan")}
        for i, (a, b) in enumerate(zip(ends, ends[1:]))
    ]


def _summary(name: str, metrics: list[dict[str, float]], warmup: int) -> float:
    kept = metrics[warmup:]
    step = statistics.mean(m["bench/step_s"] for m in kept)
    length = statistics.mean(m.get("completions/mean_length", float("nan")) for m in kept)
    split = ""
    if "timing/generate_s" in kept[0]:

        def avg(key: str) -> float:
            return statistics.mean(m.get(key, 0.0) for m in kept)

        split = (
            f"   [generate {avg('timing/generate_s'):.3f}, judge {avg('timing/reward_s'):.3f} "
            f"of which waited for {avg('timing/reward_wait_s'):.3f}, update {avg('timing/update_s'):.3f}]"
        )
    print(
        f"{name:<44} {step:7.3f} s/step   mean completion length {length:5.1f}   ({len(kept)} steps){split}"
    )
    return step


def run_cpu(args: argparse.Namespace) -> None:
    import logging

    import torch

    logging.getLogger("training").setLevel(logging.ERROR)

    torch.set_num_threads(args.threads)
    from training.tiny import build_toy_model

    with tempfile.TemporaryDirectory() as tmp:
        model_dir = (
            Path(args.model)
            if args.model
            else build_toy_model(
                Path(tmp) / "model", hidden_size=args.hidden, intermediate_size=2 * args.hidden
            )
        )
        print(
            f"tiny Qwen3 at {model_dir}; {args.prompts} prompts x {args.group} samples, "
            f"<= {args.length} tokens, "
            f"T={args.temperature}, {args.steps} steps ({args.warmup} warm-up), torch threads {args.threads}"
        )
        trl = _summary("TRL GRPOTrainer", _trl(model_dir, Path(tmp) / "trl", args), args.warmup)
        serial = _summary(
            "MicroCoder-GRPO (same work, judge after gen.)",
            _ours(model_dir, Path(tmp) / "a", args, skip_zero=False, overlap=False),
            args.warmup,
        )
        ours = _summary(
            "MicroCoder-GRPO (same work, judge overlapped)",
            _ours(model_dir, Path(tmp) / "b", args, skip_zero=False, overlap=True),
            args.warmup,
        )
        default = _summary(
            "MicroCoder-GRPO (default: overlapped, skip A=0)",
            _ours(model_dir, Path(tmp) / "c", args, skip_zero=True, overlap=True),
            args.warmup,
        )
        print(
            f"ratio ours / TRL: {serial / trl:.2f}x (same work, judge after generation), "
            f"{ours / trl:.2f}x (same work, judge overlapped), {default / trl:.2f}x (default); "
            "target <= 0.7x overlapped"
        )


def run_gpu(args: argparse.Namespace) -> None:
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("--gpu needs a CUDA device")
    from training.tiny import build_toy_model

    def throughput(trainer: Any) -> None:
        # The trainer's own colocated engine: one vLLM instance per process (vLLM frees GPU memory poorly).
        engine = trainer.engine
        prompts = [trainer.prompt_ids[i % len(trainer.prompt_ids)] for i in range(args.prompts)]
        kwargs = {"n": args.group, "temperature": args.temperature, "max_new_tokens": args.length}
        engine.generate(prompts, seed=0, **kwargs)  # warm-up (CUDA graphs, allocator)
        t0 = time.perf_counter()
        comps = engine.generate(prompts, seed=1, **kwargs)
        dt = time.perf_counter() - t0
        tokens = sum(c.length for c in comps)
        print(
            f"vLLM rollout: {tokens} tokens in {dt:.2f} s = {tokens / dt:,.0f} tokens/s "
            f"({args.prompts} prompts x {args.group} samples, <= {args.length} tokens)"
        )

    with tempfile.TemporaryDirectory() as tmp:
        # head_dim 64 (a size every vLLM attention backend supports) and room for long responses.
        model_dir = (
            Path(args.model)
            if args.model
            else build_toy_model(
                Path(tmp) / "model",
                hidden_size=256,
                intermediate_size=512,
                num_heads=4,
                num_kv_heads=2,
                max_position_embeddings=args.length + 1024,
            )
        )
        metrics = _ours(
            model_dir,
            Path(tmp) / "gpu",
            args,
            skip_zero=True,
            engine="vllm",
            device="cuda",
            micro_batch=args.micro_batch,
            before_train=throughput,
        )
        kept = metrics[args.warmup :]
        for key in ("timing/generate_s", "timing/reward_s", "timing/update_s", "timing/step_s"):
            print(f"{key:<20} {statistics.mean(m[key] for m in kept):8.3f} s")
        print(f"{'rollout/tokens_per_s':<20} {statistics.mean(m['rollout/tokens_per_s'] for m in kept):8.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gpu", action="store_true", help="vLLM rollout tokens/s and the step-time split")
    parser.add_argument("--model", help="model directory or HF id (default: build the tiny toy model)")
    parser.add_argument("--release", help="dataset release JSONL for --gpu runs (default: the toy problems)")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=64, help="hidden size of the CPU tiny model")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument(
        "--lr",
        type=float,
        default=1e-5,
        help="small by default so both policies stay near the start and lengths stay comparable",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (both trainers)")
    parser.add_argument("--workers", type=int, default=2, help="evaluator workers (both trainers)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--micro-batch", type=int, default=8, help="--gpu: sequences per forward/backward")
    args = parser.parse_args()
    if args.warmup >= args.steps:
        parser.error("--warmup must be smaller than --steps")
    (run_gpu if args.gpu else run_cpu)(args)


if __name__ == "__main__":
    main()
