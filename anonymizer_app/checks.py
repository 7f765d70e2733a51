"""Startup checks: a server with DEBUG off never runs on the public development key, nor without a vault key
of its own (ANONYMIZER_VAULT_KEY: services/vault.py, docs/vault.md).

manage.py commands run the system check (runserver, migrate, check); gunicorn and the Celery worker run
none, so wsgi.py and the worker's start (a worker_init receiver in celery.py) call ``refuse_public_key``
themselves, which runs both checks. Nothing of Celery here: Django setup loads this module, and Celery loads
only where it is used."""

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


@register()
def vault_key_check(app_configs, **kwargs) -> list[Error]:
    """Errors (stop runserver, migrate, check) when DEBUG is off and ANONYMIZER_VAULT_KEY is missing, not a Fernet
    key or the development key, or a key of ANONYMIZER_VAULT_OLD_KEYS is not a Fernet key. Never shows a key."""
    from .services import vault

    if settings.DEBUG:
        return []
    hint = (f"set {vault.SETTING} to a key made by {vault.MAKE_KEY} and keep it apart from the data and from "
            f"SECRET_KEY; secrets stored by an earlier version under the key derived from SECRET_KEY: "
            f"manage.py rotate_vault_key --from-secret-key ({vault.GUIDE})")
    key = (settings.ANONYMIZER_VAULT_KEY or "").strip()
    errors = []
    if not key:
        errors.append(Error(f"{vault.SETTING} is not set: with DEBUG off the vault needs a key of its own", hint=hint,
                            id="anonymizer.E002"))
    elif not vault.is_key(key):
        errors.append(Error(f"{vault.SETTING} is not a valid Fernet key (32 random bytes in url-safe base64)",
                            hint=hint, id="anonymizer.E003"))
    elif key == vault.existing_development_key():
        errors.append(Error(f"{vault.SETTING} is the development key of {vault.development_key_file()}: it must not "
                            f"be used with DEBUG off", hint=hint, id="anonymizer.E004"))
    old = [k.strip() for k in settings.ANONYMIZER_VAULT_OLD_KEYS if k.strip()]
    errors += [Error(f"{vault.OLD_SETTING}: key {i} of {len(old)} is not a valid Fernet key (32 random bytes in "
                     f"url-safe base64)", hint=f"remove it or correct it ({vault.GUIDE})", id="anonymizer.E005")
               for i, k in enumerate(old, 1) if not vault.is_key(k)]
    return errors


def refuse_public_key() -> None:
    """ImproperlyConfigured naming the variable when DEBUG is off and SECRET_KEY is the development key, or the
    vault has no valid key of its own."""
    for error in secret_key_check(None) + vault_key_check(None):
        raise ImproperlyConfigured(f"{error.msg} ({error.hint})")
