"""Depositing a result as a Zenodo or Dataverse draft on the web, against the local repository server: the
result page's link, the flow import -> run -> deposit (the download's bytes, the release report, never
published), Dataverse's required fields, owner-only jobs and connections."""

from __future__ import annotations

import pytest
from django.test import Client

from anonymizer_app.engine import Role
from anonymizer_app.models import Dataset, RemoteAccount, SourceImport
from anonymizer_app.services import exports, source_imports
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


def test_flow_import_run_deposit_draft(client_alice, user, other_user, repo_server):
    base, repo = repo_server
    client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base, "identifier": "101"})
    source_imports.run(SourceImport.objects.get(owner=user))  # the worker's part
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
