"""API risk analysis: a dataset's figures (the risk page's form and service: prosecutor risk counted by hand
on the small table), a result's before/after; bad input named; owner only (404), no key 401."""

from __future__ import annotations

import pytest
from api_helpers import api_for, eager_celery, revoked_api, set_roles, upload  # noqa: F401

pytestmark = pytest.mark.django_db


def test_dataset_risk_by_hand(user):
    api = api_for(user)
    ds = upload(api).json()
    set_roles(api, ds["id"])
    r = api.post(f"/api/v1/datasets/{ds['id']}/risk/", {"qi": ["zip"]})
    assert r.status_code == 200, r.content
    report = r.json()
    # zip alone: 4 classes of 2 records each, so every record's prosecutor risk is 1/2
    assert (report["equivalence_classes"], report["min_class_size"], report["sample_uniques"]) == (4, 2, 0)
    assert report["prosecutor_risk_highest"] == pytest.approx(0.5)
    assert report["prosecutor_risk_average"] == pytest.approx(0.5)
    both = api.post(f"/api/v1/datasets/{ds['id']}/risk/", {}).json()  # default: the marked QIs (zip, age)
    assert (both["sample_uniques"], both["prosecutor_risk_highest"]) == (8, 1.0)  # every (zip, age) is unique
    bad = api.post(f"/api/v1/datasets/{ds['id']}/risk/", {"qi": ["nope"]})
    assert bad.status_code == 400 and bad.json()["detail"].startswith("qi: ")
    bad = api.post(f"/api/v1/datasets/{ds['id']}/risk/", {"qi": ["zip"], "population": "fraction"})
    assert bad.status_code == 400 and "sampling_fraction" in bad.json()["detail"]


def test_result_risk_before_and_after(user, eager_celery):  # noqa: F811
    api = api_for(user)
    ds = upload(api).json()
    set_roles(api, ds["id"])
    job = api.post("/api/v1/runs/", {"dataset": ds["id"], "algorithm": "flash", "k": 2,
                                     "suppression_percent": 0}).json()
    r = api.post(f"/api/v1/runs/{job['id']}/risk/", {})
    assert r.status_code == 200, r.content
    figures = r.json()
    assert figures["quasi_identifiers"] == ["zip", "age"]
    assert figures["before"]["prosecutor_risk_highest"] == pytest.approx(1.0)
    assert figures["after"]["prosecutor_risk_highest"] <= 0.5  # k=2 reached
    assert figures["after"]["min_class_size"] >= 2


def test_owner_only_and_keys(user, other_user):
    ds = upload(api_for(user)).json()
    url = f"/api/v1/datasets/{ds['id']}/risk/"
    assert api_for(other_user).post(url, {"qi": ["zip"]}).status_code == 404
    assert api_for(None).post(url, {"qi": ["zip"]}).status_code == 401
    assert revoked_api(user).post(url, {"qi": ["zip"]}).status_code == 401
