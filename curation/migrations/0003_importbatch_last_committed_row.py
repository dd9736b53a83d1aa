from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("curation", "0002_difficulty_calibration_review"),
    ]

    operations = [
        migrations.AddField(
            model_name="importbatch",
            name="last_committed_row",
            field=models.PositiveIntegerField(
                blank=True,
                help_text="Row number of the last row of the last committed chunk: every row up to it is stored or "
                "reported as rejected; a failed import left nothing after it.",
                null=True,
            ),
        ),
    ]
