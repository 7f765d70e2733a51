"""API comparisons: algorithms x values of k as one job through the compare page's form and service, its
table in the job's report; bad input named; owner only (404), no key and revoked keys 401."""

from __future__ import annotations

import api_helpers
import pytest
from api_helpers import api_for, eager_celery, revoked_api  # noqa: F401

from anonymizer_app.models import Job

dataset = api_helpers.dataset  # the fixture
pytestmark = pytest.mark.django_db


def test_compare_and_read_the_table(user, dataset, eager_celery):  # noqa: F811
    api = api_for(user)
    r = api.post("/api/v1/comparisons/", {"dataset": dataset["id"], "algorithms": ["datafly", "flash"],
                                          "k_values": [2, 3], "sensitive": "disease"})
    assert r.status_code == 201, r.content
    job = r.json()
    assert (job["kind"], job["status"]) == ("comparison", "succeeded")
    rows = api.get(f"/api/v1/runs/{job['id']}/report/").json()["comparison"]
    assert sorted((row["algorithm"], row["k"]) for row in rows) == [("datafly", 2), ("datafly", 3), ("flash", 2),
                                                                     ("flash", 3)]
    # a comparison publishes no table
    assert api.get(f"/api/v1/runs/{job['id']}/rows/").status_code == 404


def test_bad_input_is_named(user, dataset):
    api = api_for(user)
    r = api.post("/api/v1/comparisons/", {"dataset": dataset["id"], "algorithms": ["magic"], "k_values": [2]})
    assert r.status_code == 400 and r.json()["detail"].startswith("algorithms: ")
    r = api.post("/api/v1/comparisons/", {"dataset": dataset["id"], "algorithms": ["flash"], "k_values": [0]})
    assert r.status_code == 400 and "k_values" in r.json()["detail"]
    assert not Job.objects.exists()


def test_owner_only_and_keys(user, other_user, dataset):
    body = {"dataset": dataset["id"], "algorithms": ["flash"], "k_values": [2]}
    assert api_for(other_user).post("/api/v1/comparisons/", body).status_code == 404
    assert api_for(None).post("/api/v1/comparisons/", body).status_code == 401
    assert revoked_api(user).post("/api/v1/comparisons/", body).status_code == 401
    assert not Job.objects.exists()
