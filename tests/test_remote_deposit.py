"""Depositing a result as a Zenodo or Dataverse draft on the web, against the local repository server: the
result page's link, the flow import -> run -> deposit (the download's bytes, the release report, never
published), Dataverse's required fields, owner-only jobs and connections."""

from __future__ import annotations

import pytest
from django.test import Client

from anonymizer_app.engine import Role
from anonymizer_app.models import Dataset, Job, RemoteAccount, SourceImport
from anonymizer_app.services import exports, jobs, source_imports
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
    deposit = Job.objects.get(kind="repository-deposit")
    assert response.status_code == 302 and response["Location"] == f"/jobs/{deposit.pk}/"
    assert repo.drafts == {} and deposit.status == "queued"  # the uploads are the worker's
    assert deposit.options["source_job"] == str(job.pk) and deposit.options["account"] == account.pk
    assert "Deposit to a repository (draft)" in client_alice.get(response["Location"]).content.decode()
    deposit = jobs.run_job(deposit)
    assert deposit.status == "succeeded", deposit.message
    page = client_alice.get(url).content.decode()
    assert 'id="deposit-done"' in page and 'id="deposit-list"' in page
    (dep_id, draft), = repo.drafts.items()
    assert deposit.options["draft"] == {"service": "zenodo", "identifier": dep_id, "url": f"{base}/deposit/{dep_id}",
                                        "files": ["adult-visits-datafly-k3-anonymized.csv",
                                                  "adult-visits-release-report.html"]}
    status = client_alice.get(f"/jobs/{deposit.pk}/status/").json()
    assert status["result_url"] == url
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
    assert response.status_code == 302
    assert jobs.run_job(Job.objects.filter(kind="repository-deposit").latest("created")).status == "succeeded"
    assert "dataset.xhtml?persistentId=doi:10.5072/FK2/NEW" in client_alice.get(url).content.decode()
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
    assert len(repo.drafts) == 2 and Job.objects.filter(kind="repository-deposit").count() == 2


def _queued_deposit(client_alice, user, base, **extra) -> tuple[Job, Job]:
    job = finished_job(make_dataset(user), k=2)
    add_connection(client_alice, base)
    account = RemoteAccount.objects.get(owner=user)
    response = client_alice.post(f"/jobs/{job.pk}/result/deposit/", {
        "account": account.pk, "title": "T", "description": "D", "creators": "Doe, Jane", "format": "csv",
        "with_report": "on", **extra})
    assert response.status_code == 302
    return job, Job.objects.get(kind="repository-deposit")


def test_a_cancel_between_files_deletes_the_draft(client_alice, user, other_user, repo_server, monkeypatch):
    from anonymizer_app.services import remote_jobs

    base, repo = repo_server
    run, deposit = _queued_deposit(client_alice, user, base)
    other = Client()
    other.force_login(other_user)
    assert other.get(f"/jobs/{deposit.pk}/").status_code == 404
    assert other.post(f"/jobs/{deposit.pk}/cancel/").status_code == 404
    checked = remote_jobs._cancelled
    calls: list[int] = []

    def cancel_before_the_report(job) -> bool:  # 1: before the draft, 2: before the rows, 3: before the report
        calls.append(len(repo.drafts))
        if len(calls) == 3:
            Job.objects.filter(pk=job.pk).update(cancel_requested=True)
        return checked(job)

    monkeypatch.setattr(remote_jobs, "_cancelled", cancel_before_the_report)
    deposit = jobs.run_job(deposit)
    assert deposit.status == "cancelled" and "draft" not in deposit.options
    assert calls == [0, 1, 1] and repo.drafts == {} and len(repo.deleted) == 1
    puts = [r["path"] for r in repo.requests if r["method"] == "PUT"]
    assert len(puts) == 1 and puts[0].endswith("-anonymized.csv")  # the report was never sent


def test_a_failed_upload_fails_the_job_and_deletes_the_draft(client_alice, user, repo_server):
    base, repo = repo_server
    repo.fail_uploads = True
    run, deposit = _queued_deposit(client_alice, user, base)
    deposit = jobs.run_job(deposit)
    assert deposit.status == "failed" and "answered 500" in deposit.message, deposit.message
    assert repo.drafts == {} and len(repo.deleted) == 1 and "draft" not in deposit.options
    page = client_alice.get(f"/jobs/{run.pk}/result/deposit/").content.decode()
    assert 'id="deposit-list"' in page and "failed" in page and 'id="deposit-done"' not in page
