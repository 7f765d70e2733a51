"""The password asked again by a signed-in user (the re-identification table, on the web and the API), with a
failure counter of its own.

Not django-axes' login counter: wrong passwords here must not lock the account's log-in (someone holding an open
session or a stolen API key could otherwise lock its owner out), and wrong log-ins must not open or close this
door. The counter is per (account, client address): after ``ANONYMIZER_REID_FAILURE_LIMIT`` wrong passwords in a
row from one address, that address is refused for ``ANONYMIZER_REID_COOLOFF_MINUTES`` after the last one, the
right password included (guessing stops); the owner elsewhere is not affected. A right password resets it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches

from .client_address import client_bucket

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Confirmation:
    ok: bool
    locked: bool = False
    minutes: int = 0  # the cool-off, for the message

    @property
    def message(self) -> str:
        if self.locked:
            return (f"too many wrong passwords: the re-identification table is refused from your address for "
                    f"{self.minutes} minute{'s' if self.minutes != 1 else ''} (your log-in is not affected)")
        return "" if self.ok else "that is not your password"


def _cache():
    return caches[getattr(settings, "ANONYMIZER_THROTTLE_CACHE", "default")]


def _key(user, request) -> str:
    return f"reconfirm:{user.pk}:{client_bucket(request)}"


def confirm_password(request, user, password: str) -> Confirmation:
    limit = settings.ANONYMIZER_REID_FAILURE_LIMIT
    cooloff = max(1, settings.ANONYMIZER_REID_COOLOFF_MINUTES) * 60
    minutes = cooloff // 60
    cache, key = _cache(), _key(user, request)
    # A cache that cannot be read is a refusal, not an open door (the table is the one secret it guards).
    try:
        failures = int(cache.get(key) or 0)
    except Exception:  # noqa: BLE001
        log.exception("re-identification password check: the cache is not reachable")
        return Confirmation(ok=False, locked=True, minutes=minutes)
    if failures >= limit:
        return Confirmation(ok=False, locked=True, minutes=minutes)
    if user.is_active and user.check_password(password):
        cache.delete(key)
        return Confirmation(ok=True)
    if not cache.add(key, 1, timeout=cooloff):
        try:
            failures = cache.incr(key)
        except ValueError:  # expired in between: this is the first again
            cache.add(key, 1, timeout=cooloff)
            failures = 1
        cache.touch(key, cooloff)  # the cool-off runs from the last wrong password
    else:
        failures = 1
    return Confirmation(ok=False, locked=failures >= limit, minutes=minutes)
