"""API models trained on the release: POST /api/v1/runs/<id>/utility/ queues a model-utility job of the run (the
form's validation and messages), GET /api/v1/runs/<job>/utility/ gives its figures, equal to the stored report;
a bad value is a 400 naming it; another user's run and job are 404s."""

from __future__ import annotations

import pytest
from api_helpers import api_for, eager_celery, set_roles, upload  # noqa: F401

from anonymizer_app.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(user, eager_celery):  # noqa: F811
    api = api_for(user)
    ds = upload(api).json()
    set_roles(api, ds["id"])
    job = api.post("/api/v1/runs/", {"dataset": ds["id"], "algorithm": "mondrian", "k": 2,
                                     "suppression_percent": 0}).json()
    return api, job["id"]


def test_a_job_and_its_figures(run):
    api, run_id = run
    r = api.post(f"/api/v1/runs/{run_id}/utility/", {"target": "disease", "models": ["logistic"], "seed": 2})
    assert r.status_code == 201, r.content
    job_id = r.json()["id"]
    job = Job.objects.get(pk=job_id)
    assert job.kind == Job.MODEL_UTILITY and job.status == Job.SUCCEEDED, job.message
    body = api.get(f"/api/v1/runs/{job_id}/utility/").json()
    assert body["figures"] == job.result.report["model_utility"]
    assert body["figures"]["spec"]["features"] == ["zip", "age", "note"]
    assert {r["trained_on"] for r in body["figures"]["rows"]} == {"original", "release", "baseline"}


@pytest.mark.parametrize("data,message", [
    ({"target": "zip"}, "target: 'zip' is a quasi-identifier"),
    ({"target": "nope"}, "target: 'nope' is not a published column of this run"),
    ({"target": "disease", "test_share": 0.99}, "test share: must be from 0.05 to 0.9"),
])
def test_bad_values_are_400s_naming_them(run, data, message):
    api, run_id = run
    r = api.post(f"/api/v1/runs/{run_id}/utility/", data)
    assert r.status_code == 400
    assert message in str(r.json())


def test_another_users_run_is_404(run, other_user):
    api, run_id = run
    job_id = api.post(f"/api/v1/runs/{run_id}/utility/", {"target": "disease", "models": ["logistic"]}).json()["id"]
    other = api_for(other_user)
    assert other.post(f"/api/v1/runs/{run_id}/utility/", {"target": "disease"}).status_code == 404
    assert other.get(f"/api/v1/runs/{job_id}/utility/").status_code == 404
    assert api.get(f"/api/v1/runs/{run_id}/utility/").status_code == 404  # a run is not a utility job
