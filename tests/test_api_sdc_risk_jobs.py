"""SUDA2 on a worker in the API (issue 31): POST /api/v1/sdc-risk/datasets/<id>/ and /sdc-risk/runs/<job>/ queue a
job of kind "sdc-risk" (run synchronously here), GET /sdc-risk/<job>/ gives its stored figures, which equal a
brute-force enumeration of the minimal sample uniques (test_sdc_risk_jobs.brute_force_suda); the risk endpoint's
"sdc" answer above the in-request limit offers the job, then shows its figures; a bad key is a 400 naming it; a
queued job is cancelled as any run; another user's dataset, run and job are 404s."""

from __future__ import annotations

import pytest
from anonymizer_helpers import finished_job, make_dataset, queue_without_running, run_jobs_synchronously
from api_helpers import api_for
from test_sdc_risk_jobs import KEYS, ROLES, TABLE, brute_force_suda, table_rows

from anonymizer_app.models import Job, Result
from anonymizer_app.services import sdc_risk

pytestmark = pytest.mark.django_db


@pytest.fixture
def table(user, monkeypatch):
    monkeypatch.setattr(sdc_risk, "WEB_SUDA_ROWS", 5)
    return make_dataset(user, TABLE, "suda.csv", roles=ROLES)


def test_a_dataset_job_and_its_figures(user, table, monkeypatch):
    api = api_for(user)
    risk = {"qi": KEYS, "sdc": True}
    before = api.post(f"/api/v1/datasets/{table.pk}/risk/", risk).json()["sdc"]
    assert before["suda2"]["worker"] is True and "above 5 records (10 here)" in before["suda2"]["unavailable"]
    assert before["suda_worker"]["offer"] is True and before["suda_worker"]["stored"] is None

    submitted = run_jobs_synchronously(monkeypatch)
    r = api.post(f"/api/v1/sdc-risk/datasets/{table.pk}/", {"qi": KEYS})
    assert r.status_code == 201, r.content
    job = Job.objects.get(pk=r.json()["id"])
    assert submitted == [job.pk] and job.kind == Job.SDC_RISK and job.status == Job.SUCCEEDED, job.message

    body = api.get(f"/api/v1/sdc-risk/{job.pk}/").json()
    assert body["figures"] == Result.objects.get(job=job).report["sdc_risk"]["figures"]
    assert body["target"] == "dataset" and body["key_variables"] == KEYS and body["stale"] is False
    scores, contributions, msus = brute_force_suda(table_rows(), 4)
    suda = body["figures"]["suda2"]
    assert suda["msus"] == msus and suda["score_highest"] == max(scores)
    assert suda["records_with_msu"] == sum(1 for s in scores if s > 0)
    assert {c["variable"]: c["contribution"] for c in suda["attribute_contributions"]} == pytest.approx(
        {k: 100 * sum(c[j] for c in contributions) / sum(scores) for j, k in enumerate(KEYS)}, rel=1e-12)

    after = api.post(f"/api/v1/datasets/{table.pk}/risk/", risk).json()["sdc"]
    assert after["suda2"] == suda and after["suda_worker"]["stored"]["id"] == str(job.pk)
    assert {f["key"] for f in after["figures"]} >= {"suda_msus", "dis_suda_mean"}


def test_a_runs_job_before_and_after(user, table, monkeypatch):
    api = api_for(user)
    run = finished_job(table, k=2)
    run_jobs_synchronously(monkeypatch)
    r = api.post(f"/api/v1/sdc-risk/runs/{run.pk}/", {})
    assert r.status_code == 201, r.content
    body = api.get(f"/api/v1/sdc-risk/{r.json()['id']}/").json()
    assert body["target"] == "result" and body["source_job"] == str(run.pk)
    _, _, msus = brute_force_suda(table_rows(), 4)
    assert body["figures"]["before"]["suda2"]["msus"] == msus and "suda2" in body["figures"]["after"]
    answer = api.post(f"/api/v1/runs/{run.pk}/risk/", {"sdc": True}).json()["sdc"]
    assert answer["before"]["suda2"]["msus"] == msus and answer["suda_worker"]["stored"]["id"] == r.json()["id"]


@pytest.mark.parametrize("data,message", [
    ({"qi": ["A", "nope"]}, "qi: 'nope' is not a column of this dataset"),
    ({"qi": KEYS, "sdc_max_global_risk": 2}, "sdc_max_global_risk"),
])
def test_a_bad_value_is_a_400_naming_it(user, table, data, message):
    r = api_for(user).post(f"/api/v1/sdc-risk/datasets/{table.pk}/", data)
    assert r.status_code == 400 and message in r.content.decode()
    assert not Job.objects.filter(kind=Job.SDC_RISK).exists()


def test_a_queued_job_is_cancelled(user, table, monkeypatch):
    queue_without_running(monkeypatch)
    api = api_for(user)
    job_id = api.post(f"/api/v1/sdc-risk/datasets/{table.pk}/", {"qi": KEYS}).json()["id"]
    assert api.post(f"/api/v1/runs/{job_id}/cancel/").status_code in (200, 202)
    assert Job.objects.get(pk=job_id).status == Job.CANCELLED
    assert api.get(f"/api/v1/sdc-risk/{job_id}/").json()["figures"] is None


def test_another_users_dataset_run_and_job_are_404(user, other_user, table, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    run = finished_job(table, k=2)
    job_id = api_for(user).post(f"/api/v1/sdc-risk/datasets/{table.pk}/", {"qi": KEYS}).json()["id"]
    other = api_for(other_user)
    assert other.post(f"/api/v1/sdc-risk/datasets/{table.pk}/", {"qi": KEYS}).status_code == 404
    assert other.post(f"/api/v1/sdc-risk/runs/{run.pk}/", {}).status_code == 404
    assert other.get(f"/api/v1/sdc-risk/{job_id}/").status_code == 404
    assert Job.objects.filter(kind=Job.SDC_RISK).count() == 1
