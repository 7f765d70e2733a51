"""API runs: submit (the run form's validation and pre-flight checks), check, poll, cancel, delete; the job
runs through the one pipeline (eager Celery) and publishes the same rows as a run created by the services
the web run page calls; owner only (404), no key and revoked keys 401."""

from __future__ import annotations

from collections import Counter

import api_helpers
import pytest
from api_helpers import api_for, eager_celery, revoked_api  # noqa: F401

from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import jobs, results

dataset = api_helpers.dataset  # the fixture
pytestmark = pytest.mark.django_db

RUN = {"algorithm": "flash", "k": 2, "suppression_percent": 0, "sensitive": "disease"}


def test_submit_poll_and_same_rows_as_the_web_path(user, dataset, eager_celery):  # noqa: F811
    api = api_for(user)
    r = api.post("/api/v1/runs/", {"dataset": dataset["id"], **RUN})
    assert r.status_code == 201, r.content
    job = r.json()
    assert (job["algorithm"], job["k"], job["suppression_limit"], job["kind"]) == ("flash", 2, 0.0, "run")
    polled = api.get(f"/api/v1/runs/{job['id']}/").json()
    assert (polled["status"], polled["progress"], polled["finished_job"], polled["has_result"]) == \
        ("succeeded", 1.0, True, True)
    api_rows, api_suppressed = results.load_output(Job.objects.get(pk=job["id"]).result)
    # the same run made by the services the web run page calls
    web = jobs.run_job(jobs.create_job(Dataset.objects.get(pk=dataset["id"]), "flash", 2, 0.0, "disease"))
    web_rows, web_suppressed = results.load_output(web.result)
    assert api_rows.equals(web_rows) and (api_suppressed == web_suppressed).all()
    # independently: every published (zip, age) combination is shared by at least 2 records
    sizes = Counter(zip(api_rows["zip"][~api_suppressed], api_rows["age"][~api_suppressed]))
    assert min(sizes.values()) >= 2
    listed = api.get("/api/v1/runs/", {"dataset": dataset["id"]}).json()
    assert [j["id"] for j in listed["results"]] == [str(web.pk), job["id"]] and listed["count"] == 2


def test_refusals_name_the_field(user, dataset):
    api = api_for(user)
    r = api.post("/api/v1/runs/", {"dataset": dataset["id"], **RUN, "algorithm": "magic"})
    assert r.status_code == 400
    assert r.json()["problems"] == [{"field": "algorithm",
                                     "message": "Select a valid choice. magic is not one of the available choices."}]
    r = api.post("/api/v1/runs/", {"dataset": dataset["id"], **RUN, "k": 9})
    assert r.status_code == 400 and "k" in r.json()["detail"] and "8" in r.json()["detail"]
    r = api.post("/api/v1/runs/", {"dataset": dataset["id"], **RUN, "suppression_percent": 150})
    assert r.status_code == 400
    assert r.json()["problems"] == [{"field": "suppression_percent",
                                     "message": "The suppression limit is a percentage between 0 and 100."}]
    r = api.post("/api/v1/runs/", {"dataset": dataset["id"], **RUN,
                                   "fields": {"model:l:enabled": True, "model:l:variant": "distinct", "model:l:l": 5,
                                              "model:l:column": "disease"}})
    assert r.status_code == 400 and "disease" in r.json()["detail"], r.json()
    r = api.post("/api/v1/runs/", {"dataset": dataset["id"], **RUN, "fields": {"model:l-diversity:enabled": True}})
    assert (r.status_code, r.json()["detail"]) == (400, "fields: no run field 'model:l-diversity:enabled' for this "
                                                        "dataset; the fields are the form_field names of GET /registry/")
    r = api.post("/api/v1/runs/", {"dataset": dataset["id"]})
    assert r.status_code == 400 and r.json()["errors"].keys() == {"algorithm", "k"}
    assert not Job.objects.exists()


def test_check_reports_problems_without_a_job(user, dataset):
    api = api_for(user)
    ok = api.post("/api/v1/runs/check/", {"dataset": dataset["id"], **RUN})
    assert ok.json() == {"problems": []}
    bad = api.post("/api/v1/runs/check/", {"dataset": dataset["id"], **RUN, "k": 9}).json()["problems"]
    assert bad and bad[0]["field"] == "k"
    assert not Job.objects.exists()


