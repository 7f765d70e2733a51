"""WSGI entry point, e.g. `gunicorn anonymizer_app.wsgi` (`make serve`)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")

application = get_wsgi_application()

# gunicorn runs no system checks: refuse to serve on the public development key with DEBUG off
from anonymizer_app.checks import refuse_public_key  # noqa: E402

refuse_public_key()
