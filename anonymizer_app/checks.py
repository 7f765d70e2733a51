"""Startup checks: a server with DEBUG off never runs on the public development key.

manage.py commands run the system check (runserver, migrate, check); gunicorn and the Celery worker run
none, so wsgi.py and the worker's start (below) call ``refuse_public_key`` themselves."""

from __future__ import annotations

from celery.signals import worker_init
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


@worker_init.connect
def _refuse_worker_on_public_key(**kwargs) -> None:
    # Celery logs and swallows a receiver's exception: SystemExit is the one that stops the worker.
    try:
        refuse_public_key()
    except ImproperlyConfigured as exc:
        raise SystemExit(f"ImproperlyConfigured: {exc}") from exc
