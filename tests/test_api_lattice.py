"""API solution lattice: the lattice (checked against a brute-force count of every node), a node, keep (the kept
node's published rows equal the web keep's, through the publishing gate); SafePub refused (409); owner only (404),
no key 401."""

from __future__ import annotations

import pytest
from anonymizer_helpers import make_dataset, queue_without_running, run_jobs_synchronously
from api_helpers import api_for
from test_lattice_views import brute_force

from anonymizer_app.models import Job
from anonymizer_app.services import jobs, results

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    j = jobs.run_job(jobs.create_job(ds, "flash", 2, 0.25, "disease", options={"metric": "discernibility"}))
    assert j.status == Job.SUCCEEDED, j.message
    return j


def test_the_lattice_matches_a_brute_force_count(user, job):
    r = api_for(user).get(f"/api/v1/lattice/{job.pk}/")
    assert r.status_code == 200, r.content
    data = r.json()
    truth = brute_force(job)
    assert data["qi"] == ["age", "zip", "sex"] and set(data["nodes"]["levels"]) == set(truth)
    for levels, tag, value in zip(data["nodes"]["levels"], data["nodes"]["tag"], data["nodes"]["value"]):
        assert (tag in "Aa") == truth[levels][0], levels
        assert value == (truth[levels][1] if truth[levels][0] else None), levels
    best = min(v for a, v in truth.values() if a)
    assert truth[data["optimum"]] == (True, best) and data["kept"] == {}


def test_a_pending_evaluation_answers_202_with_its_progress(user, job, monkeypatch):
    queue_without_running(monkeypatch)
    r = api_for(user).get(f"/api/v1/lattice/{job.pk}/")
    evaluation = Job.objects.get(kind=Job.LATTICE)
    assert r.status_code == 202
    assert (r.json()["pending"], r.json()["job"], r.json()["status"]) == (True, str(evaluation.pk), "queued")
    # the run's own search's nodes come with it (Flash checked some; the others' tags predicted), each tag and value
    # as the brute force counts the node; ?known=0 leaves them out
    known, truth = r.json()["lattice"], brute_force(job)
    assert known["partial"] is True and set(known["nodes"]["levels"]) == set(truth)
    for levels, tag, value in zip(known["nodes"]["levels"], known["nodes"]["tag"], known["nodes"]["value"]):
        assert tag == "?" or (tag in "Aa") == truth[levels][0], levels
        assert value is None or value == truth[levels][1], levels
    assert truth[known["optimum"]][0] and any(v is not None for v in known["nodes"]["value"])
    again = api_for(user).get(f"/api/v1/lattice/{job.pk}/", {"known": "0"})
    assert again.status_code == 202 and "lattice" not in again.json() and again.json()["job"] == str(evaluation.pk)


def test_a_node_and_its_refusals(user, job):
    api = api_for(user)
    truth = brute_force(job)
    node = api.get(f"/api/v1/lattice/{job.pk}/node/", {"levels": "0,0,0"}).json()
    assert node["anonymous"] is False and "does not meet 2-anonymity" in node["message"]
    good = next(lv for lv, (a, _) in sorted(truth.items()) if a)
    node = api.get(f"/api/v1/lattice/{job.pk}/node/", {"levels": good}).json()
    assert node["anonymous"] is True and node["metrics"]["discernibility"] == truth[good][1]
    assert node["kept"] is None
    r = api.get(f"/api/v1/lattice/{job.pk}/node/", {"levels": "1,1"})
    assert r.status_code == 400 and r.json()["detail"] == (
        "levels: 2 level(s) given for 3 quasi-identifier(s); give one per quasi-identifier, in the order age, "
        "zip, sex")
    assert api.get(f"/api/v1/lattice/{job.pk}/node/").status_code == 400  # levels missing


def test_keep_publishes_the_same_rows_as_the_web_keep(user, job, client_alice):
    truth = brute_force(job)
    levels = next(lv for lv, (a, _) in sorted(truth.items()) if a and lv != results.transformation_key(
        job.result.report))
    r = api_for(user).post(f"/api/v1/lattice/{job.pk}/keep/", {"levels": levels})
    assert r.status_code == 201, r.content
    kept = Job.objects.get(pk=r.json()["id"])
    assert (kept.kind, kept.algorithm, kept.k, kept.suppression_limit, kept.options, kept.status) == (
        Job.LATTICE_KEEP, "full-domain", 2, 0.25, {"levels": levels}, Job.SUCCEEDED)
    assert r.json()["status"] == "succeeded" and r.json()["has_result"] is True
    report = kept.result.report
    assert report["verified"] is True and results.transformation_key(report) == levels
    assert report["metrics"]["discernibility"] == truth[levels][1]
    # the web's keep of the same node
    assert client_alice.post(f"/jobs/{job.pk}/lattice/keep/", {"levels": levels}).status_code == 302
    web = Job.objects.filter(kind=Job.LATTICE_KEEP).exclude(pk=kept.pk).get()
    api_rows, api_suppressed = results.load_output(kept.result)
    web_rows, web_suppressed = results.load_output(web.result)
    assert api_rows.equals(web_rows) and (api_suppressed == web_suppressed).all()
    # and the rows read through the API's result pages
    rows = api_for(user).get(f"/api/v1/runs/{kept.pk}/rows/").json()
    assert rows["count"] == len(api_rows)


