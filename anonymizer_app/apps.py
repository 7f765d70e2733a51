from django.apps import AppConfig


class AnonymizerAppConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "anonymizer_app"
    verbose_name = "Anonymizer"

    def ready(self):
        # Load the Celery app whenever Django starts (web process, manage.py, tests, and the worker,
        # whose Django fixup calls django.setup()), so that @shared_task binds to it and not to a
        # default app. Not in the package's __init__: the engine must import without Django/Celery.
        from django.db.models.signals import post_migrate

        from . import (
            celery,  # noqa: F401
            checks,  # noqa: F401  (registers the startup checks)
        )
        from .services import at_rest, erasure

        erasure.connect()  # files follow their rows, however the rows are deleted
        post_migrate.connect(at_rest.after_migrate, dispatch_uid="anonymizer-at-rest")
