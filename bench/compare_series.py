"""Comparison page benchmark: 20 runs x 10,000 steps x the page's 10 metrics, bucketed vs the full series.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/compare_series.py

Creates a scratch test database (``TEST_DATABASE_NAME``, default ``bench_compare_series``; dropped at the
end), records the runs' metrics with the bulk path, then times, through the full Django stack (session
auth, view, JSON), what the comparison page fetches:

1. ``GET /api/runs/compare/?runs=<20 ids>&metrics=<10>&points=300`` (what the page asks for its
   ~600 px charts): one request, every series bucketed
   on the server (mean, min, max, count per bucket; summaries from the full series);
2. the naive full-series response: each run's ``GET /api/runs/<id>/metrics/?names=<10>&max_points=20000``
   (10,000 points fit, so every point comes back: what an overlay without server-side buckets would load).

Prints p50/p95 of each, the bytes sent and the ratio naive / bucketed. A third line times the bucket math
alone (``compare_series`` without HTTP and JSON).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
os.environ.setdefault("TEST_DATABASE_NAME", "bench_compare_series")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def fmt(samples: list[float]) -> str:
    return f"p50 {percentile(samples, 0.5) * 1000:8.1f} ms   p95 {percentile(samples, 0.95) * 1000:8.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--points", type=int, default=300)  # what the page asks: 1 bucket per 2 px of a chart
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("bench/compare_series.py measures PostgreSQL: set DATABASE_URL=postgresql://...")
    old_config = setup_databases(verbosity=0, interactive=False)
    try:
        run_bench(args)
    finally:
        connection.close()
        teardown_databases(old_config, verbosity=0)


def run_bench(args: argparse.Namespace) -> None:
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from training import services
    from training.models import TrainingRun
    from training.selectors_sweeps import COMPARE_METRICS
    from training.services.series import compare_series

    settings.ALLOWED_HOSTS = ["testserver"]
    names = [n for n in COMPARE_METRICS if n not in ("kl", "clip_ratio/high_mean", "frac_reward_zero_std")]
    steps = np.arange(1, args.steps + 1, dtype=np.int64)
    rng = np.random.default_rng(0)
    run_ids = []
    t0 = time.perf_counter()
    for r in range(args.runs):
        run = TrainingRun.objects.create(name=f"bench-{r}", config={"max_steps": args.steps})
        columns = {
            n: (np.cumsum(rng.normal(0, 0.01, size=args.steps)) + i).tolist() for i, n in enumerate(names)
        }
        services.metrics_bulk_record(run_id=run.pk, steps=steps.tolist(), metrics=columns)
        run_ids.append(run.pk)
    print(
        f"{args.runs} runs x {args.steps:,} steps x {len(names)} metrics = "
        f"{args.runs * args.steps * len(names):,} points (written in {time.perf_counter() - t0:.1f} s)"
    )

    viewer = User.objects.create_user("bench-viewer")
    viewer.groups.add(Group.objects.get_or_create(name="viewer")[0])
    client = Client()
    client.force_login(viewer)
    metrics = ",".join(names)
    compare_url = (
        f"/api/runs/compare/?runs={','.join(map(str, run_ids))}&metrics={metrics}&points={args.points}"
    )

    def bucketed() -> int:
        response = client.get(compare_url)
        assert response.status_code == 200, response.content[:300]
        return len(response.content)

    def naive() -> int:
        size = 0
        for rid in run_ids:
            response = client.get(f"/api/runs/{rid}/metrics/?names={metrics}&max_points=20000")
            assert response.status_code == 200, response.content[:300]
            size += len(response.content)
        return size

    def core() -> int:
        return len(compare_series(run_ids=run_ids, names=names, points=args.points)["metrics"])

    body = json.loads(client.get(compare_url).content)
    returned = sum(len(r["steps"]) for m in body["metrics"].values() for r in m["runs"].values())
    sizes = {"bucketed": bucketed(), "naive": naive()}
    timings: dict[str, list[float]] = {"bucketed": [], "naive": [], "core": []}
    for _ in range(args.repeats):
        for label, fn in (("bucketed", bucketed), ("naive", naive), ("core", core)):
            t0 = time.perf_counter()
            fn()
            timings[label].append(time.perf_counter() - t0)
    print(f"{args.repeats} repeats each, through the Django stack:")
    print(
        f"  bucketed  GET /api/runs/compare/ (points={args.points}): {fmt(timings['bucketed'])}"
        f"   ({returned:,} buckets, {sizes['bucketed']:,} bytes)"
    )
    print(
        f"  naive     {args.runs} x GET /api/runs/<id>/metrics/ in full: {fmt(timings['naive'])}"
        f"   ({args.runs * args.steps * len(names):,} points, {sizes['naive']:,} bytes)"
    )
    print(f"  bucket math alone (compare_series, no HTTP/JSON):   {fmt(timings['core'])}")
    ratio = statistics.median(timings["naive"]) / statistics.median(timings["bucketed"])
    print(f"  ratio naive / bucketed: time p50 {ratio:.1f}x, bytes {sizes['naive'] / sizes['bucketed']:.1f}x")


if __name__ == "__main__":
    main()
