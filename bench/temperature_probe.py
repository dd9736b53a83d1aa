"""How large must the diversity-selection probe be? Noise over seeds vs the gap between candidate T's.

    .venv/bin/python bench/temperature_probe.py [--seeds 5] [--sizes 4,8,16,32] [--group-size 8]

The ``diversity`` temperature policy (``temperature.policy = diversity``) samples the initial policy at
each candidate temperature and picks the lowest one whose ``diversity`` reaches the target. That rule
is only meaningful when the probe's own noise is smaller than the difference it is asked to resolve.
On the toy task's tiny model (``training.tiny``, built here, nothing downloaded) this script measures,
for each probe size P (groups of ``group_size`` samples, prompts cycling over the toy problems):

- ``spread``: the standard deviation of the probe's diversity over ``--seeds`` sampling seeds, at each
  candidate temperature (the worst candidate is reported, and the mean);
- ``gap``: the smallest difference between the mean diversities of neighbouring candidates;
- ``spread/gap``: the worst spread over the smallest gap (conservative: they may belong to different
  candidates); ``pair_worst``: for each pair of neighbouring candidates, the larger of their two
  spreads over their own gap, the worst pair reported. Below 1 the probe separates every pair of
  neighbouring candidates; the smallest P where it is below 1 is what the default
  ``temperature.selection_prompts`` should at least be on this model.

The tiny model is not Qwen3: its numbers say how the noise shrinks with P (about 1/sqrt(P)) and give a
floor, not the value a 1.7B model needs; rerun on the real model (``--model``) when one is at hand.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from training.config import load_config  # noqa: E402
from training.temperature import probe_diversity  # noqa: E402
from training.tiny import build_toy_model, toy_problems, write_release  # noqa: E402
from training.trainer import Trainer  # noqa: E402

CANDIDATES = (0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sizes", default="4,8,16,32", help="probe sizes P (groups) to compare")
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=24, help="diversity_tokens (the toy answers are short)")
    parser.add_argument("--model", default="", help="a model directory; default: build the toy model")
    args = parser.parse_args()
    torch.set_num_threads(1)
    sizes = [int(x) for x in args.sizes.split(",")]

    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or str(build_toy_model(Path(tmp) / "model", sft_steps=150))
        release = write_release(toy_problems(), Path(tmp) / "toy.jsonl")
        cfg = load_config(
            None,
            {
                "model": model,
                "dataset.release": str(release),
                "output_dir": str(Path(tmp) / "run"),
                "device": "cpu",
                "cpu_threads": 1,
                "max_response_length": args.tokens,
                "max_prompt_length": 128,
                "group_size": args.group_size,
                "prompts_per_step": 4,
                "minibatch_prompts": 4,
            },
        )
        trainer = Trainer(cfg, write_logs=False)
        trainer.setup()
        n_problems = len(trainer.prompt_ids)
        print(
            f"model={'toy (training.tiny)' if not args.model else args.model} problems={n_problems} "
            f"group_size={args.group_size} tokens={args.tokens} seeds={args.seeds} candidates={CANDIDATES}"
        )
        print(
            f"{'P':>4} {'spread_max':>10} {'spread_mean':>11} {'gap_min':>8} {'spread/gap':>10} "
            f"{'pair_worst':>10} {'s':>6}"
        )
        for size in sizes:
            prompts = [trainer.prompt_ids[i % n_problems] for i in range(size)]
            t0 = time.perf_counter()
            per_t: dict[float, list[float]] = {}
            for t in CANDIDATES:
                per_t[t] = [
                    probe_diversity(
                        trainer.engine,
                        prompts,
                        group_size=args.group_size,
                        temperature=t,
                        max_tokens=args.tokens,
                        seed=1_000 * s + int(t * 100),
                    )
                    for s in range(args.seeds)
                ]
            means = [statistics.fmean(per_t[t]) for t in CANDIDATES]
            spreads = [statistics.stdev(per_t[t]) for t in CANDIDATES]
            gap = min(abs(b - a) for a, b in zip(means, means[1:]))
            ratio = max(spreads) / gap if gap > 0 else float("inf")
            pair = max(
                max(spreads[k], spreads[k + 1]) / abs(means[k + 1] - means[k])
                if means[k + 1] != means[k]
                else float("inf")
                for k in range(len(CANDIDATES) - 1)
            )
            print(
                f"{size:>4} {max(spreads):>10.4f} {statistics.fmean(spreads):>11.4f} {gap:>8.4f} "
                f"{ratio:>10.2f} {pair:>10.2f} {time.perf_counter() - t0:>6.1f}"
            )
            print("     mean diversity by T: " + " ".join(f"{t}:{m:.3f}" for t, m in zip(CANDIDATES, means)))
        trainer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
