"""CLI: ``python -m training.grpo [--preset grpo|dapo|microcoder] [--config CONFIG.yaml] [--set k=v ...]``.

``--preset`` starts from a method preset (``training.presets``); the config file's values come next,
then the ``--set`` overrides, so every field of a preset can still be changed.

Prints the resolved config (YAML) and the insight warnings, then trains; metrics go to
``output_dir/metrics.jsonl`` (one JSON object per step), the sample table to ``samples.jsonl``, the
resolved config to ``config.yaml`` and checkpoints under ``checkpoints/``. Rerunning the same command
resumes from the newest checkpoint. SIGTERM / Ctrl-C checkpoint the current step and exit cleanly.
``--print-config`` stops after printing; ``--list-fields`` prints every field with its help text.

Several processes: ``torchrun --nproc_per_node N -m training.grpo --config C.yaml`` (FSDP2-sharded
policy, each process generating for its share of the prompts; ``training.distributed``). Rank 0 prints,
logs and writes the files; every rank writes its checkpoint shards.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from training.config import ConfigError, describe_fields, load_config
from training.insights import check_config
from training.presets import preset_names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m training.grpo", description="Run MicroCoder-GRPO.")
    parser.add_argument(
        "--preset",
        choices=preset_names(),
        help="start from a method preset (its values first, then --config, then --set)",
    )
    parser.add_argument("--config", help="YAML config file (fields of training.config.GRPOConfig)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a field, e.g. --set mask.probability=0.2 (repeatable)",
    )
    parser.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    parser.add_argument("--list-fields", action="store_true", help="list every config field with its help")
    parser.add_argument("--quiet", action="store_true", help="no per-step progress lines on stderr")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.list_fields:
        for f in describe_fields():
            print(f"{f.path} ({f.type}, default {json.dumps(f.default)}): {f.help}")
        return 0
    try:
        config = load_config(args.config, args.overrides, preset=args.preset)
    except (ConfigError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from training.distributed import env_world_size

    main_rank = env_world_size() == 1 or int(os.environ.get("RANK", "0")) == 0
    if main_rank:
        print("# resolved config")
        print(config.to_yaml(), end="")
        for warning in check_config(config):
            print(f"# {warning}")
        sys.stdout.flush()
    if args.print_config:
        return 0

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from training.distributed import DistContext
    from training.trainer import Trainer

    dist = DistContext.from_env(config.device)

    stop = {"requested": False}

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop["requested"] = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)

    def progress(step: int, metrics: dict[str, float]) -> None:
        if args.quiet:
            return
        keys = ("reward", "completions/mean_length", "temperature", "diversity", "loss", "timing/step_s")
        shown = " ".join(f"{k}={metrics[k]:.4g}" for k in keys if k in metrics)
        print(f"step {step}/{config.max_steps} {shown}", file=sys.stderr, flush=True)

    trainer = Trainer(config, on_metrics=progress, should_stop=lambda: stop["requested"], dist=dist)
    try:
        result = trainer.train()
    finally:
        trainer.close()
        dist.close()
    if not dist.is_main:
        return 0
    print(
        json.dumps(
            {
                "last_step": result.last_step,
                "stopped": result.stopped,
                "resumed_from": result.resumed_from,
                "output_dir": result.output_dir,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
