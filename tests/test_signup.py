import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages

pytestmark = pytest.mark.django_db

URL = "/accounts/signup/"
GOOD_PASSWORD = "correct-Horse-battery-9"


def _messages(response):
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_it_shows_form(client):
    r = client.get(URL)
    assert r.status_code == 200
    html = r.content.decode()
    assert "Create an account" in html
    assert 'name="username"' in html
    assert 'name="password1"' in html
    assert 'name="password2"' in html


def test_it_creates_user_and_logs_in(client):
    r = client.post(URL, {"username": "carol", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD})
    assert r.status_code == 302
    assert r["Location"] == "/"

    user = get_user_model().objects.get(username="carol")
    assert user.check_password(GOOD_PASSWORD)
    assert user.is_active
    assert not user.is_staff
    assert client.session["_auth_user_id"] == str(user.pk)
    assert "Welcome, carol! Your account has been created." in _messages(r)


def test_it_rejects_mismatched_passwords(client):
    r = client.post(URL, {"username": "carol", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD + "x"})
    assert r.status_code == 200
    assert "The two password fields didn’t match." in r.content.decode()
    assert "Please correct the errors below." in _messages(r)
    assert not get_user_model().objects.filter(username="carol").exists()
    assert "_auth_user_id" not in client.session


def test_it_rejects_taken_username(client, user):
    r = client.post(URL, {"username": "alice", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD})
    assert r.status_code == 200
    assert "A user with that username already exists." in r.content.decode()
    assert get_user_model().objects.filter(username="alice").count() == 1


def test_it_rejects_taken_username_with_other_case(client, user):
    r = client.post(URL, {"username": "Alice", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD})
    assert r.status_code == 200
    assert "A user with that username already exists." in r.content.decode()
    assert get_user_model().objects.count() == 1


def test_it_rejects_weak_password(client):
    r = client.post(URL, {"username": "carol", "password1": "123", "password2": "123"})
    assert r.status_code == 200
    html = r.content.decode()
    assert "This password is too short." in html
    assert "This password is entirely numeric." in html
    assert not get_user_model().objects.filter(username="carol").exists()


def test_it_requires_username(client):
    r = client.post(URL, {"username": "", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD})
    assert r.status_code == 200
    assert "This field is required." in r.content.decode()
    assert get_user_model().objects.count() == 0


def test_it_redirects_logged_in_user(client_alice):
    r = client_alice.get(URL)
    assert r.status_code == 302
    assert r["Location"] == "/"


def test_it_rejects_get_without_csrf_token_on_post(client):
    from django.test import Client

    csrf_client = Client(enforce_csrf_checks=True)
    r = csrf_client.post(URL, {"username": "carol", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD})
    assert r.status_code == 403
    assert not get_user_model().objects.filter(username="carol").exists()
