"""API statistics before and after: GET /api/v1/runs/<id>/statistics/ gives the statistics page's figures (the
same cached figures), with ?a=&b= a pair's contingency tables and association (Cramér's V recomputed with
scipy); a bad column is a 400 naming it; another user's run is a 404, no key a 401."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from api_helpers import SMALL_CSV, api_for, eager_celery, set_roles, upload  # noqa: F401
from scipy.stats.contingency import association

from anonymizer_app.models import Job
from anonymizer_app.services import statistics

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(user, eager_celery):  # noqa: F811
    api = api_for(user)
    ds = upload(api).json()
    set_roles(api, ds["id"])
    job = api.post("/api/v1/runs/", {"dataset": ds["id"], "algorithm": "mondrian", "k": 2,
                                     "suppression_percent": 0}).json()
    return api, job["id"]


def test_the_pages_statistics_as_json(run):
    api, job_id = run
    r = api.get(f"/api/v1/runs/{job_id}/statistics/")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["pair"] is None
    assert body["statistics"] == statistics.result_statistics(Job.objects.get(pk=job_id).result)
    columns = {c["column"]: c for c in body["statistics"]["columns"]}
    ages = pd.read_csv(io.BytesIO(SMALL_CSV))["age"]
    assert columns["age"]["kind"] == "numeric"
    assert columns["age"]["before"]["numbers"]["mean"] == pytest.approx(ages.mean())
    assert columns["age"]["before"]["numbers"]["p75"] == pytest.approx(ages.quantile(0.75))


def test_a_pair(run):
    api, job_id = run
    pair = api.get(f"/api/v1/runs/{job_id}/statistics/", {"a": "zip", "b": "disease"}).json()["pair"]
    table = pd.read_csv(io.BytesIO(SMALL_CSV), dtype=str)
    expected = association(pd.crosstab(table["zip"], table["disease"]).to_numpy(), method="cramer",
                           correction=False)
    assert pair["before"]["cramers_v"] == pytest.approx(expected)
    assert pair["columns"] == ["zip", "disease"] and pair["before"]["records"] == 8


def test_bad_column_other_user_and_no_key(run, other_user):
    api, job_id = run
    bad = api.get(f"/api/v1/runs/{job_id}/statistics/", {"a": "nope", "b": "age"})
    assert bad.status_code == 400 and "no column 'nope'" in bad.json()["detail"]
    assert api_for(other_user).get(f"/api/v1/runs/{job_id}/statistics/").status_code == 404
    assert api_for(None).get(f"/api/v1/runs/{job_id}/statistics/").status_code == 401
