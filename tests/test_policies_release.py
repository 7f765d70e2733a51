"""Done-when of issue 15 (release policies): Adult split in two halves, a run on half 1 from the web app, saved as
a policy, and the policy applied to half 2 from the web app, the CLI and the API gives byte-identical published
tables (the web and API results through the result page's CSV download, the CLI's OUT)."""

from __future__ import annotations

import json

import pytest
from anonymizer_helpers import run_jobs_synchronously
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from policies_helpers import adult_dataset, adult_halves, adult_job
from rest_framework.test import APIClient

from anonymizer_app.models import Job
from policies.models import Policy, Release

pytestmark = pytest.mark.django_db


@pytest.fixture
def saved(client_alice, user, demo_datasets):
    """Half 1 run, saved as the policy 'adult quarterly' from the result page's form; half 2 uploaded bare."""
    half1, half2 = adult_halves(demo_datasets)
    job = adult_job(adult_dataset(user, half1, demo_datasets, "adult-half-1"))
    assert job.status == Job.SUCCEEDED, job.message
    r = client_alice.post(f"/policies/save/{job.pk}/", {"name": "adult quarterly", "description": "every quarter"})
    assert r.status_code == 302
    policy = Policy.objects.get(owner=user, name="adult quarterly")
    second = adult_dataset(user, half2, demo_datasets, "adult-half-2", configure=False)
    return policy, job, second


def _web_apply(client, monkeypatch, policy, dataset) -> tuple[bytes, Job]:
    run_jobs_synchronously(monkeypatch)
    version = policy.versions.get(number=1)
    check = client.get(f"/policies/apply/{dataset.pk}/", {"version": version.pk})
    assert check.status_code == 200
    assert b'id="schema-clean"' in check.content
    r = client.post(f"/policies/apply/{dataset.pk}/", {"version": version.pk})
    assert r.status_code == 302
    job = Job.objects.get(pk=r["Location"].rstrip("/").split("/")[-1])
    assert job.status == Job.SUCCEEDED, job.message
    return _download(client, job), job


def _download(client, job) -> bytes:
    """The result page's CSV download (the dataset's delimiter)."""
    download = client.get(f"/jobs/{job.pk}/result/anonymized.csv")
    assert download.status_code == 200
    return b"".join(download.streaming_content) if download.streaming else download.content


def test_half_2_by_the_saved_policy_web_cli_and_api_give_identical_tables(client_alice, user, monkeypatch, saved,
                                                                         tmp_path, demo_datasets):
    policy, first_job, second = saved
    exported = client_alice.get(f"/policies/{policy.pk}/versions/1/export/")
    assert exported.status_code == 200
    policy_path = tmp_path / "adult.policy.json"
    policy_path.write_bytes(exported.content)
    stored = json.loads(exported.content)
    assert (stored["algorithm"], stored["k"], stored["suppression_limit"]) == ("flash", 5, 0.04)
    assert stored["models"] == [{"model": "distinct-l-diversity", "l": 2, "column": "occupation"}]
    assert [c["name"] for c in stored["columns"] if c["role"] == "quasi-identifying"] == \
        ["sex", "age", "race", "marital-status", "education"]

    web, job = _web_apply(client_alice, monkeypatch, policy, second)
    # the dataset took the policy's roles and a copy of each hierarchy, and the release is recorded
    assert {c.name: c.role for c in second.columns.all()} == {c["name"]: c["role"] for c in stored["columns"]}
    release = Release.objects.get(policy=policy)
    assert (release.number, release.job_id, release.version.number) == (1, job.pk, 1)
    assert (job.algorithm, job.k, job.suppression_limit, job.models) == \
        (first_job.algorithm, first_job.k, first_job.suppression_limit, first_job.models)

    half2_csv = tmp_path / "half2.csv"
    half2_csv.write_bytes(adult_halves_bytes(second))
    out = tmp_path / "cli.csv"
    call_command("anonymize", str(half2_csv), "--policy", str(policy_path), "--out", str(out), "--quiet")
    cli = out.read_bytes()
    assert cli == web

    # the API alone: the same half uploaded again, the policy applied by its endpoint (release 2), the result
    # downloaded by the runs endpoint
    api = APIClient()
    api.force_authenticate(user)
    upload = SimpleUploadedFile("adult-half-2.csv", adult_halves_bytes(second), content_type="text/csv")
    r = api.post("/api/v1/datasets/", {"file": upload, "name": "adult-half-2-api"}, format="multipart")
    assert r.status_code == 201, r.content
    r = api.post(f"/api/v1/policies/{policy.pk}/apply/", {"dataset": r.json()["id"]}, format="json")
    assert r.status_code == 202, r.content
    assert (r.json()["release"], r.json()["version"], r.json()["report"]["clean"]) == (2, 1, True)
    api_job = Job.objects.get(pk=r.json()["job"])
    assert api_job.status == Job.SUCCEEDED, api_job.message
    download = api.get(f"/api/v1/runs/{api_job.pk}/download/")
    assert download.status_code == 200
    assert (b"".join(download.streaming_content) if download.streaming else download.content) == web
    # a real anonymization: 15,081 rows in, every published class of at least 5 with 2 occupations
    assert web.count(b"\n") - 1 == job.result.report["records"]
    assert job.result.report["k_achieved"] >= 5
    assert job.result.report["input_records"] == 15081


def adult_halves_bytes(dataset) -> bytes:
    from anonymizer_app.services import storage

    return storage.original_path(dataset).read_bytes()
