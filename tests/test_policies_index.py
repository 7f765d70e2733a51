"""policies:index (the list, with the import form): the owner's policies only, escaped."""

from __future__ import annotations

import pytest
from policies_helpers import small_job

from policies import services

pytestmark = pytest.mark.django_db


def test_lists_the_owners_policies_escaped(client_alice, user, other_user):
    job = small_job(user)
    services.save_from_job(job, "<b>quarterly</b>", "desc <i>x</i>")
    services.save_from_job(small_job(other_user), "not mine")
    r = client_alice.get("/policies/")
    assert r.status_code == 200
    assert b"&lt;b&gt;quarterly&lt;/b&gt;" in r.content and b"<b>quarterly" not in r.content
    assert b"desc &lt;i&gt;x&lt;/i&gt;" in r.content
    assert b"not mine" not in r.content
    assert b'id="policy-import"' in r.content


def test_empty(client_alice):
    assert b'id="no-policies"' in client_alice.get("/policies/").content


def test_the_navigation_links_to_it(client_alice):
    assert b'href="/policies/"' in client_alice.get("/").content


def test_it_requires_login(client):
    assert client.get("/policies/")["Location"].startswith("/accounts/login/")
