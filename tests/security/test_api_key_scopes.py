"""API keys with scopes and an expiry.

- Every API view resolves to a scope (the rule of anonymizer_app/api/permissions.py: a declared
  ``required_scope``, else GET/HEAD/OPTIONS read and other methods run); the admin views are exactly the
  re-identification table, the pseudonymization keys and the repository connections.
- On every view and method: a key without the scope gets 403 naming it; a key with only that scope passes the
  check; an expired key gets 401 saying when it expired.
- The account page creates keys with the scopes and lifetime asked for, at most the operator's maximum, and
  lists each key's scopes, creation, expiry and last use; the migration gave existing keys all three scopes and
  the default expiry.
"""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from api_helpers import Api
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import get_resolver
from django.urls.resolvers import URLResolver
from django.utils import timezone
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.views import APIView

from accounts.models import SCOPES, ApiToken
from anonymizer_app.api.permissions import required_scope

pytestmark = pytest.mark.django_db

ADMIN_VIEWS = {"KeyList", "KeyDetail", "RunReidentification", "RemoteConnections", "RemoteConnectionDetail",
               "RemoteFiles", "RemoteImport", "RemoteDeposit"}
PUBLIC_VIEWS = {SpectacularAPIView, SpectacularSwaggerSplitView}  # the schema and its docs page: no data
METHODS = ("get", "post", "put", "patch", "delete")
SAMPLE = {"int": "1", "uuid": str(uuid.UUID(int=1)), "str": "csv", "path": "x", "slug": "x"}


def _api_routes():
    """(url, view class) of every route under /api/v1/, with sample values in its parameters."""
    def walk(patterns, prefix):
        for p in patterns:
            if isinstance(p, URLResolver):
                yield from walk(p.url_patterns, prefix + str(p.pattern))
            else:
                yield prefix + str(p.pattern), p.callback

    for route, callback in walk(get_resolver().url_patterns, ""):
        if not route.startswith("api/v1/"):
            continue
        url = re.sub(r"\(\?P<\w+>[^)]*\)", "1", route).replace("^", "").replace("$", "")
        url = re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLE[m.group(1) or "str"], url)
        yield "/" + url, getattr(callback, "cls", None)


def _operations():
    """(url, method, view class) of every API operation that needs a key."""
    ops = []
    for url, cls in _api_routes():
        if cls is None or cls in PUBLIC_VIEWS:
            continue
        assert issubclass(cls, APIView), url
        ops += [(url, m, cls) for m in METHODS if hasattr(cls, m)]
    return ops


OPERATIONS = _operations()


def _scope(cls, method: str) -> str:
    return required_scope(cls(), method)


def test_every_api_view_resolves_to_a_scope():
    routes = list(_api_routes())
    # what is left out is public or the JSON 404: nothing that reads or changes data
    left_out = {url for url, cls in routes if cls is None or cls in PUBLIC_VIEWS}
    assert left_out == {"/api/v1/schema/", "/api/v1/docs/", "/api/v1/.*"}
    assert len(OPERATIONS) >= 60
    scopes = {(url, m): _scope(cls, m) for url, m, cls in OPERATIONS}
    assert set(scopes.values()) == set(SCOPES)
    for url, m, cls in OPERATIONS:
        expected = "admin" if cls.__name__ in ADMIN_VIEWS else ("read" if m == "get" else "run")
        assert scopes[(url, m)] == expected, (url, m)
    assert {cls.__name__ for _, _, cls in OPERATIONS if _scope(cls, "get") == "admin"
            or _scope(cls, "post") == "admin"} == ADMIN_VIEWS


def _call(api: Api, url: str, method: str):
    return getattr(api, method)(url)


def test_a_key_without_the_scope_gets_403_naming_it_on_every_view(user):
    others = {scope: [s for s in SCOPES if s != scope] for scope in SCOPES}
    apis = {scope: Api(ApiToken.issue(user, f"no {scope}", scopes=others[scope])[1]) for scope in SCOPES}
    only = {scope: Api(ApiToken.issue(user, f"only {scope}", scopes=[scope])[1]) for scope in SCOPES}
    for url, method, cls in OPERATIONS:
        scope = _scope(cls, method)
        r = _call(apis[scope], url, method)
        assert r.status_code == 403, (url, method, r.status_code)
        assert r.json() == {"detail": f"this API key lacks the scope '{scope}' (it has: {', '.join(others[scope])})"}
        # the key holding just that scope gets past the check (to its 404 for the sample ids, 400, 405, ...)
        r = _call(only[scope], url, method)
        assert r.status_code not in (401, 403), (url, method, r.status_code, r.content[:200])


def test_an_expired_key_gets_401_saying_when_on_every_view(user):
    token, key = ApiToken.issue(user, "old")
    ApiToken.objects.filter(pk=token.pk).update(expires=timezone.now().replace(year=2026, month=3, day=1, hour=9,
                                                                              minute=30))
    api = Api(key)
    message = (f"the API key {token.prefix}… expired on 2026-03-01 09:30 UTC: create a new one on your account "
               "page")
    for url, method, _ in OPERATIONS:
        r = _call(api, url, method)
        assert (r.status_code, r.json()) == (401, {"detail": message}), (url, method)
        assert r["WWW-Authenticate"].startswith("Bearer")


def test_a_key_past_its_expiry_by_a_second_is_refused_and_one_before_it_works(user):
    token, key = ApiToken.issue(user, "edge")
    ApiToken.objects.filter(pk=token.pk).update(expires=timezone.now() + timedelta(minutes=5))
    assert Api(key).get("/api/v1/registry/").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires=timezone.now() - timedelta(seconds=1))
    assert Api(key).get("/api/v1/registry/").status_code == 401


