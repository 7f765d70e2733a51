"""System checks of the lockout and rate-limit settings (docs/security.md, "Lockout, throttling and API keys"):
a bad trusted-proxy entry or rate is an error naming it at start-up, not on the first request; and a
deployment behind a TLS proxy that trusts none gets a warning, because then every client has the proxy's
address and a stranger's wrong passwords lock everyone out."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register
from django.core.exceptions import ImproperlyConfigured

from .client_address import trusted_proxies
from .throttling import parse_rate


@register()
def throttle_settings_check(app_configs, **kwargs) -> list[Error]:
    errors = []
    try:
        trusted_proxies()
    except ImproperlyConfigured as exc:
        errors.append(Error(str(exc), hint="comma-separated addresses or networks in the environment variable "
                                           "ANONYMIZER_TRUSTED_PROXIES", id="accounts.E001"))
    for name, text in getattr(settings, "ANONYMIZER_THROTTLE_RATES", {}).items():
        try:
            parse_rate(name, text)
        except ImproperlyConfigured as exc:
            errors.append(Error(str(exc), hint=f"the environment variable ANONYMIZER_THROTTLE_{name.upper()}",
                                id="accounts.E002"))
    return errors


@register(Tags.security, deploy=True)
def trusted_proxy_check(app_configs, **kwargs) -> list[Warning]:
    if not getattr(settings, "SECURE_PROXY_SSL_HEADER", None) or getattr(settings, "ANONYMIZER_TRUSTED_PROXIES", None):
        return []
    return [Warning(
        "SECURE_PROXY_SSL_HEADER says a proxy is in front, but ANONYMIZER_TRUSTED_PROXIES is empty: every client "
        "then has the proxy's address, so the login lockout and the rate limits treat all users as one",
        hint="set ANONYMIZER_TRUSTED_PROXIES to the proxy's address (127.0.0.1 for a proxy on this machine); "
             "docs/security.md",
        id="accounts.W001",
    )]