def test_owner_only_and_keys(user, other_user, dataset, eager_celery):  # noqa: F811
    job = api_for(user).post("/api/v1/runs/", {"dataset": dataset["id"], **RUN}).json()
    other = api_for(other_user)
    assert other.post("/api/v1/runs/", {"dataset": dataset["id"], **RUN}).status_code == 404
    assert other.post("/api/v1/runs/check/", {"dataset": dataset["id"], **RUN}).status_code == 404
    for url in (f"/api/v1/runs/{job['id']}/", f"/api/v1/runs/{job['id']}/report/",
                f"/api/v1/runs/{job['id']}/rows/", f"/api/v1/runs/{job['id']}/download/"):
        assert other.get(url).status_code == 404, url
        assert api_for(None).get(url).status_code == 401
        assert revoked_api(user).get(url).status_code == 401
    assert other.post(f"/api/v1/runs/{job['id']}/cancel/").status_code == 404
    assert other.delete(f"/api/v1/runs/{job['id']}/").status_code == 404
    assert api_for(None).post("/api/v1/runs/", {"dataset": dataset["id"], **RUN}).status_code == 401
    assert other.get("/api/v1/runs/").json() == {"offset": 0, "limit": 100, "count": 0, "results": []}
    assert Job.objects.count() == 1


def test_cancel_a_queued_job_and_delete(user, dataset, monkeypatch):
    api = api_for(user)
    monkeypatch.setattr(jobs, "submit_job", lambda job: job)  # no worker takes it: it stays queued
    job = api.post("/api/v1/runs/", {"dataset": dataset["id"], **RUN}).json()
    assert job["status"] == "queued"
    r = api.post(f"/api/v1/runs/{job['id']}/cancel/")
    assert (r.status_code, r.json()["status"], r.json()["message"]) == (200, "cancelled", "cancelled before it started")
    again = api.post(f"/api/v1/runs/{job['id']}/cancel/")
    assert (again.status_code, again.json()) == (409, {"detail": "the job has already cancelled"})
    assert api.get(f"/api/v1/runs/{job['id']}/report/").status_code == 404
    assert api.delete(f"/api/v1/runs/{job['id']}/").status_code == 204
    assert not Job.objects.exists()


def test_a_broker_that_refuses_ends_the_job(user, dataset, monkeypatch):
    def refuse(job):
        raise ConnectionError("broker down")

    monkeypatch.setattr(jobs, "submit_job", refuse)
    job = api_for(user).post("/api/v1/runs/", {"dataset": dataset["id"], **RUN}).json()
    assert (job["status"], job["message"]) == ("failed", "could not queue the job: broker down")


def test_the_jobs_list_is_paged(user, other_user, dataset):
    """Every job of the owner once, newest first, across pages of any size; the count is the owner's jobs."""
    ds = Dataset.objects.get(pk=dataset["id"])
    made = [jobs.create_job(ds, "flash", 2, 0.0, "disease") for _ in range(7)]
    jobs.create_job(make_other_dataset(other_user), "flash", 2, 0.0, "")  # another user's: never listed
    api = api_for(user)
    newest_first = [str(j.pk) for j in sorted(made, key=lambda j: (j.created, str(j.pk)), reverse=True)]
    for limit in (1, 3, 7, 100):
        seen = []
        for offset in range(0, 8, limit):
            page = api.get("/api/v1/runs/", {"offset": offset, "limit": limit}).json()
            assert (page["offset"], page["limit"], page["count"]) == (offset, limit, 7)
            seen += [j["id"] for j in page["results"]]
        assert sorted(seen) == sorted(newest_first) and len(seen) == 7
        created = [Job.objects.get(pk=i).created for i in seen]
        assert created == sorted(created, reverse=True)
    assert api.get("/api/v1/runs/", {"offset": 7}).json()["results"] == []
    for bad in ({"limit": 0}, {"limit": 1001}, {"offset": -1}, {"limit": "x"}):
        r = api.get("/api/v1/runs/", bad)
        assert r.status_code == 400 and next(iter(bad)) in r.json()["detail"]


def make_other_dataset(owner):
    from anonymizer_helpers import make_dataset

    return make_dataset(owner)
