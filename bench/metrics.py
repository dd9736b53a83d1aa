"""Metric storage benchmark: chart reads of a 100,000-step x 40-metric run, chunked vs one row per point.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/metrics.py

Creates a scratch test database (``TEST_DATABASE_NAME``, default ``bench_training_metrics``; dropped at
the end), then:

1. writes 100,000 steps x 40 metrics of one run with the bulk path (``metrics_bulk_record``: packed
   chunks) and, for the baseline, the same points as one row per (run, metric, step) via COPY into an
   indexed table;
2. times ``GET /api/runs/<id>/metrics/?names=<4 metrics>&max_points=1000`` through the full Django
   stack (auth, view, downsampling, JSON) against the naive read: the 4 metrics' 400,000 rows selected
   through the primary-key index and serialized in full (no HTTP stack: favours the baseline);
3. times the live per-step write (``metrics_record``: one step, 40 metrics, one transaction).

Prints p50/p95 of each and the ratio naive / chunked.
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
os.environ.setdefault("TEST_DATABASE_NAME", "bench_training_metrics")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402

NAMES_READ = ["reward", "reward_std", "completions/mean_length", "diversity"]


def metric_names(count: int) -> list[str]:
    base = ["reward", "reward_std", "frac_reward_zero_std", "completions/mean_length", "completions/clipped_ratio",
            "mask/conditional_masked_ratio", "temperature", "temperature/stage", "diversity", "entropy",
            "timing/generate_s", "timing/reward_s", "timing/update_s", "eval/infra_error_rate"]
    return (base + [f"extra/metric_{i:02d}" for i in range(count)])[:count]


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def fmt(samples: list[float]) -> str:
    return f"p50 {percentile(samples, 0.5) * 1000:8.2f} ms   p95 {percentile(samples, 0.95) * 1000:8.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--metrics", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--max-points", type=int, default=1000)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("bench/metrics.py measures PostgreSQL: set DATABASE_URL=postgresql://...")

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
    from training.models import MetricChunk, TrainingRun

    settings.ALLOWED_HOSTS = ["testserver"]
    names = metric_names(args.metrics)
    steps = np.arange(1, args.steps + 1, dtype=np.int64)
    rng = np.random.default_rng(0)
    columns = {name: np.cumsum(rng.normal(0, 0.01, size=args.steps)) + i for i, name in enumerate(names)}
    run = TrainingRun.objects.create(name="bench", config={"max_steps": args.steps})
    points = args.steps * len(names)

    t0 = time.perf_counter()
    services.metrics_bulk_record(run_id=run.pk, steps=steps.tolist(), metrics={k: v for k, v in columns.items()})
    chunk_write_s = time.perf_counter() - t0
    chunk_rows = MetricChunk.objects.filter(run=run).count()
    print(f"points: {args.steps:,} steps x {len(names)} metrics = {points:,}")
    print(f"chunked write (metrics_bulk_record): {chunk_write_s:6.2f} s  -> {chunk_rows:,} rows")

    with connection.cursor() as cur:
        cur.execute(
            "CREATE TABLE bench_metric_point (run_id bigint NOT NULL, name varchar(128) NOT NULL, "
            "step integer NOT NULL, value double precision NOT NULL, PRIMARY KEY (run_id, name, step))"
        )
        t0 = time.perf_counter()
        with cur.connection.cursor().copy("COPY bench_metric_point (run_id, name, step, value) FROM STDIN") as copy:
            for name, values in columns.items():
                for s, v in zip(steps.tolist(), values.tolist()):
                    copy.write_row((run.pk, name, s, v))
        naive_write_s = time.perf_counter() - t0
        cur.execute("ANALYZE bench_metric_point")
        cur.execute(f"ANALYZE {MetricChunk._meta.db_table}")
    print(f"naive write (COPY, one row per point): {naive_write_s:6.2f} s  -> {points:,} rows")

    viewer = User.objects.create_user("bench-viewer")
    viewer.groups.add(Group.objects.get_or_create(name="viewer")[0])
    client = Client()
    client.force_login(viewer)
    url = f"/api/runs/{run.pk}/metrics/?names={','.join(NAMES_READ)}&max_points={args.max_points}"

    def chunked_read() -> bytes:
        response = client.get(url)
        assert response.status_code == 200, response.content[:200]
        return response.content

    def naive_read() -> bytes:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT name, step, value FROM bench_metric_point WHERE run_id = %s AND name = ANY(%s) "
                "ORDER BY name, step",
                [run.pk, NAMES_READ],
            )
            series: dict[str, dict[str, list[float]]] = {n: {"steps": [], "values": []} for n in NAMES_READ}
            for name, step, value in cur.fetchall():
                series[name]["steps"].append(step)
                series[name]["values"].append(value)
        return json.dumps({"run_id": run.pk, "series": series}).encode()

    body = json.loads(chunked_read())
    returned = sum(len(s["steps"]) for s in body["series"].values())
    naive_size = len(naive_read())
    timings: dict[str, list[float]] = {"chunked": [], "naive": []}
    for _ in range(args.repeats):
        for label, fn in (("chunked", chunked_read), ("naive", naive_read)):
            t0 = time.perf_counter()
            fn()
            timings[label].append(time.perf_counter() - t0)
    print(f"\nread {len(NAMES_READ)} metrics ({', '.join(NAMES_READ)}), {args.repeats} repeats each:")
    print(f"  chunked  GET {url.split('?')[0]}?...max_points={args.max_points}: {fmt(timings['chunked'])}"
          f"   ({returned:,} points returned, {len(chunked_read()):,} bytes)")
    print(f"  naive    one row per (step, metric), read in full:      {fmt(timings['naive'])}"
          f"   ({len(NAMES_READ) * args.steps:,} points, {naive_size:,} bytes)")
    ratio50 = statistics.median(timings["naive"]) / statistics.median(timings["chunked"])
    ratio95 = percentile(timings["naive"], 0.95) / percentile(timings["chunked"], 0.95)
    print(f"  ratio naive / chunked: p50 {ratio50:.1f}x   p95 {ratio95:.1f}x")

    live = []
    for i in range(200):
        metrics = {name: float(i) for name in names}
        t0 = time.perf_counter()
        services.metrics_record(run_id=run.pk, step=args.steps + 1 + i, metrics=metrics)
        live.append(time.perf_counter() - t0)
    print(f"\nlive write (metrics_record: 1 step x {len(names)} metrics, 200 steps): {fmt(live)}")


if __name__ == "__main__":
    main()
