"""``python manage.py import_problems --format FORMAT PATH``: import a file or folder of problems.

On a terminal a progress bar on stderr counts the rows read (and the rejected ones) as each chunk
commits; piped or redirected, stderr carries only the per-row errors."""

from __future__ import annotations

from argparse import ArgumentParser, RawDescriptionHelpFormatter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from curation.importers import FORMATS, detect_format
from curation.models import ImportBatch, ImportStatus, Problem
from curation.services import problem_import, problems_check_constraints, problems_normalize
from curation.services.imports import DEFAULT_BATCH_SIZE


def _formats_help() -> str:
    width = max(len(n) for n in FORMATS)
    lines = [f"  {name.ljust(width)}  {imp.description}" for name, imp in FORMATS.items()]
    return "formats:\n" + "\n".join(lines)


class Command(BaseCommand):
    help = "Import problems from a file or folder in one of the registered formats."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> ArgumentParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.formatter_class = RawDescriptionHelpFormatter
        parser.epilog = _formats_help()
        return parser

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("path", help="File (JSONL/JSON/Parquet, .gz ok) or folder (ICPC packages).")
        parser.add_argument(
            "--format", dest="fmt", choices=sorted(FORMATS) + ["auto"], default="auto",
            help="Input format (default: detect from the content). See the list below.",
        )
        parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="Rows per transaction.")
        parser.add_argument(
            "--pipeline", action="store_true",
            help="Also run the normalize and constraints stages on the imported/changed problems.",
        )

    def _progress_bar(self) -> Any:
        """A tqdm bar on stderr when stderr is a terminal, else None (piped output stays quiet)."""
        if not self.stderr.isatty():
            return None
        from tqdm import tqdm

        return tqdm(total=None, unit="row", desc="import", file=self.stderr._out)

    @staticmethod
    def _advance(bar: Any, batch: ImportBatch) -> None:
        if bar.total is None and batch.expected_rows is not None:
            bar.total = batch.expected_rows  # counted before the first chunk (JSONL, Parquet)
        bar.update(batch.total_rows - bar.n)
        bar.set_postfix(rejected=batch.rejected_count, refresh=False)

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        fmt = options["fmt"]
        if fmt == "auto":
            fmt = detect_format(path)
            if fmt is None:
                raise CommandError(f"could not detect the format of {path}; pass --format (see --help)")
            self.stdout.write(f"detected format: {fmt}")
        bar = self._progress_bar()
        try:
            batch = problem_import(
                path=path, format=fmt, batch_size=options["batch_size"],
                on_progress=None if bar is None else lambda b: self._advance(bar, b),
            )
        finally:
            if bar is not None:
                bar.close()
        for err in batch.errors:
            where = f"row {err['row']}" + (f" ({err['external_id']})" if err.get("external_id") else "")
            self.stderr.write(f"{where}: {err['reason']}")
        self.stdout.write(
            f"import #{batch.pk} {batch.status}: {batch.imported_count} imported, {batch.unchanged_count} unchanged, "
            f"{batch.updated_count} updated, {batch.rejected_count} rejected ({batch.total_rows} rows)"
        )
        if batch.status == ImportStatus.FAILED:
            raise CommandError(batch.message)
        if options["pipeline"]:
            touched = list(Problem.objects.filter(import_batch=batch).values_list("id", flat=True))
            report = problems_normalize(problem_ids=touched)
            stages = problems_check_constraints(problem_ids=touched)
            self.stdout.write(
                f"normalized {report.normalized} ({report.exact_links} exact, {report.near_links} near duplicate links); "
                f"stages: " + ", ".join(f"{k} {v}" for k, v in sorted(stages.items()))
            )
