"""API keys: created on the account page (the key shown once, only its SHA-256 stored), revoked there
(another account's key is a 404), and the API's authentication: Bearer or Token, no key 401, unknown or
revoked key 401, the account's deletion deletes its keys."""

from __future__ import annotations

import hashlib

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.models import ApiToken
from anonymizer_app.services import erasure

pytestmark = pytest.mark.django_db


@pytest.fixture
def user():
    return get_user_model().objects.create_user("ada", password="pw-ada-123!")


@pytest.fixture
def other():
    return get_user_model().objects.create_user("bob", password="pw-bob-123!")


def logged_in(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def test_create_shows_the_key_once_and_stores_its_hash(user):
    c = logged_in(user)
    r = c.post("/accounts/api-keys/", {"name": "laptop <b>"})
    assert r.status_code == 201
    token = ApiToken.objects.get(owner=user)
    key = r.context["new_key"]
    assert key.startswith("anon_") and len(key) > 40
    assert token.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert token.prefix == key[:12] and token.name == "laptop <b>"
    html = r.content.decode()
    assert key in html and "laptop &lt;b&gt;" in html and "laptop <b>" not in html
    # the next view of the page lists the key by its prefix only
    page = c.get("/accounts/").content.decode()
    assert key not in page and token.prefix in page


def test_create_needs_a_name_and_a_login(user):
    assert logged_in(user).post("/accounts/api-keys/", {"name": " "}).status_code == 400
    assert not ApiToken.objects.exists()
    r = Client().post("/accounts/api-keys/", {"name": "x"})
    assert r.status_code == 302 and "/accounts/login/" in r["Location"]
    assert logged_in(user).get("/accounts/api-keys/").status_code == 405


def test_revoke_owner_only(user, other):
    token, key = ApiToken.issue(user, "k")
    assert logged_in(other).post(f"/accounts/api-keys/{token.pk}/revoke/").status_code == 404
    token.refresh_from_db()
    assert token.revoked is None
    r = logged_in(user).post(f"/accounts/api-keys/{token.pk}/revoke/")
    assert r.status_code == 302
    token.refresh_from_db()
    assert token.revoked is not None
    assert "revoked" in logged_in(user).get("/accounts/").content.decode()


def test_api_authentication(user):
    token, key = ApiToken.issue(user, "k")
    c = Client()
    r = c.get("/api/v1/registry/")
    assert r.status_code == 401 and r["WWW-Authenticate"].startswith("Bearer")
    assert r.json() == {"detail": "Authentication credentials were not provided."}
    assert c.get("/api/v1/registry/", HTTP_AUTHORIZATION=f"Bearer {key}").status_code == 200
    assert c.get("/api/v1/registry/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    token.refresh_from_db()
    assert token.last_used is not None
    r = c.get("/api/v1/registry/", HTTP_AUTHORIZATION=f"Bearer {key}x")
    assert (r.status_code, r.json()) == (401, {"detail": "unknown API key"})
    r = c.get("/api/v1/registry/", HTTP_AUTHORIZATION=f"Bearer {key} {key}")
    assert r.status_code == 401 and "one key" in r.json()["detail"]
    token.revoke()
    r = c.get("/api/v1/registry/", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert (r.status_code, r.json()) == (401, {"detail": f"the API key {token.prefix}… was revoked"})
    # a browser session is not an API credential
    assert logged_in(user).get("/api/v1/registry/").status_code == 401


def test_account_deletion_deletes_the_keys(user, other):
    ApiToken.issue(user, "a")
    ApiToken.issue(other, "b")
    erasure.erase_user(user)
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["b"]


def test_schema_and_docs_are_served_without_a_cdn(user):
    c = Client()
    r = c.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert r.status_code == 200
    schema = r.json()
    assert "/api/v1/registry/" in schema["paths"]
    assert all(p.startswith("/api/v1/") for p in schema["paths"])
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    docs = c.get("/api/v1/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "cdn" not in html.lower() and "https://" not in html
    assert "<script>" not in html  # start-up script served as a file: the CSP (script-src 'self') holds
    script = c.get("/api/v1/docs/?script")
    assert script.status_code == 200 and b"SwaggerUIBundle" in script.content
