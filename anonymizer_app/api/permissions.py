"""API key scopes: which scope (accounts.models.SCOPES) each API view needs for each method.

The rule, in this order:
1. A view's ``required_scope`` attribute: a scope for every method, or a {method: scope} mapping (methods it
   leaves out fall to rule 2). The admin views declare it: re-identification tables, pseudonymization keys,
   repository connections.
2. Otherwise by method: GET, HEAD and OPTIONS read (``read``); any other method changes or starts something
   (``run``).

A request authenticated by an API key needs that scope on the key, or gets 403 "this API key lacks the scope
'run'". A request authenticated otherwise (a test's forced user) is its user and is not limited by scopes.
"""

from __future__ import annotations

from rest_framework import permissions

from accounts.models import ADMIN, READ, RUN, SCOPES, ApiToken


def required_scope(view, method: str) -> str:
    declared = getattr(view, "required_scope", None)
    if isinstance(declared, dict):
        declared = declared.get(method.upper())
    if declared is not None:
        if declared not in SCOPES:
            raise ValueError(f"{type(view).__name__}.required_scope: {declared!r} is not one of {SCOPES}")
        return declared
    return READ if method.upper() in permissions.SAFE_METHODS else RUN


class HasKeyScope(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        token = request.auth
        if not isinstance(token, ApiToken):
            return True
        scope = required_scope(view, request.method)
        if token.has_scope(scope):
            return True
        self.message = f"this API key lacks the scope '{scope}' (it has: {', '.join(token.scope_list)})"
        return False


__all__ = ["ADMIN", "READ", "RUN", "HasKeyScope", "required_scope"]
