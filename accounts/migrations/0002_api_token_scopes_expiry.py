"""API keys get scopes and an expiry. Keys that exist already keep what they could do (all three scopes: they
acted as their owner on everything) and expire ANONYMIZER_API_KEY_DEFAULT_DAYS after this migration runs, so no
script stops the day of the upgrade and no key lives for ever (docs/security.md)."""

from datetime import timedelta

from django.conf import settings
from django.db import migrations, models
from django.utils import timezone


def give_existing_keys_an_expiry(apps, schema_editor):
    ApiToken = apps.get_model("accounts", "ApiToken")
    expires = timezone.now() + timedelta(days=settings.ANONYMIZER_API_KEY_DEFAULT_DAYS)
    ApiToken.objects.filter(expires__isnull=True).update(expires=expires)


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0001_api_tokens"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="scopes",
            field=models.CharField(default="read run admin", max_length=32),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="expires",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(give_existing_keys_an_expiry, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="apitoken",
            name="expires",
            field=models.DateTimeField(),
        ),
    ]
