"""GPU smoke bench: a few MicroCoder-GRPO steps of a Qwen3-1.7B-shaped model with the vLLM engine.

    bench/gpu_smoke.sh [--steps 3] [--prompts 4] [--group 8] [--length 8192] [--mem 0.35]

For a GPU machine without internet: nothing is downloaded. The model is built locally with
Qwen3-1.7B's shape (28 layers, hidden 2048, MLP 6144, 16 query / 8 KV heads of 128, vocabulary
151,936, tied embeddings) and random weights, in bfloat16, with a small byte-level tokenizer trained
on the spot (``training.tiny.train_tokenizer``; the model's vocabulary stays Qwen's, so the logits
cost is real). Random weights almost never write an end-of-sequence token, so every response runs to
``--length``: the long-response case. Rewards are all 0 (no code block), so ``skip_zero_advantage``
is turned off to make every sample go through the update's forward and backward passes anyway.

It then trains ``--steps`` steps (rollout.engine=vllm with sleep mode, gradient checkpointing, bf16)
and prints, per step and as the mean of the steps after the first (vLLM's first rollout includes
warm-up): rollout tokens/s (generated tokens / generate time), update tokens/s (prompt + response
tokens / update time, weight sync included), the split of the step time (generate / reward / update /
other) and the peak GPU memory: PyTorch's own peak (the policy) and the device-wide peak sampled
every 0.2 s (vLLM's pool included). Finally it frees the trainer and runs the same rollout (same
prompts, samples per prompt, length, temperature and memory share) with a bare ``vllm.LLM`` and
prints its tokens/s and the ratio ours / bare. Checkpoints are not written (not part of a step).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: Qwen3-1.7B's config.json shape
QWEN3_1_7B: dict[str, Any] = {
    "vocab_size": 151936,
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 40960,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
}


class PeakMemory:
    """Device-wide used memory (total - free), sampled in a thread: vLLM's allocations included."""

    def __init__(self, every_s: float = 0.2) -> None:
        self.every_s = every_s
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import torch

        while not self._stop.is_set():
            free, total = torch.cuda.mem_get_info()
            self.peak = max(self.peak, total - free)
            self._stop.wait(self.every_s)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def build_model(out: Path) -> Path:
    """Qwen3-1.7B-shaped model with random weights (bf16) and a small local tokenizer."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from training.data import prompt_text
    from training.tiny import EOS_TOKEN, PAD_TOKEN, TOY_TASKS, toy_problems, train_tokenizer

    texts = [prompt_text(p) for p in toy_problems()] + [program for _, _, program in TOY_TASKS]
    tokenizer: Any = train_tokenizer(texts * 20, vocab_size=512)
    eos_id = tokenizer.convert_tokens_to_ids(EOS_TOKEN)
    pad_id = tokenizer.convert_tokens_to_ids(PAD_TOKEN)
    config = Qwen3Config(**QWEN3_1_7B, bos_token_id=eos_id, eos_token_id=eos_id, pad_token_id=pad_id)
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cuda"):
            model: Any = Qwen3ForCausalLM(config)
    finally:
        torch.set_default_dtype(torch.float32)
    model.generation_config.eos_token_id = eos_id
    model.generation_config.pad_token_id = pad_id
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    del model
    torch.cuda.empty_cache()
    return out


def run_trainer(
    model_dir: Path, work: Path, args: argparse.Namespace
) -> tuple[list[dict[str, float]], int, int]:
    import torch

    from training.config import load_config
    from training.tiny import toy_problems, write_release
    from training.trainer import Trainer

    release = write_release(toy_problems(), work / "toy.jsonl")
    config = load_config(
        None,
        {
            "model": str(model_dir),
            "dataset.release": str(release),
            "output_dir": str(work / "run"),
            "device": "cuda",
            "dtype": "bfloat16",
            "gradient_checkpointing": True,
            "max_steps": args.steps,
            "prompts_per_step": args.prompts,
            "minibatch_prompts": args.prompts,
            "group_size": args.group,
            "max_response_length": args.length,
            "max_prompt_length": 512,
            "micro_batch_size": args.micro_batch,
            "temperature.value": 1.0,
            "skip_zero_advantage": False,
            "checkpoint_interval": 0,
            "samples_per_step": 0,
            "rollout.engine": "vllm",
            "rollout.gpu_memory_utilization": args.mem,
            "rollout.sleep_level": args.sleep_level,
        },
    )
    steps: list[dict[str, float]] = []
    trainer = Trainer(config, on_metrics=lambda step, m: steps.append(dict(m)), write_logs=False)
    trainer.checkpoint = lambda: work  # type: ignore[method-assign,assignment,return-value]
    torch.cuda.reset_peak_memory_stats()
    with PeakMemory() as device_peak:
        try:
            trainer.train()
        finally:
            trainer.close()
    torch_peak = torch.cuda.max_memory_allocated()
    del trainer
    gc.collect()
    torch.cuda.empty_cache()
    return steps, torch_peak, device_peak.peak


def bare_vllm(model_dir: Path, args: argparse.Namespace) -> tuple[float, float]:
    """The same rollout with a bare vllm.LLM: (generated tokens, seconds) of the second of two runs."""
    from transformers import AutoTokenizer
    from vllm import LLM, SamplingParams

    from training.config import PromptConfig
    from training.data import encode_prompts, step_prompt_indices
    from training.tiny import toy_problems

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    problems, ids, _, _ = encode_prompts(tokenizer, toy_problems(), PromptConfig(), 512)
    idx = step_prompt_indices(len(problems), args.prompts, 1, 0)
    llm = LLM(
        model=str(model_dir),
        dtype="bfloat16",
        gpu_memory_utilization=args.mem,
        max_model_len=512 + args.length,
        enable_prefix_caching=True,
        seed=0,
    )
    params = SamplingParams(
        n=args.group, temperature=1.0, top_p=1.0, top_k=-1, max_tokens=args.length, seed=0, detokenize=False
    )
    prompts: Any = [{"prompt_token_ids": ids[i]} for i in idx]
    result = (0.0, 0.0)
    for _ in range(2):  # the first includes warm-up, as our first step does
        t0 = time.perf_counter()
        outs = llm.generate(prompts, sampling_params=params, use_tqdm=False)
        seconds = time.perf_counter() - t0
        result = (float(sum(len(o.token_ids) for r in outs for o in r.outputs)), seconds)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--length", type=int, default=8192, help="max response tokens")
    parser.add_argument("--micro-batch", type=int, default=4)
    parser.add_argument("--mem", type=float, default=0.35, help="rollout.gpu_memory_utilization")
    parser.add_argument("--sleep-level", type=int, default=2)
    parser.add_argument("--workdir", default="", help="where the model is built (default: a temp dir)")
    args = parser.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("error: no CUDA GPU visible", file=sys.stderr)
        return 2
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=args.workdir or None) as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        model_dir = build_model(work / "qwen3-1.7b-shape")
        print(f"model built in {time.perf_counter() - t0:.1f} s ({torch.cuda.get_device_name()})", flush=True)
        steps, torch_peak, device_peak = run_trainer(model_dir, work, args)
        for i, m in enumerate(steps, 1):
            print(
                f"step {i}: generate {m['timing/generate_s']:.1f} s, reward {m['timing/reward_s']:.1f} s, "
                f"update {m['timing/update_s']:.1f} s, step {m['timing/step_s']:.1f} s, "
                f"rollout {m['rollout/tokens_per_s']:.0f} tok/s, mean length {m['completions/mean_length']:.0f}",
                flush=True,
            )
        measured = steps[1:] or steps
        tokens_per_step = (
            args.prompts * args.group * statistics.mean(m["completions/mean_length"] for m in measured)
        )
        gen = statistics.mean(m["timing/generate_s"] for m in measured)
        rew = statistics.mean(m["timing/reward_s"] for m in measured)
        upd = statistics.mean(m["timing/update_s"] for m in measured)
        step_s = statistics.mean(m["timing/step_s"] for m in measured)
        ours_tps = statistics.mean(m["rollout/tokens_per_s"] for m in measured)
        print(f"rollout tokens/s (ours, vLLM engine): {ours_tps:.0f}")
        print(
            f"update tokens/s (responses + prompts, forward+backward, weight sync): {tokens_per_step / upd:.0f}"
        )
        other = max(0.0, step_s - gen - upd)
        print(
            f"step time split: generate {gen:.1f} s ({gen / step_s:.0%}), update {upd:.1f} s "
            f"({upd / step_s:.0%}), reward {rew:.1f} s (overlapped with generation), other {other:.1f} s"
        )
        print(
            f"peak GPU memory: PyTorch {torch_peak / 2**30:.1f} GiB, device-wide {device_peak / 2**30:.1f} GiB"
        )
        bare_tokens, bare_s = bare_vllm(model_dir, args)
        bare_tps = bare_tokens / bare_s if bare_s > 0 else 0.0
        print(f"rollout tokens/s (bare vLLM, same rollout): {bare_tps:.0f}")
        print(f"ratio ours / bare vLLM rollout: {ours_tps / bare_tps:.2f}x" if bare_tps else "ratio: n/a")
    print(f"total wall time: {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
