# The job kind 'synthesis' (issue 33: synthetic data).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('anonymizer_app', '0016_model_utility_job'),
    ]

    operations = [
        migrations.AlterField(
            model_name='job',
            name='kind',
            field=models.CharField(choices=[('run', 'run'), ('comparison', 'comparison'), ('experiment', 'experiment'), ('lattice-keep', 'lattice-keep'), ('lattice', 'lattice'), ('sql-export', 'sql-export'), ('repository-deposit', 'repository-deposit'), ('model-utility', 'model-utility'), ('synthesis', 'synthesis')], default='run', max_length=20),
        ),
    ]
