from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('evaluator', '0002_job_attempts'),
    ]

    operations = [
        migrations.AddField(
            model_name='evaluationjob',
            name='language',
            field=models.CharField(choices=[('python', 'Python'), ('c', 'C'), ('cpp', 'C++')], default='python', help_text="Language of the submitted source (submission jobs only; verify jobs use each reference's).", max_length=8),
        ),
    ]
