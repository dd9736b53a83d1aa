"""Difficulty-scoring benchmarks (prints figures and ratios; not a test).

    .venv/bin/python bench/difficulty.py [--problems 10000] [--concurrency 32] [--skip-throughput]

(a) Throughput of the ``openai`` backend: N problems x 3 samples through the official ``openai``
    client (one AsyncOpenAI client, one connection pool) against the local OpenAI-compatible server of
    ``tests/support/openai_server.py`` running in ANOTHER process (so the server's work is not
    billed to the client, and the GIL is not shared).                       target >= 50 problems/s
(b) How well the offline ``heuristic`` score ranks problems: Spearman correlation with LeetCode's
    Easy/Medium/Hard label on LeetCodeDataset v0.2.0-train (where the coefficients and default weights
    were chosen) and v0.3.1-test (held out), and with the CodeContests sample's Codeforces problem
    index (A < B < ...; the sample has no numeric ratings), beside two naive baselines measured in
    the same run: statement length (characters) and reference-solution line count (non-blank lines).
    Skipped with a message when /work/shared/data is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"
TARGET_PROBLEMS_PER_S = 50.0

from curation.difficulty import DIMENSIONS, ProblemInput, get_scorer, score_problems  # noqa: E402

_ANSWERS = [
    json.dumps(
        {
            d: {"score": 1 + (k + i) % 10, "rationale": f"{d}: canned evidence {k}"}
            for i, d in enumerate(DIMENSIONS)
        }
    )
    for k in range(10)
]


def serve() -> None:
    """``--serve``: run the fake endpoint in this process until killed (the bench's server side)."""
    from tests.support.openai_server import FakeOpenAIServer, Reply

    def responder(body: dict, n: int) -> Reply:
        return Reply(content=_ANSWERS[n % 10], prompt_tokens=400, completion_tokens=120)

    server = FakeOpenAIServer(responder).start()
    print(f"READY {server.base_url}", flush=True)
    while True:
        time.sleep(3600)


def throughput(n_problems: int, concurrency: int) -> None:
    print(
        f"(a) openai backend -> local server in a separate process: {n_problems:,} problems x 3 samples, "
        f"concurrency {concurrency}"
    )
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--serve"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.startswith("READY "):
            raise SystemExit(f"the server did not start: {line!r}")
        base_url = line.split(" ", 1)[1]
        statement = "Given an array of n integers (1 <= n <= 2*10^5, |a_i| <= 10^9), answer q queries. " * 12
        problems = [
            ProblemInput(id=f"bench-{i}", statement=statement, tags=("Array",)) for i in range(n_problems)
        ]
        scorer = get_scorer(
            "openai",
            base_url=base_url,
            api_key="bench",
            model="bench-model",
            concurrency=concurrency,
            max_retries=2,
        )
        # warm-up (connection pool, imports) outside the measured window
        list(score_problems(problems[:64], scorer, samples=3, concurrency=concurrency))
        before = scorer.usage  # type: ignore[attr-defined]
        start, cpu_start, server_start = time.perf_counter(), time.process_time(), _cpu_s(proc.pid)
        errors = sum(
            bool(r.error) for r in score_problems(problems, scorer, samples=3, concurrency=concurrency)
        )
        elapsed = time.perf_counter() - start
        client_cpu, server_cpu = time.process_time() - cpu_start, _cpu_s(proc.pid) - server_start
        usage = scorer.usage  # type: ignore[attr-defined]
    finally:
        proc.kill()
        proc.wait()
    requests = usage.requests - before.requests
    rate = n_problems / elapsed
    print(
        f"    {elapsed:.1f} s, {rate:.1f} problems/s, {requests / elapsed:.1f} requests/s, "
        f"errors {errors}, retries {usage.retries - before.retries}, "
        f"tokens {usage.total_tokens - before.total_tokens:,}"
    )
    # The wall-clock rate depends on what else the shared cores run; CPU seconds per problem do not:
    # one free core per side would sustain 1 / (CPU s per problem) problems/s.
    print(
        f"    CPU per problem: client {1000 * client_cpu / n_problems:.2f} ms, "
        f"server {1000 * server_cpu / n_problems:.2f} ms -> with one free core each: "
        f"{n_problems / max(client_cpu, server_cpu):.0f} problems/s"
    )
    print(
        f"    ratio to the 50 problems/s target: {rate / TARGET_PROBLEMS_PER_S:.2f}x "
        f"({'met' if rate >= TARGET_PROBLEMS_PER_S else 'NOT met'})"
    )


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of another process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _spearman(x: list[float], y: list[float]) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(x, y)[0])


def _lines(problem: ProblemInput) -> int:
    if not problem.solutions:
        return 0
    code = problem.solutions[0]
    return sum(1 for line in code.splitlines() if line.strip())


def _rank_table(name: str, problems: list[ProblemInput], target: list[float]) -> None:
    scorer = get_scorer("heuristic")
    results = list(score_problems(problems, scorer, samples=3, concurrency=1))
    scores = [r.score or 0.0 for r in results]
    rho = _spearman(scores, target)
    length = _spearman([float(len(p.statement)) for p in problems], target)
    print(f"    {name:<36} n={len(problems):>5}  heuristic {rho:.3f}   statement length {length:.3f}", end="")
    if any(p.solutions for p in problems):
        lines = _spearman([float(_lines(p)) for p in problems], target)
        print(f"   solution lines {lines:.3f}   (heuristic - lines {rho - lines:+.3f})")
    else:
        print("   solution lines n/a (no solutions in this source)")
    dims = "  ".join(
        f"{d.split('_')[0]} {_spearman([r.dimensions[d] for r in results], target):.2f}" for d in DIMENSIONS
    )
    print(f"    {'':<36} per dimension: {dims}")


def ranking() -> None:
    print("(b) heuristic score vs the platform's own difficulty (Spearman)")
    leetcode = DATA / "leetcodedataset"
    if not leetcode.exists():
        print(f"    skipped: {DATA} is absent (LeetCodeDataset / CodeContests files not available)")
        return
    from curation.importers import get_importer

    labels = {"easy": 1.0, "medium": 2.0, "hard": 3.0}
    for split, fname in (
        ("v0.2.0-train (features tuned here)", "LeetCodeDataset-v0.2.0-train.jsonl.gz"),
        ("v0.3.1-test (held out)", "LeetCodeDataset-v0.3.1-test.jsonl.gz"),
    ):
        problems, target = [], []
        for parsed in get_importer("leetcodedataset").parse(leetcode / fname):
            if parsed.record is None:
                continue
            row = parsed.record.to_export_dict()
            problems.append(ProblemInput.from_row(row))
            target.append(labels[row["difficulty"].lower()])
        _rank_table(f"LeetCodeDataset {split}", problems, target)
    cc = DATA / "codecontests-sample" / "code_contests_sample.jsonl"
    if cc.exists():
        problems, target = [], []
        for parsed in get_importer("codecontests").parse(cc):
            row = parsed.record.to_export_dict() if parsed.record else None
            if row and row["platform"] == "codeforces" and row["difficulty"][:1].isalpha():
                problems.append(ProblemInput.from_row(row))
                target.append(float(ord(row["difficulty"][0].upper()) - ord("A") + 1))
        if len(problems) >= 3:
            _rank_table("CodeContests sample, Codeforces index", problems, target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--skip-ranking", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    if not args.skip_throughput:
        throughput(args.problems, args.concurrency)
    if not args.skip_ranking:
        ranking()


if __name__ == "__main__":
    main()
