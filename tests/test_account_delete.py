"""/accounts/delete/: the password typed again deletes the account and everything it owns (datasets, jobs,
results, hierarchies, editor sessions, pending uploads and every file of them), then logs out; /accounts/ is
the account page that leads there."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from erasure_helpers import TOP_FOLDERS, media, populate

from anonymizer_app.models import Dataset, Job
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db
URL = "/accounts/delete/"


def test_the_account_page_shows_the_data_and_links_to_the_deletion(client_alice, user, settings):
    settings.ANONYMIZER_RESULT_RETENTION_DAYS = 30
    html = client_alice.get("/accounts/").content.decode()
    assert "<h1>Your account</h1>" in html
    assert '<dd id="retention">30 days after the job ends, then deleted</dd>' in html
    assert 'href="/accounts/delete/"' in html
    assert 'href="/accounts/" title="Your account">alice</a>' in html  # the name in the top bar leads here


def test_get_asks_for_the_password(client_alice, user):
    populate(client_alice, user)
    r = client_alice.get(URL)
    assert r.status_code == 200
    html = r.content.decode()
    assert "<h1>Delete your account?</h1>" in html
    assert ('<strong id="delete-summary">1 account, 1 dataset, 4 jobs, 3 results, 1 hierarchy and 11 files</strong>'
            in html)
    assert 'type="password" name="password"' in html and "csrfmiddlewaretoken" in html
    assert '<a class="btn" href="/accounts/">Cancel</a>' in html


def test_a_wrong_password_deletes_nothing(client_alice, user):
    populate(client_alice, user)
    files = media()
    r = client_alice.post(URL, {"password": "not-my-password"})
    assert r.status_code == 400
    assert "The password is not correct; your account was not deleted." in r.content.decode()
    assert get_user_model().objects.filter(pk=user.pk).exists() and media() == files
    assert client_alice.get("/").status_code == 200  # still signed in


def test_the_right_password_deletes_everything_and_logs_out(client_alice, user, other_user,
                                                            django_capture_on_commit_callbacks):
    bob = Client()
    bob.force_login(other_user)
    populate(bob, other_user)
    bobs = media()
    populate(client_alice, user)
    with django_capture_on_commit_callbacks(execute=True):
        r = client_alice.post(URL, {"password": user.raw_password})
    assert r.status_code == 302 and r["Location"] == "/accounts/login/"
    assert not get_user_model().objects.filter(username="alice").exists()
    assert (Dataset.objects.filter(owner_id=user.pk).count(), Job.objects.filter(owner_id=user.pk).count(),
            Hierarchy.objects.filter(owner_id=user.pk).count()) == (0, 0, 0)
    assert media() == bobs | TOP_FOLDERS  # nothing of alice's, all of bob's
    html = client_alice.get("/accounts/login/").content.decode()
    assert ("Your account &#x27;alice&#x27; and all its data were deleted: 1 account, 1 dataset, 4 jobs, 3 results, "
            "1 hierarchy and 11 files.") in html
    assert client_alice.get("/").status_code == 302  # logged out
    assert bob.get("/").status_code == 200


def test_anonymous_is_sent_to_the_login(client):
    for method in ("get", "post"):
        r = getattr(client, method)(URL)
        assert r.status_code == 302 and r["Location"] == f"/accounts/login/?next={URL}"


def test_the_post_needs_the_csrf_token(user):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post(URL, {"password": user.raw_password}).status_code == 403
    assert get_user_model().objects.filter(pk=user.pk).exists()
