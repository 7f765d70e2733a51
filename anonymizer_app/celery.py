"""The Celery application. Workers: `celery -A anonymizer_app worker` (see `make worker`)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")

app = Celery("anonymizer")
# Every CELERY_* Django setting configures Celery (CELERY_BROKER_URL -> broker_url, ...).
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
