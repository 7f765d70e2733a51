from django.apps import AppConfig


class AnonymizerAppConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "anonymizer_app"
    verbose_name = "Anonymizer"
