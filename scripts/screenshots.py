"""Take the README's screenshots of the real product: ``python scripts/screenshots.py``.

It seeds a fresh demo workspace (``manage.py migrate`` + ``manage.py demo``: users, the shipped sample
problems, a release, difficulty scores and a finished tiny training run) in a database of its own, serves
it with daphne exactly as ``make demo`` does, logs in through the real login form with Playwright driving
Debian's Chromium, and saves one PNG per page under ``docs/screenshots/`` (then the list of pages it took).

Re-runnable by anyone: the default database is a SQLite file in a temporary folder (nothing of yours is
touched); ``--database-url postgresql://.../some_scratch_db`` shows PostgreSQL's full-text search instead
(the database is migrated and seeded, never dropped). Needs the project's venv (``make bootstrap``) and
``/usr/bin/chromium`` (or ``--chromium PATH``).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "docs" / "screenshots"
ADMIN = ("admin", "microcoder-admin")


@dataclass(frozen=True)
class Shot:
    """One screenshot: file stem, the path to open (a callable gets the ORM ids once Django is set up),
    an optional action on the page before the picture and whether to capture the whole page."""

    name: str
    title: str
    path: str | Callable[[], str | None]
    action: Callable[[Any], None] | None = None
    full_page: bool = False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode} while starting")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise SystemExit(f"the server did not listen on port {port} within {timeout_s:g} s")


def _manage(env: dict[str, str], *args: str) -> None:
    print(f"$ manage.py {' '.join(args)}", flush=True)
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True)


@contextmanager
def _server(env: dict[str, str], port: int, log_path: Path) -> Iterator[str]:
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "webapp.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


# --- what to photograph ---------------------------------------------------------------------------


def _first_id(model_path: str, order: str = "id", **filters: Any) -> int | None:
    from django.apps import apps

    app_label, model_name = model_path.split(".")
    model = apps.get_model(app_label, model_name)
    row = model.objects.filter(**filters).order_by(order).values_list("id", flat=True).first()
    return int(row) if row is not None else None


def _problem_with_math() -> str | None:
    """The first problem whose statement renders at least three formulas for KaTeX (else the first one)."""
    from django.db.models import Q

    from curation.models import Problem
    from curation.rendering import render_statement

    candidates = Problem.objects.filter(Q(statement__contains="$") | Q(statement__contains="\\(")).order_by("id")
    for pid, statement in candidates.values_list("id", "statement")[:200]:
        if render_statement(statement).count('class="math') >= 3:
            return f"/curation/problems/{pid}/"
    pid = _first_id("curation.Problem")
    return f"/curation/problems/{pid}/" if pid else None


def _release() -> str | None:
    rid = _first_id("curation.DatasetRelease", "-id", name="demo-verified") or _first_id(
        "curation.DatasetRelease"
    )
    return f"/curation/releases/{rid}/" if rid else None


def _run() -> str | None:
    rid = _first_id("training.TrainingRun", "-id")
    return f"/training/runs/{rid}/" if rid else None


def _review() -> str | None:
    qid = _first_id("curation.ReviewQueue")
    return f"/curation/review/{qid}/review/" if qid else None


def _compare() -> str | None:
    sid = _first_id("training.Sweep", "-id")
    return f"/training/compare/?sweep={sid}" if sid else None


def _reverse_or_none(name: str, query: str = "") -> Callable[[], str | None]:
    def resolve() -> str | None:
        from django.urls import NoReverseMatch, reverse

        try:
            return reverse(name) + query
        except NoReverseMatch:
            return None

    return resolve


def _verified_reference() -> tuple[int, str] | None:
    from curation.models import ReferenceSolution

    ref = (
        ReferenceSolution.objects.filter(
            verified=True, language="python", problem__stage="constraints_passed"
        )
        .order_by("problem_id", "order")
        .values_list("problem_id", "code")
        .first()
    )
    return (int(ref[0]), str(ref[1])) if ref else None


def _judge_path() -> str:
    ref = _verified_reference()
    return f"/evaluator/judge/?problem={ref[0]}" if ref else "/evaluator/judge/"


def _judge(page: Any) -> None:
    """Paste a verified reference solution of the preselected problem and judge it (inline verdict)."""
    ref = _verified_reference()
    if ref is None:
        return
    page.locator("form.card textarea").first.fill(ref[1])
    page.locator("form.card button[type=submit]").first.click()
    page.wait_for_load_state("networkidle")


SHOTS: list[Shot] = [
    Shot("home", "Home: what needs attention", "/"),
    Shot("problems", "Problems: search, filters and stages", "/curation/problems/"),
    Shot(
        "problem",
        "A problem: rendered statement, tests, references, why this stage",
        _problem_with_math,
        full_page=True,
    ),
    Shot("release", "A release: counts, difficulty mix, export", _release),
    Shot(
        "difficulty",
        "Difficulty scoring: the five-dimension matrix, per release",
        _reverse_or_none("difficulty:scoring-list"),
    ),
    Shot("review", "Spot-checking problems with the keyboard", _review, full_page=True),
    Shot("jobs", "Every job in one list, live", _reverse_or_none("jobs:list")),
    Shot("judge", "Judge a solution: the verdict and which comparison accepted", _judge_path, action=_judge),
    Shot("runs", "Training runs", "/training/runs/"),
    Shot("run", "A training run: live metrics", _run, full_page=True),
    Shot(
        "run-form", "Launching a run from a preset", "/training/runs/new/?preset=microcoder", full_page=True
    ),
    Shot("sweeps", "Sweeps", _reverse_or_none("training:sweep-list")),
    Shot("compare", "Comparing the runs of a sweep", _compare, full_page=True),
    Shot("insights", "The 34 MicroCoder training insights", _reverse_or_none("training:insights")),
    Shot("evaluations", "Model evaluations", "/training/evaluations/"),
]


def _take(base_url: str, out: Path, chromium: str, shots: list[Shot]) -> list[tuple[Shot, Path]]:
    from playwright.sync_api import sync_playwright

    taken: list[tuple[Shot, Path]] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        context = browser.new_context(viewport={"width": 1360, "height": 900}, device_scale_factor=1)
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{base_url}/accounts/login/")
        page.fill("input[name=username]", ADMIN[0])
        page.fill("input[name=password]", ADMIN[1])
        page.locator("form button[type=submit], form input[type=submit]").first.click()
        page.wait_for_load_state("networkidle")
        if "/accounts/login/" in page.url:
            raise SystemExit("logging in as the demo admin failed (MICROCODER_DEMO_PASSWORD set?)")
        for shot in shots:
            path = shot.path() if callable(shot.path) else shot.path
            if path is None:
                print(f"skip {shot.name}: the page does not exist in this build", flush=True)
                continue
            response = page.goto(f"{base_url}{path}")
            page.wait_for_load_state("networkidle")
            if response is None or response.status >= 400:
                raise SystemExit(
                    f"{shot.name}: GET {path} answered {response.status if response else 'nothing'}"
                )
            if shot.action is not None:
                shot.action(page)
            page.wait_for_timeout(400)  # charts and math finish drawing
            target = out / f"{shot.name}.png"
            page.screenshot(path=str(target), full_page=shot.full_page)
            taken.append((shot, target))
            print(
                f"{shot.name:12s} {path:40s} -> {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}",
                flush=True,
            )
        browser.close()
    return taken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="folder for the PNG files (docs/screenshots)"
    )
    parser.add_argument(
        "--database-url", default="", help="database to seed (default: a SQLite file in a temp dir)"
    )
    parser.add_argument("--chromium", default=os.environ.get("MICROCODER_CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("--train-steps", type=int, default=8, help="steps of the demo's tiny training run")
    parser.add_argument("--only", nargs="*", default=None, help="take only these screenshots (names)")
    args = parser.parse_args(argv)
    if not Path(args.chromium).exists():
        raise SystemExit(
            f"Chromium not found at {args.chromium}: apt-get install chromium, or pass --chromium"
        )

    workdir = Path(tempfile.mkdtemp(prefix="microcoder-screens-"))
    env = dict(os.environ)
    env.pop(
        "REDIS_URL", None
    )  # tasks run in-process and the channel layer is in memory: nothing shared is touched
    env.update(
        DJANGO_SETTINGS_MODULE="webapp.settings",
        DATABASE_URL=args.database_url or f"sqlite:///{workdir / 'db.sqlite3'}",
        MICROCODER_VAR_DIR=str(workdir / "var"),
        DJANGO_DEBUG="0",
        PYTHONUNBUFFERED="1",
    )
    env.pop("MICROCODER_DEMO_PASSWORD", None)
    _manage(env, "migrate", "--noinput", "-v", "0")
    _manage(env, "demo", "--train-steps", str(args.train_steps))

    os.environ.update(
        {
            k: v
            for k, v in env.items()
            if k in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "MICROCODER_VAR_DIR", "DJANGO_DEBUG")
        }
    )
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault(
        "DJANGO_ALLOW_ASYNC_UNSAFE", "true"
    )  # Playwright's sync API runs a loop in this thread
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    shots = [s for s in SHOTS if args.only is None or s.name in args.only]
    args.out.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    with _server(env, port, workdir / "daphne.log") as base_url:
        taken = _take(base_url, args.out, args.chromium, shots)
    print(f"{len(taken)} screenshots in {args.out} (workspace: {workdir})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
