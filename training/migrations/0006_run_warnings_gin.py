"""A GIN index (jsonb_path_ops) on TrainingRun.warnings for the insights page's containment filter
(``warnings @> '[{"insight_ids": ["KL-1"]}]'``). PostgreSQL only: other databases get no index (the
selectors scan the runs there)."""

from django.db import migrations

INDEX = "training_run_warnings_gin"


def create(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON training_trainingrun USING gin (warnings jsonb_path_ops)"
        )


def drop(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("training", "0005_sweeps")]

    operations = [migrations.RunPython(create, drop)]
