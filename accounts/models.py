"""API tokens: a user's keys for the HTTP API (anonymizer_app/api). Only the SHA-256 of a key is stored, with
a short prefix to recognise it in the list; the key itself is shown once, when it is created."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

KEY_PREFIX = "anon_"  # marks the keys of this product in logs and secret scanners
PREFIX_SHOWN = 12  # characters of the key kept in clear: "anon_" and 7 random ones


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class ApiToken(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=PREFIX_SHOWN)
    key_hash = models.CharField(max_length=64, unique=True)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)
    revoked = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked is None

    @classmethod
    def issue(cls, owner, name: str) -> tuple[ApiToken, str]:
        """A new token and its key (the only time the key exists outside the client)."""
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(owner=owner, name=name, prefix=key[:PREFIX_SHOWN], key_hash=hash_key(key))
        return token, key

    def revoke(self) -> None:
        if self.revoked is None:
            self.revoked = timezone.now()
            self.save(update_fields=["revoked"])
