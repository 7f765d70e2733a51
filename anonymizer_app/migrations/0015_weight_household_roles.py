# The column roles 'sampling weight' and 'household id' (issue 31: risk with sampling weights).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('anonymizer_app', '0014_person_id_role'),
    ]

    operations = [
        migrations.AlterField(
            model_name='column',
            name='role',
            field=models.CharField(choices=[('identifying', 'identifying'), ('quasi-identifying', 'quasi-identifying'), ('sensitive', 'sensitive'), ('insensitive', 'insensitive'), ('person id', 'person id'), ('sampling weight', 'sampling weight'), ('household id', 'household id')], default='insensitive', max_length=20),
        ),
    ]
