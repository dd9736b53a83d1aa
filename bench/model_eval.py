"""Model-evaluation throughput with the tiny local model on CPU: generate vs judge, and their overlap.

    .venv/bin/python bench/model_eval.py [--k 8] [--batch 8] [--max-tokens 48] [--judge-workers 1] [--repeat 3]

Evaluates a tiny Qwen3 (``training.tiny.build_toy_model``, built locally, warm-started on the toy task)
with the transformers source on the toy problems plus the shipped demo problems
(``webapp.demo_problems``, 12 tests each), judged by the real evaluator. The same evaluation runs twice
in this process with the same seeds (so the same samples and verdicts): sequentially (generate a batch,
then judge it) as the baseline, then with judging overlapped with generation (the default). Prints for
each: samples/s, generate and judge busy seconds, the judge's share of the wall time, and
``overlap ratio: X`` with X = wall / max(generate, judge): the sequential run sits near
(generate + judge) / max(...), the overlapped one should approach 1.0. Figures, not a timed test.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _rows() -> list[dict[str, Any]]:
    from training.tiny import toy_problems
    from webapp.demo_problems import demo_records

    return [p.to_export_dict() for p in [*toy_problems(), *demo_records()]]


def _line(label: str, summary: Any) -> tuple[float, list[list[str]]]:
    t = summary.timing
    gen, judge, wall = t["generate_s"], t["judge_s"], t["wall_s"]
    ratio = wall / max(gen, judge)
    print(
        f"{label:<11} samples {int(t['samples_generated']):4d}  {t['samples_generated'] / wall:6.1f} samples/s  "
        f"generate {gen:6.2f}s  judge {judge:6.2f}s  wall {wall:6.2f}s  judge share {judge / wall:5.1%}  "
        f"overlap ratio: {ratio:.2f}"
    )
    return ratio, [p.verdicts for p in summary.problems]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--batch", type=int, default=8, help="samples per generation batch")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--judge-workers", type=int, default=1, help="judge processes (1: one core each side)")
    parser.add_argument("--repeat", type=int, default=3, help="alternate sequential / overlapped this many times")
    args = parser.parse_args()

    import torch

    from training.evaluate import EvalSettings, evaluate, make_source
    from training.tiny import build_toy_model

    torch.set_num_threads(1)  # the tiny model runs fastest on one thread; the judge gets the other cores
    rows = _rows()
    settings = EvalSettings(
        k=args.k, temperature=1.0, top_p=1.0, max_tokens=args.max_tokens, seed=0, judge_workers=args.judge_workers
    )
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_toy_model(Path(tmp) / "model", sft_steps=150)
        source = make_source("transformers", str(model_dir), device="cpu", batch_size=args.batch)
        evaluate(rows[:2], source, EvalSettings(k=2, max_tokens=8, judge_workers=args.judge_workers))  # warm-up
        print(
            f"tiny Qwen3 on CPU, {len(rows)} problems x k={args.k}, batches of {args.batch}, "
            f"max {args.max_tokens} new tokens, {args.judge_workers} judge workers"
        )
        seq_ratios, ovl_ratios = [], []
        for _ in range(args.repeat):
            seq_summary = evaluate(rows, source, settings, overlap=False)
            seq, seq_v = _line("sequential", seq_summary)
            ovl_summary = evaluate(rows, source, settings, overlap=True)
            ovl, ovl_v = _line("overlapped", ovl_summary)
            seq_ratios.append(seq)
            ovl_ratios.append(ovl)
            walls = [s.timing["wall_s"] for s in (seq_summary, ovl_summary)]
            print(f"same samples and verdicts in both runs: {seq_v == ovl_v}; wall sequential / overlapped: "
                  f"{walls[0] / walls[1]:.2f}x")
    best_seq, best_ovl = min(seq_ratios), min(ovl_ratios)
    print(f"overlap ratio (best of {args.repeat}): sequential {best_seq:.2f}, overlapped {best_ovl:.2f}")


if __name__ == "__main__":
    main()
