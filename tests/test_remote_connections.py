"""The Connections page: a repository API token checked, stored encrypted only (the raw row holds no trace),
shown back as its last four characters, owner-only; hosts off the allow-list are no choice."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

from anonymizer_app.models import RemoteAccount
from tests import remote_helpers
from tests.remote_helpers import ZENODO_TOKEN

repo_server = remote_helpers.repo_server  # the fixture
pytestmark = pytest.mark.django_db


def add_connection(client, base, service="zenodo", token=ZENODO_TOKEN, name="Test Zenodo"):
    return client.post("/connections/", {"name": name, "service": service, "base_url": base, "token": token})


def test_connection_token_stored_encrypted_and_never_shown(client_alice, user, other_user, repo_server):
    base, _ = repo_server
    response = add_connection(client_alice, base)
    assert response.status_code == 302 and response["Location"] == "/connections/"
    account = RemoteAccount.objects.get(owner=user)
    assert (account.service, account.base_url, account.token_hint) == ("zenodo", base, ZENODO_TOKEN[-4:])
    assert account.token() == ZENODO_TOKEN
    with connection.cursor() as cur:  # the raw row holds no trace of the token
        cur.execute("SELECT * FROM anonymizer_app_remoteaccount")
        row = " ".join(str(v) for v in cur.fetchone())
    assert ZENODO_TOKEN not in row and "SECRET" not in row
    page = client_alice.get("/connections/").content.decode()
    assert "Test Zenodo" in page and f"…{ZENODO_TOKEN[-4:]}" in page and "SECRET" not in page
    # a host off the allow-list is not even a choice; the same name twice is refused
    response = add_connection(client_alice, "https://evil.example.org", name="Evil")
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()
    assert add_connection(client_alice, base).status_code == 400
    # the token is checked before it is stored: a refused one is named, nothing saved
    response = add_connection(client_alice, base, "dataverse", "wrong-token-0000", name="DV")
    assert response.status_code == 400 and "refused the token (401: Bad API key)" in response.content.decode()
    assert RemoteAccount.objects.filter(owner=user).count() == 1
    # another user can neither see nor delete it
    client = Client()
    client.force_login(other_user)
    assert "Test Zenodo" not in client.get("/connections/").content.decode()
    assert client.post(f"/connections/{account.pk}/delete/").status_code == 404
    assert client_alice.post(f"/connections/{account.pk}/delete/").status_code == 302
    assert not RemoteAccount.objects.exists()
