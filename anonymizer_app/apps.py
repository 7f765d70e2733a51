from django.apps import AppConfig


class AnonymizerAppConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "anonymizer_app"
    verbose_name = "Anonymizer"

    def ready(self):
        # Not the Celery app: tasks.py loads it before its task is defined (celery.py says why), so a
        # process that queues no job (manage.py anonymize ...) does not import Celery and kombu.
        from django.db.models.signals import post_migrate

        from . import checks  # noqa: F401  (registers the startup checks)
        from .services import at_rest, erasure

        erasure.connect()  # files follow their rows, however the rows are deleted
        post_migrate.connect(at_rest.after_migrate, dispatch_uid="anonymizer-at-rest")
