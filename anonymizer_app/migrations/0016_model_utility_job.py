# The job kind 'model-utility' (issue 30: models trained on the release).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('anonymizer_app', '0015_weight_household_roles'),
    ]

    operations = [
        migrations.AlterField(
            model_name='job',
            name='kind',
            field=models.CharField(choices=[('run', 'run'), ('comparison', 'comparison'), ('experiment', 'experiment'), ('lattice-keep', 'lattice-keep'), ('lattice', 'lattice'), ('sql-export', 'sql-export'), ('repository-deposit', 'repository-deposit'), ('model-utility', 'model-utility')], default='run', max_length=20),
        ),
    ]
