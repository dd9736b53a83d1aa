"""Memory planner figures: planned per-GPU memory of a few configs, and the plan against a measured CPU peak.

    python bench/memory_plan.py

Part 1 prints ``training.memory_plan`` for Qwen3-1.7B with the product defaults and with the settings
the planner's advice leads to. Part 2 measures the trainer's update of a tiny Qwen3 on CPU
(``training.memory_probe``: peak resident size of a subprocess) and prints the plan's ratio to it, with and
without gradient checkpointing.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from training.config import config_from_dict  # noqa: E402
from training.memory_plan import GIB, KNOWN_SHAPES, ModelShape, plan_memory  # noqa: E402
from training.memory_probe import TINY_SHAPE, measure, tiny_update_config  # noqa: E402

TINY = TINY_SHAPE


def main() -> None:
    shape = KNOWN_SHAPES["qwen/qwen3-1.7b"]
    configs = {
        "defaults (8K responses, micro-batch 4, transformers engine)": {},
        "+ gradient checkpointing, micro-batch 1, vLLM at 0.3": {
            "gradient_checkpointing": True,
            "micro_batch_size": 1,
            "rollout": {"engine": "vllm", "gpu_memory_utilization": 0.3},
        },
        "vLLM at 0.3, micro-batches of memory.micro_batch_tokens 32768 (checkpointing by size)": {
            "memory": {"micro_batch_tokens": 32768},
            "rollout": {"engine": "vllm", "gpu_memory_utilization": 0.3},
        },
    }
    print("Qwen3-1.7B on one H200 (139.8 GiB):")
    for label, values in configs.items():
        plan = plan_memory(config_from_dict({"model": shape.name, **values}), shape)
        verdict = "fits" if plan.fits else "does not fit"
        print(f"  {label}: {plan.total_bytes / GIB:.1f} GiB, {verdict}")
        acts = next(c for c in plan.components if c.key == "activations")
        print(f"    {acts.label}: {acts.bytes / GIB:.1f} GiB ({acts.note})")
        for advice in plan.advice:
            print(f"    - {advice}")
    print(
        "\nTiny Qwen3 update on CPU (4 x 512 tokens, vocabulary 32768: 512-token log-prob chunks), plan vs measured peak:"
    )
    for checkpointing in (False, True):
        config = tiny_update_config(checkpointing=checkpointing)
        measured = measure(TINY, config)
        plan = plan_memory(config_from_dict(config), ModelShape.from_hf_config("tiny", TINY))
        planned = sum(c.bytes for c in plan.components if c.phase == "update")
        print(
            f"  checkpointing={checkpointing}: planned {planned / 1e6:.1f} MB, measured "
            f"{measured['total'] / 1e6:.1f} MB, ratio {planned / measured['total']:.3f}"
        )


if __name__ == "__main__":
    main()
