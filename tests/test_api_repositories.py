"""Zenodo and Dataverse in the HTTP API (/api/v1/repositories/) against the local repository server:
connections (the token never returned, stored encrypted, owner-only), listing a record's files, importing
one as a dataset (202, a SourceImport polled at /api/v1/sql/imports/<id>/), depositing a run as a draft; errors as JSON."""

from __future__ import annotations

import pytest

from anonymizer_app.engine import Role
from anonymizer_app.models import Dataset, Job, RemoteAccount, SourceImport
from anonymizer_app.services import exports, jobs, source_imports
from tests import remote_helpers, test_remote_import
from tests.anonymizer_helpers import finished_job, set_roles
from tests.api_helpers import api_for
from tests.remote_helpers import DATAVERSE_TOKEN, ZENODO_TOKEN

repo_server = remote_helpers.repo_server  # the fixture
stalling_server = test_remote_import.stalling_server  # the fixture
pytestmark = pytest.mark.django_db
ROOT = "/api/v1/repositories"


def test_connections(repo_server, user, other_user):
    base, _ = repo_server
    api = api_for(user)
    response = api.post(f"{ROOT}/connections/", {"name": "Z", "service": "zenodo", "base_url": base,
                                                 "token": ZENODO_TOKEN})
    body = response.json()
    assert response.status_code == 201 and set(body) == {"id", "name", "service", "base_url", "token_hint", "created"}
    assert (body["name"], body["service"], body["base_url"], body["token_hint"]) == ("Z", "zenodo", base,
                                                                                      ZENODO_TOKEN[-4:])
    assert "SECRET" not in response.content.decode()
    assert RemoteAccount.objects.get(pk=body["id"]).token() == ZENODO_TOKEN
    listed = api.get(f"{ROOT}/connections/")
    assert [c["name"] for c in listed.json()] == ["Z"] and "SECRET" not in listed.content.decode()
    response = api.post(f"{ROOT}/connections/", {"name": "E", "service": "zenodo", "base_url": "https://evil.example.org",
                                                 "token": "x"})
    assert response.status_code == 400 and "base_url" in response.json()["errors"]
    response = api.post(f"{ROOT}/connections/", {"name": "W", "service": "zenodo", "base_url": base, "token": "wrong"})
    assert response.status_code == 400 and "refused the token (401" in response.json()["detail"]
    assert RemoteAccount.objects.count() == 1
    other = api_for(other_user)
    assert other.get(f"{ROOT}/connections/").json() == []
    assert other.delete(f"{ROOT}/connections/{body['id']}/").status_code == 404
    assert api.delete(f"{ROOT}/connections/{body['id']}/").status_code == 204
    assert not RemoteAccount.objects.exists()


def test_files_import_and_deposit(repo_server, user, other_user):
    base, repo = repo_server
    api = api_for(user)
    response = api.post(f"{ROOT}/files/", {"service": "zenodo", "base_url": base, "identifier": "101"})
    assert response.status_code == 200 and response.json() == [
        {"name": "adult-visits.csv", "size": len(remote_helpers.VISITS_CSV), "is_table": True},
        {"name": "readme.pdf", "size": 20, "is_table": False}]
    response = api.post(f"{ROOT}/import/", {"service": "zenodo", "base_url": base, "identifier": "102"})
    assert response.status_code == 400 and "choose one: a.csv, b.csv" in response.json()["detail"]
    response = api.post(f"{ROOT}/import/", {"service": "zenodo", "base_url": base, "identifier": "999"})
    assert response.status_code == 400 and "the record 999 was not found (404)" in response.json()["detail"]
    response = api.post(f"{ROOT}/import/", {"service": "zenodo", "base_url": base, "identifier": "101",
                                            "token": ZENODO_TOKEN})
    body = response.json()
    poll = f"/api/v1/sql/imports/{body['id']}/"
    assert response.status_code == 202 and response["Location"] == poll == body["poll"]
    assert (body["source"], body["status"], body["table"], body["record"], body["server"], body["total"],
            body["rows"], body["dataset"]) == ("zenodo", "queued", "adult-visits.csv", "101", base,
                                               len(remote_helpers.VISITS_CSV), 0, None)
    assert "token" not in body and "SECRET" not in response.content.decode()
    assert not [r for r in repo.requests if r["path"].endswith("/content")]  # the download is the worker's
    other = api_for(other_user)
    assert other.get(poll).status_code == 404 and other.post(f"{poll}cancel/").status_code == 404
    imp = source_imports.run(SourceImport.objects.get(pk=body["id"]))
    assert imp.password == ""  # the token typed for this import, erased when it ended
    body = api.get(poll).json()
    assert (body["status"], body["progress"], body["rows"], body["finished_import"]) == (
        "succeeded", 1.0, len(remote_helpers.VISITS_CSV), True)
    ds = Dataset.objects.get(owner=user, pk=body["dataset"])
    assert ds.n_rows == 6
    assert api.post(f"{poll}cancel/").status_code == 409
    set_roles(ds, {"name": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
                   "disease": Role.SENSITIVE})
    job = finished_job(ds, k=3)
    dv = api.post(f"{ROOT}/connections/", {"name": "DV", "service": "dataverse", "base_url": base,
                                           "token": DATAVERSE_TOKEN}).json()
    response = api.post(f"{ROOT}/deposit/{job.pk}/", {"account": dv["id"], "dataverse": "anonymized",
                                                      "title": "Visits", "description": "k=3",
                                                      "creators": ["Doe, Jane", "Roe, Rick"],
                                                      "contact_email": "jane@example.org", "format": "jsonl"})
    body = response.json()
    assert response.status_code == 202, body
    assert (body["kind"], body["status"], body["poll"]) == ("repository-deposit", "queued", f"/api/v1/runs/{body['id']}/")
    assert response["Location"] == body["poll"] and repo.drafts == {}  # the uploads are the worker's
    assert other.get(body["poll"]).status_code == 404
    jobs.run_job(Job.objects.get(pk=body["id"]))
    body = api.get(body["poll"]).json()["options"]["draft"]
    assert body["service"] == "dataverse" and body["files"] == ["adult-visits-datafly-k3-anonymized.jsonl"]
    assert body["url"] == f"{base}/dataset.xhtml?persistentId={body['identifier']}&version=DRAFT"
    draft = repo.drafts[body["identifier"]]
    assert draft["files"]["adult-visits-datafly-k3-anonymized.jsonl"] == exports.export_result(job.result, "jsonl")
    authors = draft["metadata"]["datasetVersion"]["metadataBlocks"]["citation"]["fields"][1]["value"]
    assert [a["authorName"]["value"] for a in authors] == ["Doe, Jane", "Roe, Rick"]
    response = api.post(f"{ROOT}/deposit/{job.pk}/", {"account": dv["id"], "title": "T", "description": "D",
                                                      "creators": ["X"]})
    assert response.status_code == 400 and set(response.json()["errors"]) == {"dataverse", "contact_email"}
    assert other.post(f"{ROOT}/deposit/{job.pk}/", {"account": dv["id"]}).status_code == 404
    assert len(repo.drafts) == 1 and Job.objects.filter(kind="repository-deposit").count() == 1