def test_keeping_a_node_that_fails_a_model_fails_at_the_gate(user, job):
    r = api_for(user).post(f"/api/v1/lattice/{job.pk}/keep/", {"levels": "0,0,0"})
    assert r.status_code == 201
    assert r.json()["status"] == "failed" and "does not meet 2-anonymity" in r.json()["message"]
    r = api_for(user).post(f"/api/v1/lattice/{job.pk}/keep/", {"levels": "0,0"})
    assert r.status_code == 400 and "levels" in r.json()["detail"]
    assert Job.objects.filter(kind=Job.LATTICE_KEEP).count() == 1


def test_the_kept_node_of_an_l_diverse_run_is_l_diverse(user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    job = jobs.run_job(jobs.create_job(ds, "flash", 2, 0.25, "disease",
                                       models=[{"model": "distinct-l-diversity", "l": 2, "column": "disease"}]))
    optimum = api_for(user).get(f"/api/v1/lattice/{job.pk}/").json()["optimum"]
    r = api_for(user).post(f"/api/v1/lattice/{job.pk}/keep/", {"levels": optimum})
    kept = Job.objects.get(pk=r.json()["id"])
    assert kept.status == Job.SUCCEEDED and kept.models == job.models
    output, suppressed = results.load_output(kept.result)
    groups = output[~suppressed].groupby(["age", "zip", "sex"])["disease"]
    assert groups.size().min() >= 2 and groups.nunique().min() >= 2


def test_a_safepub_run_has_no_lattice(user, monkeypatch):
    job = jobs.run_job(jobs.create_job(make_dataset(user), "flash", 2, 0.25, "disease"))
    Job.objects.filter(pk=job.pk).update(algorithm="safepub")
    api = api_for(user)
    for r in (api.get(f"/api/v1/lattice/{job.pk}/"), api.get(f"/api/v1/lattice/{job.pk}/node/", {"levels": "0,0,0"}),
              api.post(f"/api/v1/lattice/{job.pk}/keep/", {"levels": "0,0,0"})):
        assert r.status_code == 409 and "SafePub" in r.json()["detail"]
    assert Job.objects.filter(kind=Job.LATTICE_KEEP).count() == 0


def test_a_run_that_is_not_a_lattice_run_is_404(user):
    job = jobs.run_job(jobs.create_job(make_dataset(user), "datafly", 2, 0.25, "disease"))
    assert api_for(user).get(f"/api/v1/lattice/{job.pk}/").status_code == 404


@pytest.mark.parametrize("which", ["lattice", "node", "keep"])
def test_another_user_gets_404_and_no_key_401(user, other_user, job, which):
    url = {"lattice": f"/api/v1/lattice/{job.pk}/", "node": f"/api/v1/lattice/{job.pk}/node/?levels=0,0,0",
           "keep": f"/api/v1/lattice/{job.pk}/keep/"}[which]
    for api, code in ((api_for(other_user), 404), (api_for(None), 401)):
        r = api.post(url, {"levels": "1,1,1"}) if which == "keep" else api.get(url)
        assert r.status_code == code
    assert Job.objects.filter(kind__in=[Job.LATTICE, Job.LATTICE_KEEP]).count() == 0


def test_a_broker_that_refuses_the_kept_node_ends_it_failed(user, job, monkeypatch):
    def refuse(job):
        raise ConnectionError("broker down")

    monkeypatch.setattr(jobs, "submit_job", refuse)
    r = api_for(user).post(f"/api/v1/lattice/{job.pk}/keep/", {"levels": "1,1,1"})
    assert r.status_code == 201
    assert (r.json()["status"], r.json()["message"]) == ("failed", "could not queue the job: broker down")


def test_a_broker_that_refuses_the_evaluation_says_so_and_a_retry_starts_anew(user, job, monkeypatch):
    def refuse(job):
        raise ConnectionError("broker down")

    monkeypatch.setattr(jobs, "submit_job", refuse)
    api = api_for(user)
    for _ in range(2):  # the failed evaluation is reported, not retried behind the caller's back
        r = api.get(f"/api/v1/lattice/{job.pk}/")
        assert r.status_code == 422
        assert r.json()["detail"] == "The lattice evaluation failed: could not queue the job: broker down"
    assert Job.objects.filter(kind=Job.LATTICE).count() == 1
    run_jobs_synchronously(monkeypatch)
    assert api.get(f"/api/v1/lattice/{job.pk}/", {"retry": "1"}).status_code == 200
