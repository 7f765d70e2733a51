"""The repository pages against the local repository server: connections (tokens stored encrypted only,
shown as their last four characters, owner-only), importing a record's file (a choice among several, errors
escaped, nothing half-stored), and the flow import -> run -> deposit a draft."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

from anonymizer_app.engine import Role
from anonymizer_app.models import Dataset, RemoteAccount
from anonymizer_app.services import exports
from tests import remote_helpers
from tests.anonymizer_helpers import finished_job, make_dataset, set_roles
from tests.remote_helpers import DATAVERSE_TOKEN, VISITS_CSV, ZENODO_TOKEN

repo_server = remote_helpers.repo_server  # the fixture
pytestmark = pytest.mark.django_db


def add_connection(client, base, service="zenodo", token=ZENODO_TOKEN, name="Test Zenodo"):
    return client.post("/connections/", {"name": name, "service": service, "base_url": base, "token": token})


def test_links_from_the_datasets_and_result_pages(client_alice, user):
    page = client_alice.get("/").content.decode()
    assert 'href="/datasets/import-remote/"' in page and "Import from Zenodo / Dataverse" in page
    job = finished_job(make_dataset(user))
    page = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert f'href="/jobs/{job.pk}/result/deposit/"' in page
    assert 'href="/connections/"' in client_alice.get("/accounts/").content.decode()


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


def test_flow_import_run_deposit_draft(client_alice, user, other_user, repo_server):
    base, repo = repo_server
    client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base, "identifier": "101"})
    ds = Dataset.objects.get(owner=user)
    set_roles(ds, {"name": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
                   "disease": Role.SENSITIVE})
    job = finished_job(ds, k=3)
    url = f"/jobs/{job.pk}/result/deposit/"
    assert "add a connection" in client_alice.get(url).content.decode()
    add_connection(client_alice, base)
    account = RemoteAccount.objects.get(owner=user)
    page = client_alice.get(url).content.decode()
    assert 'id="deposit-form"' in page and "adult-visits, anonymized" in page
    response = client_alice.post(url, {"account": account.pk, "title": "Visits <anonymized>",
                                       "description": "k=3", "creators": "Doe, Jane\nRoe, Rick",
                                       "format": "csv", "with_report": "on"})
    page = response.content.decode()
    assert response.status_code == 200 and 'id="deposit-done"' in page
    (dep_id, draft), = repo.drafts.items()
    assert f'href="{base}/deposit/{dep_id}"' in page and "Visits <anonymized>" not in page
    assert draft["metadata"] == {"title": "Visits <anonymized>", "upload_type": "dataset", "description": "k=3",
                                 "creators": [{"name": "Doe, Jane"}, {"name": "Roe, Rick"}]}
    assert list(draft["files"]) == ["adult-visits-datafly-k3-anonymized.csv", "adult-visits-release-report.html"]
    assert draft["files"]["adult-visits-datafly-k3-anonymized.csv"] == exports.export_result(job.result, "csv")
    assert draft["files"]["adult-visits-datafly-k3-anonymized.csv"] != VISITS_CSV
    assert b"Ann" not in draft["files"]["adult-visits-datafly-k3-anonymized.csv"]  # the identifier is gone
    report = draft["files"]["adult-visits-release-report.html"].decode()
    assert report.lower().startswith("<!doctype html") and "<style>" in report and "adult-visits" in report
    assert not any("publish" in r["path"] for r in repo.requests)
    # a Dataverse connection needs the dataverse and a contact
    add_connection(client_alice, base, "dataverse", DATAVERSE_TOKEN, name="DV")
    dv = RemoteAccount.objects.get(name="DV")
    response = client_alice.post(url, {"account": dv.pk, "title": "T", "description": "D", "creators": "Doe, Jane",
                                       "format": "xlsx"})
    page = response.content.decode()
    assert response.status_code == 400 and "name the dataverse" in page and "contact e-mail" in page
    response = client_alice.post(url, {"account": dv.pk, "title": "T", "description": "D", "creators": "Doe, Jane",
                                       "format": "xlsx", "dataverse": "anonymized", "contact_email": "j@example.org"})
    assert response.status_code == 200 and "dataset.xhtml?persistentId=doi:10.5072/FK2/NEW" in response.content.decode()
    # another user: not the job, and not the connection
    client = Client()
    client.force_login(other_user)
    assert client.get(url).status_code == 404
    other_job = finished_job(make_dataset(other_user))
    response = client.post(f"/jobs/{other_job.pk}/result/deposit/", {"account": account.pk, "title": "T",
                                                                      "description": "D", "creators": "X",
                                                                      "format": "csv"})
    assert response.status_code == 400 and "add a connection" in response.content.decode()
    add_connection(client, base, name="Other's")
    response = client.post(f"/jobs/{other_job.pk}/result/deposit/", {"account": account.pk, "title": "T",
                                                                      "description": "D", "creators": "X",
                                                                      "format": "csv"})
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()
    assert len(repo.drafts) == 2
