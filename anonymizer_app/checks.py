"""Startup checks: a server with DEBUG off never runs on the public development key.

manage.py commands run the system check (runserver, migrate, check); gunicorn and the Celery worker run
none, so wsgi.py and the worker's start (a worker_init receiver in celery.py) call ``refuse_public_key``
themselves. Nothing of Celery here: Django setup loads this module, and Celery loads only where it is used."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register
from django.core.exceptions import ImproperlyConfigured


@register()
def secret_key_check(app_configs, **kwargs) -> list[Error]:
    """Error (stops runserver, migrate, check) when DEBUG is off and SECRET_KEY is the development key."""
    if settings.DEBUG or settings.SECRET_KEY != settings.DEVELOPMENT_SECRET_KEY:
        return []
    return [Error(
        "SECRET_KEY is not set: the public development key must not be used with DEBUG off",
        hint="set the environment variable SECRET_KEY to a long random value, e.g. the output of "
             "python -c 'import secrets; print(secrets.token_urlsafe(50))' (or DEBUG=1 for development only)",
        id="anonymizer.E001",
    )]


def refuse_public_key() -> None:
    """ImproperlyConfigured naming the variable when DEBUG is off and SECRET_KEY is the development key."""
    for error in secret_key_check(None):
        raise ImproperlyConfigured(f"{error.msg} ({error.hint})")