def test_an_import_answers_202_at_once_and_fails_in_its_job_when_the_server_stalls(stalling_server, user):
    api = api_for(user)
    response = api.post(f"{ROOT}/import/", {"service": "zenodo", "base_url": stalling_server, "identifier": "7"})
    body = response.json()
    assert response.status_code == 202 and (body["status"], body["total"], body["rows"]) == ("queued", 1000000, 0)
    source_imports.run(SourceImport.objects.get(pk=body["id"]))  # the worker's part
    body = api.get(body["poll"]).json()
    assert (body["status"], body["rows"], body["dataset"]) == ("failed", 0, None)
    assert body["message"].endswith("sent nothing more of 'slow.csv' for 1 s (after 65,536 bytes): the download "
                                    "was stopped")
    assert not Dataset.objects.exists()


def test_cancel_a_running_import_through_the_api(repo_server, user, other_user, monkeypatch):
    base, _ = repo_server
    api = api_for(user)
    body = api.post(f"{ROOT}/import/", {"service": "zenodo", "base_url": base, "identifier": "104"}).json()
    checked = source_imports._cancelled

    def cancel_at_one_mib(pk) -> bool:
        if not SourceImport.objects.get(pk=pk).cancel_requested:
            assert api_for(other_user).post(f"{body['poll']}cancel/").status_code == 404
            answer = api.post(f"{body['poll']}cancel/")
            assert answer.status_code == 200 and answer.json()["cancel_requested"] is True
            assert answer.json()["status"] == "running"  # asked; the worker stops at its next MiB
        return checked(pk)

    monkeypatch.setattr(source_imports, "_cancelled", cancel_at_one_mib)
    source_imports.run(SourceImport.objects.get(pk=body["id"]))
    body = api.get(body["poll"]).json()
    assert (body["status"], body["rows"], body["message"]) == (
        "cancelled", 1 << 20, "cancelled by the user; nothing was stored")
    assert not Dataset.objects.exists()


def test_the_hard_limit_names_the_repository_setting_and_a_deleted_connection_takes_its_imports(
        repo_server, user, settings):
    base, _ = repo_server
    settings.ANONYMIZER_JOB_TIME_LIMITS = {"repository-import": 30}
    settings.ANONYMIZER_JOB_TIME_LIMIT_GRACE_SECONDS = 10
    api = api_for(user)
    account = api.post(f"{ROOT}/connections/", {"name": "Z", "service": "zenodo", "base_url": base,
                                                "token": ZENODO_TOKEN}).json()
    body = api.post(f"{ROOT}/import/", {"account": account["id"], "identifier": "101"}).json()
    imp = SourceImport.objects.get(pk=body["id"])
    assert (imp.account_id, imp.password, imp.server) == (account["id"], "", base)
    assert source_imports.stop_for_time_limit(imp.pk, hard=True)  # tasks.SourceImportRequest.on_timeout
    imp.refresh_from_db()
    assert (imp.status, imp.message) == ("failed", "stopped after 40 s: the time limit for repository-import jobs "
                                                   "(setting ANONYMIZER_JOB_TIME_LIMIT_REPOSITORY_IMPORT_SECONDS); "
                                                   "nothing was stored")
    assert api.delete(f"{ROOT}/connections/{account['id']}/").status_code == 204
    assert not SourceImport.objects.exists()
