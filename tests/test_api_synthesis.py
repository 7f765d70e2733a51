"""API synthetic data: POST /api/v1/synthesis/datasets/<id>/ queues a synthesis job (the form's validation and the
dataset's ε ledger: a DP method past the budget is a 400 with the ledger's message, nothing created), GET
/api/v1/synthesis/<job>/ gives the stored report and the catalogue's figures, .../download/ the rows with
formulas neutralized; another user's dataset and job are 404s."""

from __future__ import annotations

import pytest
from api_helpers import api_for, eager_celery, set_roles, upload  # noqa: F401

from anonymizer_app.models import Job, PrivacyBudget, PrivacyLedgerEntry

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset_id(user, eager_celery):  # noqa: F811
    api = api_for(user)
    ds = upload(api).json()
    set_roles(api, ds["id"])
    return api, ds["id"]


def test_a_synthesis_its_figures_and_download(dataset_id):
    api, ds = dataset_id
    r = api.post(f"/api/v1/synthesis/datasets/{ds}/", {"method": "cart", "columns": ["disease", "note"], "seed": 2,
                                                       "holdout": 0})
    assert r.status_code == 201, r.content
    job = Job.objects.get(pk=r.json()["id"])
    assert job.kind == Job.SYNTHESIS and job.status == Job.SUCCEEDED, job.message
    body = api.get(f"/api/v1/synthesis/{job.pk}/").json()
    assert body["synthesis"] == job.result.report["synthesis"]
    assert body["synthesis"]["guarantee"].startswith("No formal privacy guarantee")
    assert [f["key"] for f in body["figures"]][:2] == ["tvd_1way_mean", "tvd_1way_max"]
    csv = api.get(f"/api/v1/synthesis/{job.pk}/download/?format=csv").content.decode()
    assert csv.splitlines()[0] == "disease,note" and "\n=1+1" not in csv and ",=1+1" not in csv
    assert not PrivacyLedgerEntry.objects.exists()


def test_a_dp_synthesis_past_the_budget_is_refused(dataset_id):
    api, ds = dataset_id
    PrivacyBudget.objects.create(dataset_id=ds, epsilon=0.5)
    r = api.post(f"/api/v1/synthesis/datasets/{ds}/", {"method": "mst", "epsilon": 0.6, "columns": ["disease"]})
    assert r.status_code == 400
    assert "refused: this release would spend ε = 0.6, but the dataset's privacy budget is ε = 0.5" in r.content.decode()
    assert not Job.objects.filter(kind=Job.SYNTHESIS).exists() and not PrivacyLedgerEntry.objects.exists()


def test_bad_values_are_400s_naming_them(dataset_id):
    api, ds = dataset_id
    r = api.post(f"/api/v1/synthesis/datasets/{ds}/", {"method": "cart", "columns": ["nope"]})
    assert r.status_code == 400 and "columns: 'nope' is not a column that can be synthesized" in r.content.decode()
    assert api.post(f"/api/v1/synthesis/datasets/{ds}/", {"method": "nope"}).status_code == 400


def test_another_users_dataset_and_job_are_404(dataset_id, other_user):
    api, ds = dataset_id
    job_id = api.post(f"/api/v1/synthesis/datasets/{ds}/", {"method": "cart", "columns": ["disease"]}).json()["id"]
    other = api_for(other_user)
    assert other.post(f"/api/v1/synthesis/datasets/{ds}/", {"method": "cart"}).status_code == 404
    assert other.get(f"/api/v1/synthesis/{job_id}/").status_code == 404
    assert other.get(f"/api/v1/synthesis/{job_id}/download/").status_code == 404
