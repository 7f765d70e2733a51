"""The policies endpoints of the HTTP API: owner / other user (404) / no credentials, each endpoint; create from a
job, import (file and Amnesia's rules) with the strict messages, export byte-equal to the web export, check, apply
(stop answers 409 with the report, extend runs), delete."""

from __future__ import annotations

import json

import pytest
from anonymizer_helpers import SMALL_CSV, make_dataset, run_jobs_synchronously
from policies_helpers import small_job
from rest_framework.test import APIClient

from anonymizer_app.models import Job
from policies import services
from policies.models import Policy, Release

pytestmark = pytest.mark.django_db
NEW_SEX = SMALL_CSV.replace("Gus,71,30001,M", "Gus,71,30001,X")


def api_for(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


@pytest.fixture
def version(user):
    return services.save_from_job(small_job(user), "small", "monthly")


def test_list_and_detail(user, other_user, version):
    services.save_from_job(small_job(other_user), "theirs")
    r = api_for(user).get("/api/v1/policies/")
    assert r.status_code == 200
    assert [(p["name"], p["description"], p["versions"], p["releases"]) for p in r.json()] == \
        [("small", "monthly", [1], 0)]
    d = api_for(user).get(f"/api/v1/policies/{version.policy.pk}/").json()
    assert [v["number"] for v in d["versions"]] == [1]
    assert d["versions"][0]["config"]["algorithm"] == "datafly"
    assert d["versions"][0]["source_job"] == str(version.source_job_id)
    assert api_for(other_user).get(f"/api/v1/policies/{version.policy.pk}/").status_code == 404
    assert api_for(None).get("/api/v1/policies/").status_code == 401
    assert api_for(None).get(f"/api/v1/policies/{version.policy.pk}/").status_code == 401


def test_create_from_a_job(user, other_user):
    job = small_job(user)
    r = api_for(user).post("/api/v1/policies/", {"job": str(job.pk), "name": "api"}, format="json")
    assert r.status_code == 201, r.content
    assert (r.json()["number"], r.json()["config"]["name"]) == (1, "api")
    r = api_for(user).post("/api/v1/policies/", {"job": str(job.pk), "name": "api"}, format="json")
    assert r.json()["number"] == 2
    assert api_for(other_user).post("/api/v1/policies/", {"job": str(job.pk), "name": "x"}, format="json").status_code \
        == 404
    assert api_for(None).post("/api/v1/policies/", {"job": str(job.pk), "name": "x"}, format="json").status_code \
        == 401
    assert api_for(user).post("/api/v1/policies/", {"name": "x"}, format="json").status_code == 400
    assert not Policy.objects.filter(name="x").exists()


def test_import_strictly(user, version):
    exported = json.loads(services.export_text(version))
    r = api_for(user).post("/api/v1/policies/import/", {"policy": exported, "name": "copy"}, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["config"] == dict(version.config, name="copy")
    bad = dict(exported, k=0)
    r = api_for(user).post("/api/v1/policies/import/", {"policy": bad}, format="json")
    assert (r.status_code, r.json()) == (400, {"detail": "policy: k: expected a whole number of at least 1, got 0"})
    r = api_for(user).post("/api/v1/policies/import/", {"rules": "Anonymization rules:\nsex\nF->*\nM->*\n", "k": 2,
                                                     "name": "amnesia"}, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["config"]["options"] == {"levels": "1"}
    r = api_for(user).post("/api/v1/policies/import/", {}, format="json")
    assert r.status_code == 400
    assert api_for(None).post("/api/v1/policies/import/", {"policy": exported}, format="json").status_code == 401


def test_export_is_the_web_export(client_alice, user, other_user, version):
    r = api_for(user).get(f"/api/v1/policies/{version.policy.pk}/export/")
    assert r.status_code == 200
    assert r.content == client_alice.get(f"/policies/{version.policy.pk}/versions/1/export/").content
    assert api_for(user).get(f"/api/v1/policies/{version.policy.pk}/export/", {"version": 1}).content == r.content
    assert api_for(user).get(f"/api/v1/policies/{version.policy.pk}/export/", {"version": 9}).status_code == 404
    assert api_for(user).get(f"/api/v1/policies/{version.policy.pk}/export/", {"version": "x"}).status_code == 404
    assert api_for(other_user).get(f"/api/v1/policies/{version.policy.pk}/export/").status_code == 404
    assert api_for(None).get(f"/api/v1/policies/{version.policy.pk}/export/").status_code == 401


def test_check_and_apply(user, other_user, version, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user, NEW_SEX, name="batch", roles={})
    url = f"/api/v1/policies/{version.policy.pk}"
    r = api_for(user).post(f"{url}/check/", {"dataset": ds.pk}, format="json")
    assert r.status_code == 200
    assert r.json()["new_values"] == [{"column": "sex", "total": 1, "values": [{"value": "X", "count": 1}]}]
    assert (r.json()["blocking"], r.json()["clean"]) == ([], False)
    r = api_for(user).post(f"{url}/apply/", {"dataset": ds.pk}, format="json")
    assert r.status_code == 409
    assert r.json()["detail"].startswith("stopped: column 'sex': 1 value(s) in 1 record(s)")
    assert r.json()["report"]["new_values"][0]["column"] == "sex"
    assert not Job.objects.filter(dataset=ds).exists()
    r = api_for(user).post(f"{url}/apply/", {"dataset": ds.pk, "on_new_values": "extend"}, format="json")
    assert r.status_code == 202, r.content
    job = Job.objects.get(pk=r.json()["job"])
    assert job.status == Job.SUCCEEDED, job.message
    assert list(Release.objects.values_list("number", "job_id")) == [(1, job.pk)]
    # another account: its dataset with this policy, or this dataset: 404; no credentials: refused
    theirs = make_dataset(other_user)
    assert api_for(other_user).post(f"{url}/apply/", {"dataset": theirs.pk}, format="json").status_code == 404
    assert api_for(other_user).post(f"{url}/check/", {"dataset": theirs.pk}, format="json").status_code == 404
    mine = services.save_from_job(small_job(other_user), "theirs").policy
    assert api_for(other_user).post(f"/api/v1/policies/{mine.pk}/apply/", {"dataset": ds.pk},
                                    format="json").status_code == 404
    assert api_for(None).post(f"{url}/apply/", {"dataset": ds.pk}, format="json").status_code == 401
    assert api_for(user).post(f"{url}/apply/", {"dataset": ds.pk, "on_new_values": "maybe"},
                              format="json").status_code == 400


def test_a_missing_column_answers_409_with_the_report(user, version):
    text = "\n".join(",".join(line.split(",")[:5]) for line in SMALL_CSV.splitlines()) + "\n"
    ds = make_dataset(user, text, name="batch", roles={})
    r = api_for(user).post(f"/api/v1/policies/{version.policy.pk}/apply/", {"dataset": ds.pk}, format="json")
    assert r.status_code == 409
    assert r.json()["report"]["missing"] == ["disease"]
    assert r.json()["report"]["blocking"] == ["column 'disease' is missing"]


def test_delete(user, other_user, version):
    url = f"/api/v1/policies/{version.policy.pk}/"
    assert api_for(other_user).delete(url).status_code == 404
    assert api_for(None).delete(url).status_code == 401
    assert api_for(user).delete(url).status_code == 204
    assert not Policy.objects.exists()


def test_an_api_key_of_the_account_page_is_enough(user, other_user, version):
    from accounts.models import ApiToken

    _, key = ApiToken.issue(user, "ci")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert [p["name"] for p in client.get("/api/v1/policies/").json()] == ["small"]
    _, theirs = ApiToken.issue(other_user, "theirs")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {theirs}")
    assert client.get("/api/v1/policies/").json() == []
    assert client.get(f"/api/v1/policies/{version.policy.pk}/").status_code == 404
