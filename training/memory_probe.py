"""Measure the peak memory of the trainer's update on CPU, to check ``training.memory_plan`` against.

``measure(shape, config)`` runs ``python -m training.memory_probe SHAPE CONFIG`` in a subprocess and
returns ``{"total", "state", "params"}`` in bytes. The subprocess builds a Qwen3 of ``shape`` (a
``config.json``-like mapping, random weights) and runs the trainer's own ``policy_update`` (forward,
log-probs, loss, backward, AdamW step) twice on one micro-batch of full-length samples. Memory is the
process's resident size from /proc: glibc is told to serve every allocation above 64 KiB with mmap
(``MALLOC_MMAP_THRESHOLD_``), so freed tensors leave the resident set at once and it tracks the live
tensors; a warm-up update on a throwaway model pays for lazy imports, kernels and arenas first; then the
baseline is read, the kernel's peak counter (VmHWM) is reset through ``/proc/self/clear_refs``, and the
peak over model creation and both updates (the second one with AdamW's moments alive) is VmHWM minus the
baseline (``total``); ``state`` is the resident growth after the first update (weights, gradients and
moments). Linux only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


#: the tiny Qwen3 the planner is checked against (tests/training/test_memory_plan.py, bench/memory_plan.py):
#: 4 layers, hidden 128, vocabulary 32768, so the log-prob head runs in 512-token chunks
TINY_SHAPE: dict[str, Any] = {
    "hidden_size": 128,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "vocab_size": 32768,
    "intermediate_size": 512,
    "tie_word_embeddings": True,
}


def tiny_update_config(*, checkpointing: bool) -> dict[str, Any]:
    """The run config of the measured update: one 4 x 512-token micro-batch on CPU."""
    return {
        "model": "tiny",
        "device": "cpu",
        "micro_batch_size": 4,
        "max_prompt_length": 64,
        "max_response_length": 448,
        "prompts_per_step": 2,
        "group_size": 2,
        "minibatch_prompts": 2,
        "gradient_checkpointing": checkpointing,
    }


def measure(shape: dict[str, Any], config: dict[str, Any], *, timeout_s: float = 300.0) -> dict[str, int]:
    """Peak bytes of the update of ``config`` on a model of ``shape``, measured in a subprocess."""
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "training.memory_probe", json.dumps(shape), json.dumps(config)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=timeout_s,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"memory probe failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _status(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {key}")


def _main(shape: dict[str, Any], cfg_dict: dict[str, Any]) -> dict[str, int]:
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from training.config import config_from_dict
    from training.masking import MaskDecision
    from training.rollout.base import Completion
    from training.update import ForwardSetup, policy_update

    torch.set_num_threads(1)
    cfg = config_from_dict(cfg_dict)
    b, p, c = cfg.micro_batch_size, cfg.max_prompt_length, cfg.max_response_length

    def model_of(layers: int, vocab: int) -> Any:
        config = Qwen3Config(
            **{
                **shape,
                "num_hidden_layers": layers,
                "vocab_size": vocab,
                "max_position_embeddings": p + c + 8,
            }
        )
        torch.manual_seed(0)
        model = Qwen3ForCausalLM(config)
        if cfg.gradient_checkpointing:
            model.gradient_checkpointing_enable()
        model.train()
        return model

    def update(model: Any, opt: Any, vocab: int) -> None:
        g = torch.Generator().manual_seed(0)
        prompts = [torch.randint(0, vocab, (p,), generator=g).tolist() for _ in range(b)]
        comps = [
            Completion(i, torch.randint(0, vocab, (c,), generator=g).tolist(), [-1.0] * c, True, 1.0)
            for i in range(b)
        ]
        masks = [MaskDecision(False, True, True, True, False)] * b
        rewards = [float(i % 2) for i in range(b)]
        setup = ForwardSetup(pad_id=0, device=torch.device("cpu"), autocast_dtype=None)
        policy_update(cfg, model, opt, setup, prompts, comps, rewards, masks, [r - 0.5 for r in rewards], 1.0)

    warm = model_of(1, 256)
    update(warm, torch.optim.AdamW(warm.parameters(), lr=1e-6), 256)
    del warm
    base = _status("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM (the peak resident size) to the current size
    model = model_of(int(shape["num_hidden_layers"]), int(shape["vocab_size"]))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-6)
    update(model, opt, int(shape["vocab_size"]))  # allocates the AdamW moments
    state = _status("VmRSS")
    update(model, opt, int(shape["vocab_size"]))  # steady state: the moments exist during forward/backward
    peak = _status("VmHWM")
    return {"total": peak - base, "state": state - base, "params": sum(x.numel() for x in model.parameters())}


if __name__ == "__main__":
    print(json.dumps(_main(json.loads(sys.argv[1]), json.loads(sys.argv[2]))))
