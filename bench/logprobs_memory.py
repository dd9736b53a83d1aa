"""Peak memory of log-probabilities + backward: the full-logits method against the chunked head (CPU).

    .venv/bin/python bench/logprobs_memory.py [--seq 4096] [--vocab 151936] [--hidden 64]

Each measurement runs in a fresh subprocess: it builds hidden states (seq x hidden) and a head
(vocab x hidden), notes its resident set size, then computes log p(targets) at T = 1.2 and runs the
backward pass of their sum; the figure is the peak resident set size (``VmHWM``) above the noted
baseline, i.e. what the log-prob computation itself added at its peak.

- ``full``: what ``training.update.completion_logprobs`` did before: the model's head over every
  position (seq x vocab float32 logits) then ``training.loss.selective_log_softmax``;
- ``chunked``: ``training.logprobs.chunked_logprobs`` (logits of one chunk of tokens at a time,
  recomputed in the backward pass).

Prints both peaks, their ratio, the chunked peak at a quarter of the sequence length (it should not
grow with the length) and the largest difference of the gradients (``--check``, on a smaller size).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _status_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _rss_kib() -> int:
    return _status_kib("VmRSS")


def child(method: str, seq: int, vocab: int, hidden: int) -> dict[str, float]:
    """One measurement in this process (run it in a fresh one): peak MiB above the baseline."""
    sys.path.insert(0, str(ROOT))
    import time

    import torch

    torch.set_num_threads(1)
    from training.logprobs import chunked_logprobs
    from training.loss import selective_log_softmax

    gen = torch.Generator().manual_seed(0)
    h = torch.randn(seq, hidden, generator=gen, requires_grad=True)
    w = (torch.randn(vocab, hidden, generator=gen) * 0.05).requires_grad_(True)
    targets = torch.randint(0, vocab, (seq,), generator=gen)
    # Warm the allocator and the kernels on a tiny problem first, so the baseline holds them.
    warm_h = torch.randn(4, hidden, requires_grad=True)
    chunked_logprobs(warm_h, w[:32], targets[:4] % 32)[0].sum().backward()
    selective_log_softmax((warm_h @ w[:32].t())[None], (targets[:4] % 32)[None], 1.2).sum().backward()
    w.grad = None
    base = _rss_kib()
    t0 = time.perf_counter()
    if method == "full":
        logits = h @ w.t()  # the model's lm_head over every completion position
        logp = selective_log_softmax(logits[None], targets[None], 1.2)[0]
    elif method == "chunked":
        logp, _ = chunked_logprobs(h, w, targets, 1.2)
    else:
        raise SystemExit(f"unknown method {method!r}")
    logp.sum().backward()
    seconds = time.perf_counter() - t0
    # VmHWM: this process image's own peak RSS. Not ru_maxrss: Linux carries it over from the process
    # that spawned us (fork/vfork + exec keep the larger of the two), so a child of a big pytest process
    # would report the parent's size for every method.
    peak = _status_kib("VmHWM")
    return {"peak_mib": max(0, peak - base) / 1024, "seconds": seconds}


def measure(method: str, seq: int, vocab: int, hidden: int) -> dict[str, float]:
    """``child`` in a fresh Python process (so earlier peaks do not hide this one)."""
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", method, str(seq), str(vocab), str(hidden)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def gradient_difference(seq: int, vocab: int, hidden: int) -> tuple[float, float]:
    """Largest |difference| of log-probs and of gradients (hidden and head) between the two methods."""
    sys.path.insert(0, str(ROOT))
    import torch

    from training.logprobs import chunked_logprobs
    from training.loss import selective_log_softmax

    gen = torch.Generator().manual_seed(1)
    h = torch.randn(seq, hidden, generator=gen)
    w = torch.randn(vocab, hidden, generator=gen) * 0.05
    targets = torch.randint(0, vocab, (seq,), generator=gen)
    weights = torch.randn(seq, generator=gen)
    results = []
    for method in ("full", "chunked"):
        hh, ww = h.clone().requires_grad_(True), w.clone().requires_grad_(True)
        if method == "full":
            logp = selective_log_softmax((hh @ ww.t())[None], targets[None], 1.2)[0]
        else:
            logp, _ = chunked_logprobs(hh, ww, targets, 1.2, chunk_tokens=97)
        (logp * weights).sum().backward()
        assert hh.grad is not None and ww.grad is not None
        results.append((logp.detach(), hh.grad, ww.grad))
    (a, ah, aw), (b, bh, bw) = results
    return float((a - b).abs().max()), float(max((ah - bh).abs().max(), (aw - bw).abs().max()))


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))))
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seq", type=int, default=4096, help="tokens of the sequence")
    parser.add_argument("--vocab", type=int, default=151_936, help="vocabulary size (Qwen3: 151,936)")
    parser.add_argument(
        "--hidden", type=int, default=64, help="hidden size (small: the head is not the point)"
    )
    args = parser.parse_args()
    full = measure("full", args.seq, args.vocab, args.hidden)
    chunked = measure("chunked", args.seq, args.vocab, args.hidden)
    quarter = measure("chunked", args.seq // 4, args.vocab, args.hidden)
    logits_mib = args.seq * args.vocab * 4 / 2**20
    print(
        f"seq {args.seq} x vocab {args.vocab} (one float32 logits copy = {logits_mib:,.0f} MiB), hidden {args.hidden}"
    )
    print(f"full logits + log_softmax : peak +{full['peak_mib']:8,.0f} MiB   {full['seconds']:.2f} s")
    print(f"chunked head (ours)       : peak +{chunked['peak_mib']:8,.0f} MiB   {chunked['seconds']:.2f} s")
    print(f"chunked at seq {args.seq // 4:<10}  : peak +{quarter['peak_mib']:8,.0f} MiB")
    print(f"peak ratio full / chunked: {full['peak_mib'] / max(chunked['peak_mib'], 1e-9):.1f}x")
    dv, dg = gradient_difference(512, 4096, args.hidden)
    print(f"max |difference| at seq 512 x vocab 4096: log-probs {dv:.2e}, gradients {dg:.2e}")


if __name__ == "__main__":
    main()
