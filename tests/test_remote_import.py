"""Importing from Zenodo or Dataverse on the web, against the local repository server: the datasets page's link,
a record's file through the upload's ingestion, a choice among several table files, a Dataverse file in its
original format with the connection's token; refusals escaped with nothing stored."""

from __future__ import annotations

import pytest

from anonymizer_app.models import Dataset, RemoteAccount
from tests import remote_helpers
from tests.remote_helpers import DATAVERSE_TOKEN, ZENODO_TOKEN

repo_server = remote_helpers.repo_server  # the fixture
pytestmark = pytest.mark.django_db


def add_connection(client, base, service="zenodo", token=ZENODO_TOKEN, name="Test Zenodo"):
    return client.post("/connections/", {"name": name, "service": service, "base_url": base, "token": token})


def test_import_a_public_record_and_choose_among_files(client_alice, user, repo_server):
    base, repo = repo_server
    response = client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base,
                                                               "identifier": "10.5281/zenodo.101"})
    ds = Dataset.objects.get(owner=user)
    assert response.status_code == 302 and response["Location"] == f"/datasets/{ds.pk}/"
    assert (ds.name, ds.n_rows, ds.n_columns) == ("adult-visits", 6, 4)
    response = client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base,
                                                               "identifier": "102"})
    page = response.content.decode()
    assert response.status_code == 200 and 'id="remote-file-choice"' in page
    assert 'value="a.csv"' in page and 'value="b.csv"' in page
    response = client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base,
                                                               "identifier": "102", "file": "b.csv", "name": "B"})
    assert response.status_code == 302 and Dataset.objects.get(owner=user, name="B").n_rows == 6


def test_import_refusals_are_escaped_and_store_nothing(client_alice, user, repo_server):
    base, repo = repo_server
    dv = RemoteAccount(owner=user, service="dataverse", base_url=base, name="DV")  # a token revoked since
    dv.set_token("wrong-token-0000")
    dv.save()
    cases = [
        ({"service": "zenodo", "base_url": base, "identifier": "999"}, "the record 999 was not found (404)"),
        ({"service": "zenodo", "base_url": base, "identifier": "103"}, "has no CSV, TSV or Excel file"),
        ({"service": "zenodo", "base_url": base, "identifier": "101", "file": "readme.pdf"}, "not a table file"),
        ({"service": "zenodo", "base_url": base, "identifier": "<b>x</b>"}, "&#x27;&lt;b&gt;x&lt;/b&gt;&#x27; is not a Zenodo record"),
        ({"service": "zenodo", "base_url": base, "identifier": "105"}, "broken.csv, line 2"),
        ({"account": dv.pk, "service": "zenodo", "identifier": "doi:10.5072/FK2/AAAAAA"},
         "refused the token (401: Bad API key)"),
        ({"service": "zenodo", "base_url": "https://evil.example.org", "identifier": "1"}, "Select a valid choice"),
    ]
    for data, message in cases:
        response = client_alice.post("/datasets/import-remote/", data)
        page = response.content.decode()
        assert response.status_code == 400 and message in page, (data, page[:300])
        assert "<b>x</b>" not in page
    assert not Dataset.objects.exists()


def test_import_with_a_dataverse_connection_fetches_the_original(client_alice, user, repo_server):
    base, repo = repo_server
    add_connection(client_alice, base, "dataverse", DATAVERSE_TOKEN, name="DV")
    dv = RemoteAccount.objects.get(name="DV")
    response = client_alice.post("/datasets/import-remote/", {"account": dv.pk, "identifier": "doi:10.5072/FK2/AAAAAA",
                                                               "file": "visits.csv", "service": "zenodo"})
    assert response.status_code == 302
    ds = Dataset.objects.get(owner=user)
    assert (ds.original_name, ds.n_rows) == ("visits.csv", 6)
    fetched = [r for r in repo.requests if r["path"].startswith("/api/access/datafile/")]
    assert [(r["path"], r["query"]) for r in fetched] == [("/api/access/datafile/42", "format=original")]
    assert fetched[0]["headers"]["X-Dataverse-key"] == DATAVERSE_TOKEN
