"""Job.kind: what a job does, instead of the magic values "compare" and "homogeneity-experiment" of
Job.algorithm (which existing rows keep)."""

from django.db import migrations, models


def fill_kind(apps, schema_editor):
    Job = apps.get_model("anonymizer_app", "Job")
    Job.objects.filter(algorithm="compare").update(kind="comparison")
    Job.objects.filter(algorithm="homogeneity-experiment").update(kind="experiment")


class Migration(migrations.Migration):

    dependencies = [
        ('anonymizer_app', '0002_job_models'),
    ]

    operations = [
        migrations.AddField(
            model_name='job',
            name='kind',
            field=models.CharField(choices=[('run', 'run'), ('comparison', 'comparison'), ('experiment', 'experiment'), ('lattice-keep', 'lattice-keep')], default='run', max_length=20),
        ),
        migrations.RunPython(fill_kind, migrations.RunPython.noop),
    ]
