"""The Celery application. Workers: `celery -A anonymizer_app worker` (see `make worker`); Celery finds
this module by itself (the `celery` submodule of the package named by -A).

Django processes load it from AnonymizerAppConfig.ready() (apps.py), not from the package's
__init__, so that importing anonymizer_app.engine loads neither Django nor Celery."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")

app = Celery("anonymizer")
# Every CELERY_* Django setting configures Celery (CELERY_BROKER_URL -> broker_url, ...).
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