def test_a_forced_user_is_not_limited_by_scopes(user):
    """Authentication other than a key (DRF's test client forcing a user) is the user itself."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user)
    assert client.get("/api/v1/keys/").status_code == 200


# ---- the account page -------------------------------------------------------------------------------------
def _page(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def test_the_account_page_creates_a_key_with_its_scopes_and_lifetime(user, settings):
    settings.ANONYMIZER_API_KEY_MAX_DAYS, settings.ANONYMIZER_API_KEY_DEFAULT_DAYS = 30, 7
    c = _page(user)
    form = c.get("/accounts/").content.decode()
    assert 'name="scopes" value="read"' in form and 'name="days"' in form and 'max="30"' in form
    assert "1 to 30 days (this server&#x27;s limit); empty: 7." in form
    before = timezone.now()
    r = c.post("/accounts/api-keys/", {"name": "export", "scopes": ["read", "run"], "days": "30"})
    assert r.status_code == 201
    token = ApiToken.objects.get(name="export")
    assert token.scopes == "read run" and token.scope_list == ["read", "run"]
    assert timedelta(days=30) <= token.expires - before <= timedelta(days=30, minutes=1)
    html = r.content.decode()
    assert "(scopes: read, run; expires" in html
    # the key works within its scopes, and the admin views say what it lacks
    api = Api(r.context["new_key"])
    assert api.get("/api/v1/registry/").status_code == 200
    assert api.get("/api/v1/keys/").json() == {"detail": "this API key lacks the scope 'admin' (it has: read, run)"}
    # empty fields: read only, the default lifetime
    r = c.post("/accounts/api-keys/", {"name": "reader"})
    token = ApiToken.objects.get(name="reader")
    assert r.status_code == 201 and token.scopes == "read"
    assert timedelta(days=7) <= token.expires - before <= timedelta(days=7, minutes=1)


@pytest.mark.parametrize(("days", "message"), [
    ("31", "at most 30 days: this server&#x27;s API keys live no longer"),
    ("0", "Ensure this value is greater than or equal to 1."),
    ("x", "Enter a whole number."),
])
def test_the_account_page_refuses_a_lifetime_beyond_the_maximum(user, settings, days, message):
    settings.ANONYMIZER_API_KEY_MAX_DAYS = 30
    r = _page(user).post("/accounts/api-keys/", {"name": "long", "scopes": ["read"], "days": days})
    assert r.status_code == 400 and message in r.content.decode()
    assert not ApiToken.objects.exists()


def test_the_account_page_refuses_an_unknown_scope(user):
    r = _page(user).post("/accounts/api-keys/", {"name": "k", "scopes": ["root"]})
    assert r.status_code == 400 and "Select a valid choice. root is not one of the available choices." in \
        r.content.decode()
    assert not ApiToken.objects.exists()


def test_the_account_page_lists_scope_created_expires_last_used_and_status(user):
    fresh, _ = ApiToken.issue(user, "fresh", scopes=["read"])
    used, key = ApiToken.issue(user, "used", scopes=["run", "admin"])
    Api(key).post("/api/v1/runs/check/", {})
    old, _ = ApiToken.issue(user, "old")
    ApiToken.objects.filter(pk=old.pk).update(expires=timezone.now() - timedelta(days=1))
    html = _page(user).get("/accounts/").content.decode()
    rows = {name: row for row in re.findall(r"<tr>(.*?)</tr>", html, re.S)
            for name in re.findall(r"<td>([^<]+)</td>", row)[:1]}
    assert set(rows) == {"fresh", "used", "old"}
    used.refresh_from_db()
    assert '<td class="api-key-scopes">read</td>' in rows["fresh"] and "never" in rows["fresh"]
    assert '<td class="api-key-scopes">run, admin</td>' in rows["used"]
    assert timezone.localtime(used.last_used).strftime("%Y-%m-%d %H:%M") in rows["used"]
    assert timezone.localtime(fresh.expires).strftime("%Y-%m-%d %H:%M") in rows["fresh"]
    assert "<td>active</td>" in rows["fresh"] and "<td>expired</td>" in rows["old"]
    assert "Revoke" in rows["fresh"] and "Revoke" not in rows["old"]


def test_issue_refuses_what_the_operator_does_not_allow(user, settings):
    settings.ANONYMIZER_API_KEY_MAX_DAYS = 10
    with pytest.raises(ValueError, match="expiry: 1 to 10 days, not 11"):
        ApiToken.issue(user, "k", days=11)
    with pytest.raises(ValueError, match=r"scopes: one or more of read, run, admin; not \['root'\]"):
        ApiToken.issue(user, "k", scopes=["read", "root"])
    with pytest.raises(ValueError, match="scopes: one or more"):
        ApiToken.issue(user, "k", scopes=[])


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_existing_keys_all_scopes_and_the_default_expiry(django_user_model, settings):
    settings.ANONYMIZER_API_KEY_DEFAULT_DAYS = 90
    owner = django_user_model.objects.create_user("carol", password="x")
    executor = MigrationExecutor(connection)
    before, after = [("accounts", "0001_api_tokens")], [("accounts", "0002_api_token_scopes_expiry")]
    try:
        executor.migrate(before)
        old_apps = executor.loader.project_state(before).apps
        old_apps.get_model("accounts", "ApiToken").objects.create(owner_id=owner.pk, name="script", prefix="anon_abc",
                                                                  key_hash="0" * 64)
        migrated_at = timezone.now()
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(after)
    finally:
        MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    token = ApiToken.objects.get(name="script")
    assert token.scope_list == ["read", "run", "admin"]
    assert timedelta(days=90) <= token.expires - migrated_at <= timedelta(days=90, minutes=1)
