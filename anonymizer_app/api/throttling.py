"""Rate limits of the HTTP API, on the counters of accounts/throttling.py (the web's too).

- KeyThrottle: every request with a valid key counts against its account's ``api_key`` rate (all the
  account's keys share it: a new key is not a new budget); a request to a public view (the schema and its docs
  page) against its address's ``api_address`` rate.
- ActionThrottle: a view's ``throttle_scope`` (a limit name, or a {method: name} mapping) counts the
  expensive requests against the same limit as the web page doing the same thing (``upload``, ``run``, ``sql``,
  ...): a user cannot double a limit by using both.
- Requests without a valid key never reach these classes (DRF checks permissions first: they are a 401); the
  authentication counts them per client address (``api_address``, api/authentication.py).

A refusal is DRF's Throttled: 429, ``Retry-After`` and a ``detail`` saying which limit and when to try again.
"""

from __future__ import annotations

from rest_framework import exceptions, throttling

from accounts import throttling as limits


def too_many(name: str, wait: int) -> exceptions.Throttled:
    """DRF's 429 (the exception handler adds Retry-After from ``wait``) with our message only: given ``wait`` at
    construction, DRF would append its own "Expected available in N seconds." to it."""
    exc = exceptions.Throttled(detail=limits.refusal_message(name, wait))
    exc.wait = wait  # type: ignore[attr-defined]  # set by Throttled.__init__; djangorestframework-stubs 3.18.1 omit it
    return exc


class _Throttle(throttling.BaseThrottle):
    def _check(self, request, name: str) -> bool:
        # the Django request is marked: a web view the API calls for a download does not count it again
        setattr(request._request, limits.API_COUNTED, True)
        wait = limits.hit(name, limits.identity(request))
        if wait is not None:
            raise too_many(name, wait)
        return True


class KeyThrottle(_Throttle):
    def allow_request(self, request, view) -> bool:
        if request.user and request.user.is_authenticated:
            return self._check(request, "api_key")
        # only the public views get here without a key (the schema, its docs page: ~0.15 s of CPU per schema):
        # they count per address like every other request without a valid key
        return self._check(request, "api_address")


class ActionThrottle(_Throttle):
    def allow_request(self, request, view) -> bool:
        name = getattr(view, "throttle_scope", None)
        if isinstance(name, dict):
            name = name.get(request.method.upper())
        if not name:
            return True
        return self._check(request, name)
