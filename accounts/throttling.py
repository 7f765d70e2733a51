"""Rate limits shared by the web pages and the HTTP API: "at most N requests of this kind per period", per
signed-in account, or per client address (accounts.client_address) for requests without an account.

Counters live in Django's cache (``ANONYMIZER_THROTTLE_CACHE``, the ``default`` alias): with ``REDIS_URL``
that is Redis, shared by every gunicorn process and thread, so a limit holds for the whole server. A counter
is one fixed window: the key names the window, ``add`` starts it at 0 with the window's lifetime and ``incr``
counts atomically (Redis INCR). A client may therefore send up to twice the rate across a window boundary; in
exchange two processes can never both take the last request of a window.

Rates are ``N/second|minute|hour|day`` strings in ``ANONYMIZER_THROTTLE_RATES`` (settings.py, each one from its
``ANONYMIZER_THROTTLE_<NAME>`` environment variable); ``off`` turns one limit off. A refusal is a 429 with
``Retry-After`` (seconds to the end of the window): a page on the web (templates/429.html), JSON on the API.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from functools import wraps

from django.conf import settings
from django.core.cache import caches
from django.core.exceptions import ImproperlyConfigured
from django.shortcuts import render

from .client_address import client_bucket

log = logging.getLogger(__name__)

PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
# What each limit counts, for the refusal's message ("too many log-in attempts ...")
WHAT = {
    "login": "log-in attempts", "signup": "sign-ups", "upload": "uploads", "run": "run submissions",
    "sql": "SQL and repository imports and exports", "comparison": "comparisons", "lattice": "solution-lattice requests",
    "download": "downloads", "reidentification": "re-identification table requests",
    "api_key": "API requests for this account", "api_address": "API requests without a valid key",
}
# marks a Django request the API already counted, so a web view it calls for a download does not count it twice
API_COUNTED = "_anonymizer_api_counted"


@dataclass(frozen=True)
class Rate:
    limit: int
    period: int  # seconds

    def __str__(self) -> str:
        unit = next((name for name, seconds in PERIODS.items() if seconds == self.period), f"{self.period} s")
        return f"{self.limit} per {unit}"


def parse_rate(name: str, text: str | None) -> Rate | None:
    """``"30/minute"`` → Rate(30, 60); ``off``, ``none`` or empty → no limit."""
    text = (text or "").strip().lower()
    if text in ("", "off", "none", "0"):
        return None
    count, _, unit = text.partition("/")
    unit = unit.strip()
    period = next((seconds for word, seconds in PERIODS.items() if word.startswith(unit) and unit), None)
    if not count.strip().isdigit() or int(count) < 1 or period is None:
        raise ImproperlyConfigured(f"throttle rate {name!r}: {text!r} is not N/second, N/minute, N/hour or N/day "
                                   "(or 'off')")
    return Rate(int(count), period)


def rate_of(name: str) -> Rate | None:
    rates = getattr(settings, "ANONYMIZER_THROTTLE_RATES", {}) or {}
    if name not in rates:
        raise ImproperlyConfigured(f"no throttle rate {name!r} in ANONYMIZER_THROTTLE_RATES")
    return parse_rate(name, rates[name])


def identity(request) -> str:
    """The account for a signed-in request, else the client address."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return f"addr:{client_bucket(request)}"


def hit(name: str, who: str) -> int | None:
    """Count one request of kind ``name`` by ``who``; None when it is allowed, else the seconds until the
    window ends (the refused request is counted too: hammering does not shorten the wait)."""
    rate = rate_of(name)
    if rate is None:
        return None
    now = time.time()
    window = int(now // rate.period)
    key = f"throttle:{name}:{who}:{window}"
    cache = caches[getattr(settings, "ANONYMIZER_THROTTLE_CACHE", "default")]
    try:
        cache.add(key, 0, timeout=rate.period + 1)
        count = cache.incr(key)
    except ValueError:  # the key expired between add and incr: a new window
        cache.add(key, 1, timeout=rate.period + 1)
        count = 1
    except Exception:  # noqa: BLE001 - a cache outage must not take the site down: the limit is off meanwhile
        log.exception("throttle %s: the cache is not reachable; request allowed", name)
        return None
    if count <= rate.limit:
        return None
    return max(1, math.ceil((window + 1) * rate.period - now))


def refusal_message(name: str, wait: int) -> str:
    rate = rate_of(name)
    return f"too many {WHAT.get(name, name + ' requests')} (at most {rate}); try again in {wait} s"


def too_many_page(request, name: str, wait: int):
    response = render(request, "429.html", {"message": refusal_message(name, wait), "wait": wait}, status=429)
    response["Retry-After"] = str(wait)
    return response


def throttle(name: str, methods: tuple[str, ...] = ("POST",)):
    """A web view decorator: requests with one of ``methods`` count against the limit ``name``, per account (or
    address when signed out); beyond it the 429 page. Requests the API already counted pass (api/throttling)."""
    def decorate(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if request.method in methods and not getattr(request, API_COUNTED, False):
                wait = hit(name, identity(request))
                if wait is not None:
                    return too_many_page(request, name, wait)
            return view(request, *args, **kwargs)
        return wrapped
    return decorate
