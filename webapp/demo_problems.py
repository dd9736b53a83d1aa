"""A handful of original stdin/stdout problems the project ships for the demo and for tests.

They make ``python manage.py demo`` work on a fresh clone without ``../shared/data``. Each problem
has a reference solution and tests generated deterministically from a seed; outputs come from the
pure-Python oracle next to it, so the reference solution is checked by the judge like any import.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from curation.records import ProblemRecord, SolutionRecord, TestRecord


@dataclass(frozen=True)
class _Spec:
    external_id: str
    title: str
    statement: str
    difficulty: str
    tags: tuple[str, ...]
    solution: str
    make_input: Callable[[random.Random], str]
    oracle: Callable[[str], str]


def _pairs_input(rng: random.Random) -> str:
    return f"{rng.randint(-10**9, 10**9)} {rng.randint(-10**9, 10**9)}\n"


def _pairs_oracle(text: str) -> str:
    a, b = map(int, text.split())
    return f"{a + b}\n"


def _array_input(rng: random.Random) -> str:
    n = rng.randint(1, 200)
    return f"{n}\n" + " ".join(str(rng.randint(-1000, 1000)) for _ in range(n)) + "\n"


def _max_subarray_oracle(text: str) -> str:
    nums = list(map(int, text.split()))[1:]
    best = cur = nums[0]
    for x in nums[1:]:
        cur = max(x, cur + x)
        best = max(best, cur)
    return f"{best}\n"


def _mean_oracle(text: str) -> str:
    nums = list(map(int, text.split()))[1:]
    return f"{sum(nums) / len(nums):.6f}\n"


def _words_input(rng: random.Random) -> str:
    words = ["".join(rng.choice("abcde") for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 30))]
    return " ".join(words) + "\n"


def _distinct_oracle(text: str) -> str:
    seen: list[str] = []
    for w in text.split():
        if w not in seen:
            seen.append(w)
    return " ".join(seen) + "\n"


def _grid_input(rng: random.Random) -> str:
    r, c = rng.randint(1, 8), rng.randint(1, 8)
    rows = ["".join(rng.choice("..#") for _ in range(c)) for _ in range(r)]
    return f"{r} {c}\n" + "\n".join(rows) + "\n"


def _islands_oracle(text: str) -> str:
    lines = text.split("\n")
    r, c = map(int, lines[0].split())
    grid = [list(row) for row in lines[1 : 1 + r]]
    count = 0
    for i in range(r):
        for j in range(c):
            if grid[i][j] != "#":
                continue
            count += 1
            stack = [(i, j)]
            grid[i][j] = "."
            while stack:
                y, x = stack.pop()
                for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    ny, nx = y + dy, x + dx
                    if 0 <= ny < r and 0 <= nx < c and grid[ny][nx] == "#":
                        grid[ny][nx] = "."
                        stack.append((ny, nx))
    return f"{count}\n"


SPECS: tuple[_Spec, ...] = (
    _Spec(
        "mc-0001", "Two Big Numbers",
        "Read two integers a and b (|a|, |b| <= 10^9) separated by a space and print a + b.",
        "easy", ("math", "implementation"),
        "a, b = map(int, input().split())\nprint(a + b)\n",
        _pairs_input, _pairs_oracle,
    ),
    _Spec(
        "mc-0002", "Best Streak",
        "The first line holds n (1 <= n <= 200), the second n integers. Print the largest sum of a "
        "non-empty contiguous block of the numbers.",
        "medium", ("dp", "arrays"),
        "import sys\nnums = list(map(int, sys.stdin.read().split()))[1:]\nbest = cur = nums[0]\n"
        "for x in nums[1:]:\n    cur = max(x, cur + x)\n    best = max(best, cur)\nprint(best)\n",
        _array_input, _max_subarray_oracle,
    ),
    _Spec(
        "mc-0003", "Average Reading",
        "The first line holds n, the second n integers. Print their mean; answers within 1e-6 absolute "
        "or relative error are accepted.",
        "easy", ("math",),
        "n = int(input())\nnums = list(map(int, input().split()))\nprint(sum(nums) / n)\n",
        _array_input, _mean_oracle,
    ),
    _Spec(
        "mc-0004", "First Appearances",
        "One line of lowercase words separated by spaces. Print the distinct words in the order of "
        "their first appearance, separated by single spaces.",
        "easy", ("strings", "hashing"),
        "words = input().split()\nseen = dict.fromkeys(words)\nprint(' '.join(seen))\n",
        _words_input, _distinct_oracle,
    ),
    _Spec(
        "mc-0005", "Counting Islands",
        "The first line holds r and c (1 <= r, c <= 8), then r rows of c characters, '#' for land and "
        "'.' for water. Print the number of 4-connected islands of land.",
        "hard", ("graphs", "dfs"),
        "import sys\nfrom collections import deque\n"
        "data = sys.stdin.read().split('\\n')\nr, c = map(int, data[0].split())\n"
        "g = [list(row) for row in data[1:1 + r]]\nseen = [[False] * c for _ in range(r)]\nans = 0\n"
        "for i in range(r):\n    for j in range(c):\n        if g[i][j] == '#' and not seen[i][j]:\n"
        "            ans += 1\n            q = deque([(i, j)])\n            seen[i][j] = True\n"
        "            while q:\n                y, x = q.popleft()\n"
        "                for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):\n"
        "                    if 0 <= ny < r and 0 <= nx < c and g[ny][nx] == '#' and not seen[ny][nx]:\n"
        "                        seen[ny][nx] = True\n                        q.append((ny, nx))\nprint(ans)\n",
        _grid_input, _islands_oracle,
    ),
)


def demo_records(*, tests_per_problem: int = 12, seed: int = 7) -> list[ProblemRecord]:
    """The shipped demo problems as records (deterministic for a given seed)."""
    records = []
    for spec in SPECS:
        rng = random.Random(f"{seed}-{spec.external_id}")
        tests = []
        for k in range(tests_per_problem):
            text = spec.make_input(rng)
            tests.append(TestRecord(input=text, output=spec.oracle(text), public=k < 2))
        checker = {"kind": "lenient"}
        records.append(
            ProblemRecord(
                platform="microcoder-demo",
                external_id=spec.external_id,
                title=spec.title,
                statement=spec.statement,
                io_mode="stdin",
                difficulty=spec.difficulty,
                tags=list(spec.tags),
                license="MIT (MicroCoder Studio demo set)",
                checker=checker,
                tests=tests,
                solutions=[SolutionRecord(code=spec.solution)],
            )
        )
    return records


def write_demo_jsonl(path: Path, **kwargs: int) -> Path:
    """Write the demo problems in the ``microcoder`` export format (importable with that format)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for rec in demo_records(**kwargs):
            fh.write(json.dumps(rec.to_export_dict(), ensure_ascii=False) + "\n")
    return path
