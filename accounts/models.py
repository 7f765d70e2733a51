"""API tokens: a user's keys for the HTTP API (anonymizer_app/api). Only the SHA-256 of a key is stored, with
a short prefix to recognise it in the list; the key itself is shown once, when it is created.

A key has scopes (what it may do: api/permissions.py decides which one each view needs) and an expiry (at most
``ANONYMIZER_API_KEY_MAX_DAYS`` days after its creation; docs/security.md)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

KEY_PREFIX = "anon_"  # marks the keys of this product in logs and secret scanners
PREFIX_SHOWN = 12  # characters of the key kept in clear: "anon_" and 7 random ones

# What a key may do. Independent of one another: a key holds exactly the scopes it was given.
READ, RUN, ADMIN = "read", "run", "admin"
SCOPES = (READ, RUN, ADMIN)
SCOPE_HELP = {
    READ: "read: list and read datasets, hierarchies, runs, results and downloads",
    RUN: "run: upload, change and delete datasets and hierarchies, submit and cancel runs, import and export",
    ADMIN: "admin: re-identification tables, pseudonymization keys, repository connections",
}


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
    scopes = models.CharField(max_length=32, default=" ".join(SCOPES))  # space-separated, in SCOPES' order
    expires = models.DateTimeField()

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def scope_list(self) -> list[str]:
        return [scope for scope in SCOPES if scope in self.scopes.split()]

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes.split()

    @property
    def is_expired(self) -> bool:
        return self.expires <= timezone.now()

    @property
    def is_active(self) -> bool:
        return self.revoked is None and not self.is_expired

    @classmethod
    def issue(cls, owner, name: str, scopes: Iterable[str] = SCOPES, days: int | None = None) -> tuple[ApiToken, str]:
        """A new token and its key (the only time the key exists outside the client). ``days``: its lifetime,
        by default ANONYMIZER_API_KEY_DEFAULT_DAYS, at most ANONYMIZER_API_KEY_MAX_DAYS."""
        wanted = set(scopes.split() if isinstance(scopes, str) else scopes)
        if not wanted or not wanted <= set(SCOPES):
            raise ValueError(f"scopes: one or more of {', '.join(SCOPES)}; not {sorted(wanted - set(SCOPES))}")
        days = settings.ANONYMIZER_API_KEY_DEFAULT_DAYS if days is None else days
        if not 1 <= days <= settings.ANONYMIZER_API_KEY_MAX_DAYS:
            raise ValueError(f"expiry: 1 to {settings.ANONYMIZER_API_KEY_MAX_DAYS} days, not {days}")
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(owner=owner, name=name, prefix=key[:PREFIX_SHOWN], key_hash=hash_key(key),
                                   scopes=" ".join(s for s in SCOPES if s in wanted),
                                   expires=timezone.now() + timedelta(days=days))
        return token, key

    def revoke(self) -> None:
        if self.revoked is None:
            self.revoked = timezone.now()
            self.save(update_fields=["revoked"])
