from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("curation", "0003_importbatch_last_committed_row"),
    ]

    operations = [
        migrations.AddField(
            model_name="importbatch",
            name="heartbeat_at",
            field=models.DateTimeField(
                blank=True,
                help_text="Last sign of life of the worker importing it; a running batch silent for longer than "
                "IMPORT_LEASE_TIMEOUT_S is presumed dead and may be taken over by a redelivered task.",
                null=True,
            ),
        ),
    ]
