"""Token authentication of the HTTP API: ``Authorization: Bearer <key>`` (or ``Token <key>``). The key is looked
up by its SHA-256 (accounts.ApiToken stores nothing else of it); a revoked or unknown key is a 401."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from accounts.models import ApiToken, hash_key

KEYWORDS = ("bearer", "token")


class ApiTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].decode("latin-1").lower() not in KEYWORDS:
            return None  # no token: the permission check answers 401 with WWW-Authenticate
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
        if not token.owner.is_active:
            raise exceptions.AuthenticationFailed("the account of this API key is disabled")
        now = timezone.now()
        # one write a minute at most: polling a job does not rewrite the row on every request
        if token.last_used is None or (now - token.last_used).total_seconds() > 60:
            ApiToken.objects.filter(pk=token.pk).update(last_used=now)
        return token.owner, token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = ApiTokenAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "an API key created on your account page: Authorization: Bearer <key>"}
