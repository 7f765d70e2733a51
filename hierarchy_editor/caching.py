"""The hierarchy editor's caches, on Django's cache framework: parsed hierarchies (a city file takes ~0.3 s to
parse), a column's value counts and the current tree of an editing session.

The store is the ``hierarchy_editor`` alias of settings.CACHES when one is configured (e.g. Redis, shared by
every process); otherwise a local-memory cache of this process, kept small because its entries are large
(a parsed city hierarchy pickles to ~1 MB). Every key is scoped to the owner's account: one account never
reads what another's request stored, even for equal content. A cache that cannot be reached is skipped
(the value is computed again): it never takes a page down.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.core.cache.backends.locmem import LocMemCache

log = logging.getLogger(__name__)

ALIAS = "hierarchy_editor"  # the settings.CACHES alias used when configured
TIMEOUT = 3600  # seconds an entry is kept
LOCAL_ENTRIES = 16  # entries of the local-memory fallback (the least recently used ones are dropped first)
_LOCAL = LocMemCache("hierarchy-editor", {"TIMEOUT": TIMEOUT,
                                          "OPTIONS": {"MAX_ENTRIES": LOCAL_ENTRIES, "CULL_FREQUENCY": 4}})

T = TypeVar("T")


def store() -> BaseCache:
    """The configured ``hierarchy_editor`` cache, else this process's local-memory one."""
    return caches[ALIAS] if ALIAS in settings.CACHES else _LOCAL


def user_key(user_id: int, kind: str, *parts: object) -> str:
    """The key of one entry of one account: ``hierarchy-editor:<kind>:<user>:<digest of the parts>``."""
    digest = hashlib.blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return f"hierarchy-editor:{kind}:{int(user_id)}:{digest}"


def get(key: str) -> Any:
    try:
        return store().get(key)
    except Exception:  # noqa: BLE001 - an unreachable cache is a miss, not an error page
        log.exception("hierarchy editor cache: reading %s failed", key)
        return None


def put(key: str, value: object) -> None:
    try:
        store().set(key, value, TIMEOUT)
    except Exception:  # noqa: BLE001 - the value was computed; only its reuse is lost
        log.exception("hierarchy editor cache: writing %s failed", key)


def forget(keys: list[str]) -> None:
    try:
        store().delete_many(keys)
    except Exception:  # noqa: BLE001
        log.exception("hierarchy editor cache: deleting %d key(s) failed", len(keys))


def remember(key: str, compute: Callable[[], T]) -> T:
    """The cached value of ``key``, else ``compute()`` stored under it (an exception is not stored)."""
    value = get(key)
    if value is None:
        value = compute()
        put(key, value)
    return value
