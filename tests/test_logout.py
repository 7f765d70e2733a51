import pytest
from django.contrib.messages import get_messages
from django.template.loader import render_to_string

pytestmark = pytest.mark.django_db

URL = "/accounts/logout/"


def test_it_logs_out_by_post(client_alice):
    assert "_auth_user_id" in client_alice.session
    r = client_alice.post(URL)
    assert r.status_code == 302
    assert r["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in client_alice.session
    assert "You have been logged out." in [str(m) for m in get_messages(r.wsgi_request)]


def test_message_shown_on_next_page(client_alice):
    r = client_alice.post(URL, follow=True)
    assert r.status_code == 200
    assert "You have been logged out." in r.content.decode()


def test_it_refuses_get(client_alice):
    r = client_alice.get(URL)
    assert r.status_code == 405
    assert "_auth_user_id" in client_alice.session


def test_layout_shows_user_and_logout_form_when_logged_in(rf, user):
    # Every page extends base.html; render it directly for a logged-in request.
    request = rf.get("/")
    request.user = user
    html = render_to_string("base.html", request=request)
    assert "alice" in html
    assert 'action="/accounts/logout/"' in html
    assert 'method="post"' in html
    assert 'href="/jobs/"' in html
    assert 'href="/hierarchies/"' in html
    assert 'href="/accounts/signup/"' not in html


def test_logout_when_anonymous_is_harmless(client):
    r = client.post(URL)
    assert r.status_code == 302
    assert "You have been logged out." not in [str(m) for m in get_messages(r.wsgi_request)]
