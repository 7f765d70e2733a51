import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db

URL = "/accounts/login/"


def test_it_shows_form(client):
    r = client.get(URL)
    assert r.status_code == 200
    html = r.content.decode()
    assert 'name="username"' in html
    assert 'name="password"' in html
    assert "Sign up" in html


def test_it_logs_in(client, user):
    r = client.post(URL, {"username": "alice", "password": user.raw_password})
    assert r.status_code == 302
    assert r["Location"] == "/"
    assert client.session["_auth_user_id"] == str(user.pk)
    user.refresh_from_db()
    assert user.last_login is not None


def test_it_honours_safe_next(client, user):
    r = client.post(URL, {"username": "alice", "password": user.raw_password, "next": "/jobs/"})
    assert r.status_code == 302
    assert r["Location"] == "/jobs/"


def test_it_ignores_offsite_next(client, user):
    r = client.post(URL, {"username": "alice", "password": user.raw_password, "next": "https://evil.example/"})
    assert r.status_code == 302
    assert r["Location"] == "/"


def test_it_rejects_wrong_password(client, user):
    r = client.post(URL, {"username": "alice", "password": "wrong-password"})
    assert r.status_code == 200
    assert "Please enter a correct username and password." in r.content.decode()
    assert "_auth_user_id" not in client.session
    user.refresh_from_db()
    assert user.last_login is None


def test_it_rejects_unknown_user(client):
    r = client.post(URL, {"username": "nobody", "password": "whatever-123"})
    assert r.status_code == 200
    assert "Please enter a correct username and password." in r.content.decode()
    assert "_auth_user_id" not in client.session


def test_it_rejects_inactive_user(client, user):
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)
    r = client.post(URL, {"username": "alice", "password": user.raw_password})
    assert r.status_code == 200
    assert "_auth_user_id" not in client.session


def test_it_redirects_logged_in_user(client_alice):
    r = client_alice.get(URL)
    assert r.status_code == 302
    assert r["Location"] == "/"


def test_base_layout_shows_nav_when_logged_out(client):
    html = client.get(URL).content.decode()
    assert "Anonymizer" in html
    assert "/static/css/app.css" in html
    assert 'href="/accounts/signup/"' in html
