# The job kind 'sdc-risk' (issue 31: SUDA2 on a worker above the risk page's in-request limit).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('anonymizer_app', '0017_synthesis_job'),
    ]

    operations = [
        migrations.AlterField(
            model_name='job',
            name='kind',
            field=models.CharField(choices=[('run', 'run'), ('comparison', 'comparison'), ('experiment', 'experiment'), ('lattice-keep', 'lattice-keep'), ('lattice', 'lattice'), ('sql-export', 'sql-export'), ('repository-deposit', 'repository-deposit'), ('model-utility', 'model-utility'), ('synthesis', 'synthesis'), ('sdc-risk', 'sdc-risk')], default='run', max_length=20),
        ),
    ]
