"""Token authentication of the HTTP API: ``Authorization: Bearer <key>`` (or ``Token <key>``). The key is looked
up by its SHA-256 (accounts.ApiToken stores nothing else of it); a revoked, expired or unknown key is a 401.

Requests without a valid key (none, unknown, revoked, expired, malformed) count against their client address's
``api_address`` rate (accounts/throttling.py), here because DRF answers them before any throttle class runs;
beyond it they get 429 instead of 401. A valid key is never refused for what others sent from its address."""

from __future__ import annotations

from datetime import UTC

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from accounts import throttling as limits
from accounts.client_address import client_bucket
from accounts.models import ApiToken, hash_key

from .throttling import too_many

KEYWORDS = ("bearer", "token")


class ApiTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].decode("latin-1").lower() not in KEYWORDS:
            _count_without_key(request)
            return None  # no token: the permission check answers 401 with WWW-Authenticate
        try:
            return self._token(header)
        except exceptions.AuthenticationFailed:
            _count_without_key(request)
            raise

    def _token(self, header: list[bytes]):
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("the Authorization header is 'Bearer <key>': one key, no spaces")
        try:
            key = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("the API key has characters no key has") from None
        token = ApiToken.objects.select_related("owner").filter(key_hash=hash_key(key)).first()
        if token is None:
            raise exceptions.AuthenticationFailed("unknown API key")
        if token.revoked is not None:
            raise exceptions.AuthenticationFailed(f"the API key {token.prefix}… was revoked")
        now = timezone.now()
        if token.expires <= now:
            raise exceptions.AuthenticationFailed(
                f"the API key {token.prefix}… expired on {token.expires.astimezone(UTC):%Y-%m-%d %H:%M} UTC: create a "
                "new one on "
                "your account page")
        if not token.owner.is_active:
            raise exceptions.AuthenticationFailed("the account of this API key is disabled")
        # one write a minute at most: polling a job does not rewrite the row on every request
        if token.last_used is None or (now - token.last_used).total_seconds() > 60:
            ApiToken.objects.filter(pk=token.pk).update(last_used=now)
        return token.owner, token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


def _count_without_key(request) -> None:
    wait = limits.hit("api_address", f"addr:{client_bucket(request)}")
    if wait is not None:
        raise too_many("api_address", wait)


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = ApiTokenAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "an API key created on your account page: Authorization: Bearer <key>. A key has "
                               "scopes: read (GET), run (other methods), admin (/keys/, re-identification tables, "
                               "/repositories/); without the scope an operation needs: 403 naming it. A key expires "
                               "(401 saying when). Too many requests: 429 with Retry-After."}
