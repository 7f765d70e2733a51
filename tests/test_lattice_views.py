"""The solution lattice pages of a finished lattice job: page, lattice JSON, node JSON, keep."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from anonymizer_helpers import make_dataset, queue_without_running, run_jobs_synchronously

from anonymizer_app import engine
from anonymizer_app.engine.model.table import frequency_set
from anonymizer_app.engine.search.lattice import equivalence_classes
from anonymizer_app.models import Job
from anonymizer_app.services import jobs, lattice_known, results, storage
from anonymizer_app.views import lattice as lattice_view

pytestmark = pytest.mark.django_db

K, SUPPRESSION = 2, 0.25  # 8 records: up to 2 may be suppressed


def run(dataset, algorithm="flash", options=None, k=K, suppression=SUPPRESSION):
    job = jobs.create_job(dataset, algorithm, k, suppression, "disease", options=options or {})
    job = jobs.run_job(job)
    assert job.status == Job.SUCCEEDED, job.message
    return job


@pytest.fixture(autouse=True)
def worker_at_once(monkeypatch):
    """Jobs the views submit (lattice evaluation, keep) run at once, as a worker would; tests of the
    pending state queue them instead (queue_without_running)."""
    return run_jobs_synchronously(monkeypatch)


@pytest.fixture
def dataset(user):
    return make_dataset(user)


@pytest.fixture
def job(dataset):
    # the lattice's values are checked against brute-force discernibility (the searches' default is NCP)
    return run(dataset, options={"metric": "discernibility"})


def urls(job):
    base = f"/jobs/{job.pk}/lattice/"
    return {"page": base, "data": base + "data.json", "node": base + "node.json?levels=0,0,0", "keep": base + "keep/"}


def table_and_hierarchies(job):
    _, table, hs = lattice_view._job_table(job)
    return table, hs


def brute_force(job):
    """levels -> (anonymous, discernibility) for every node, from the classes alone."""
    table, hs = table_and_hierarchies(job)
    ordered = [hs[c] for c in table.qi]
    codes = table.encode(hs)
    freq = frequency_set(codes)
    budget = math.floor(job.suppression_limit * table.n + 1e-9)
    out = {}
    for levels in itertools.product(*[range(h.height + 1) for h in ordered]):
        _, sizes = equivalence_classes(freq.codes, freq.counts, ordered, list(levels))
        small = sizes < job.k
        outliers = int(sizes[small].sum())
        out[",".join(map(str, levels))] = (outliers <= budget,
                                           int(np.dot(sizes[~small], sizes[~small])) + outliers * table.n)
    return out


# ---- access --------------------------------------------------------------------------------------
def test_the_owner_sees_the_page(client_alice, job):
    r = client_alice.get(urls(job)["page"])
    assert r.status_code == 200
    html = r.content.decode()
    assert 'id="lattice-chart"' in html and 'id="lattice-urls"' in html
    assert "js/lattice.js" in html and "Keep this solution as the result" in html
    assert f"/jobs/{job.pk}/lattice/data.json" in html


def test_the_result_page_links_to_the_lattice(client_alice, job, dataset):
    assert f'href="/jobs/{job.pk}/lattice/"' in client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    other = run(dataset, "datafly")
    assert "/lattice/" not in client_alice.get(f"/jobs/{other.pk}/result/").content.decode()
    assert client_alice.get(urls(other)["page"]).status_code == 404


@pytest.mark.parametrize("which", ["page", "data", "node", "keep"])
def test_another_user_gets_404(client, other_user, job, which):
    client.force_login(other_user)
    r = client.post(urls(job)[which], {"levels": "2,5,1"}) if which == "keep" else client.get(urls(job)[which])
    assert r.status_code == 404
    assert Job.objects.count() == 1


@pytest.mark.parametrize("which", ["page", "data", "node", "keep"])
def test_anonymous_users_are_sent_to_the_login(client, job, which):
    r = client.post(urls(job)[which]) if which == "keep" else client.get(urls(job)[which])
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")


# ---- the lattice ---------------------------------------------------------------------------------
def test_the_lattice_has_every_node_and_flags_the_optimum(client_alice, job):
    data = client_alice.get(urls(job)["data"]).json()
    table, hs = table_and_hierarchies(job)
    heights = [hs[c].height for c in table.qi]
    assert data["qi"] == ["age", "zip", "sex"] and data["heights"] == heights
    size = math.prod(h + 1 for h in heights)
    assert data["size"] == size == len(data["nodes"]["levels"]) == len(set(data["nodes"]["levels"]))
    truth = brute_force(job)
    assert set(data["nodes"]["levels"]) == set(truth)
    for levels, tag, value, rank in zip(data["nodes"]["levels"], data["nodes"]["tag"], data["nodes"]["value"],
                                        data["nodes"]["rank"]):
        anonymous, disc = truth[levels]
        assert (tag in "Aa") == anonymous, levels
        assert value == (disc if anonymous else None), levels
        assert rank == sum(map(int, levels.split(",")))
    best = min(v for a, v in truth.values() if a)
    result_levels = results.transformation_key(job.result.report)
    assert data["optimum"] == result_levels and data["result"] == result_levels
    assert truth[data["optimum"]] == (True, best)
    assert data["anonymous"] == sum(a for a, _ in truth.values())
    assert data["source"] == "computed by an exhaustive evaluation of every node under every model of the job"
    assert data["kept"] == {}


def test_the_frontier_is_minimal_anonymous_and_maximal_not_anonymous(client_alice, job):
    data = client_alice.get(urls(job)["data"]).json()
    truth = brute_force(job)
    heights = data["heights"]

    def neighbours(levels, step):
        lv = list(map(int, levels.split(",")))
        for j in range(len(lv)):
            if 0 <= lv[j] + step <= heights[j]:
                yield ",".join(map(str, lv[:j] + [lv[j] + step] + lv[j + 1:]))

    for levels, flag in zip(data["nodes"]["levels"], data["nodes"]["frontier"]):
        anonymous = truth[levels][0]
        if anonymous:
            expected = not any(truth[n][0] for n in neighbours(levels, -1))
        else:
            expected = all(truth[n][0] for n in neighbours(levels, +1))
        assert bool(flag) == expected, levels


def test_a_stored_lattice_is_used_and_the_lattice_is_cached(client_alice, dataset, monkeypatch):
    job = run(dataset, "flash", {"keep_lattice": "yes"})
    data = client_alice.get(urls(job)["data"]).json()
    assert data["source"] == "stored with the job's result (keep_lattice)"
    assert data["size"] == job.result.report["search"]["lattice_size"]
    assert (storage.lattice_cache_dir(job) / "lattice.json").exists()
    other = run(dataset, "samarati")
    first = client_alice.get(urls(other)["data"]).json()
    monkeypatch.setattr(engine.search.solution_lattice, "evaluate", lambda *a, **kw: pytest.fail("computed again"))
    assert client_alice.get(urls(other)["data"]).json()["nodes"] == first["nodes"]


# ---- one node --------------------------------------------------------------------------------------
def test_a_node_shows_its_table_and_exact_metrics(client_alice, job):
    # age to [20-40)... at level 1 of the default interval hierarchy? take the top node: one class of 8
    data = client_alice.get(urls(job)["data"]).json()
    top = ",".join(str(h) for h in data["heights"])
    node = client_alice.get(f"/jobs/{job.pk}/lattice/node.json", {"levels": top}).json()
    assert node["anonymous"] is True and node["levels"] == top
    assert node["metrics"]["equivalence_classes"] == 1
    assert node["metrics"]["discernibility"] == 64
    assert node["metrics"]["generalization_height"] == 1.0
    assert node["k_achieved"] == 8 and node["suppressed"] == 0
    # the metrics table: worded and formatted as on the result page (engine.measure.figure_catalogue)
    by_key = {m["key"]: m for m in node["metric_rows"]}
    assert (by_key["prosecutor_risk_highest"]["label"], by_key["prosecutor_risk_highest"]["after_text"]) == \
        ("Highest prosecutor risk", "12.5%")
    assert (by_key["discernibility"]["after_text"], by_key["generalization_height"]["after_text"]) == ("64", "1.000")
    rows = node["table"]["rows"]
    assert len(rows) == 8
    assert node["table"]["anonymized_columns"] == ["age", "zip", "sex", "note", "disease"]
    age = node["table"]["anonymized_columns"].index("age")
    assert rows[0]["anonymized"][age] == "*" and rows[0]["changed"][age] is True
    assert rows[0]["original"][:2] == ["Ann", "34"]
    assert rows[0]["changed"][node["table"]["anonymized_columns"].index("note")] is False


def test_node_metrics_equal_the_engine_and_are_cached(client_alice, job, monkeypatch):
    truth = brute_force(job)
    levels = next(lv for lv, (a, _) in sorted(truth.items()) if a and lv != job_levels(job))
    node = client_alice.get(f"/jobs/{job.pk}/lattice/node.json", {"levels": levels}).json()
    table, hs = table_and_hierarchies(job)
    expected = engine.anonymize(table, hs, "full-domain", k=K, suppression_limit=SUPPRESSION, sensitive="disease",
                                options={"levels": levels})
    assert node["metrics"]["discernibility"] == truth[levels][1] == expected.metrics["discernibility"]
    assert node["metrics"]["ncp"] == pytest.approx(expected.metrics["ncp"])
    assert node["suppressed"] == int(expected.suppressed.sum())
    monkeypatch.setattr(engine, "anonymize", lambda *a, **kw: pytest.fail("the node was computed again"))
    assert client_alice.get(f"/jobs/{job.pk}/lattice/node.json", {"levels": levels}).json() == node


def job_levels(job):
    return results.transformation_key(job.result.report)


def test_a_node_that_is_not_anonymous_says_why(client_alice, job):
    node = client_alice.get(f"/jobs/{job.pk}/lattice/node.json", {"levels": "0,0,0"}).json()
    assert node["anonymous"] is False
    assert "does not meet 2-anonymity: 8 record(s) would have to be suppressed" in node["message"]


@pytest.mark.parametrize("levels, message", [
    ("1,1", "levels: 2 level(s) given for 3 quasi-identifier(s); give one per quasi-identifier, in the order "
            "age, zip, sex"),
    ("0,0,9", "levels: the level of sex must be between 0 and 1 (the height of its hierarchy), got 9"),
])
def test_bad_levels_are_refused(client_alice, job, levels, message):
    r = client_alice.get(f"/jobs/{job.pk}/lattice/node.json", {"levels": levels})
    assert r.status_code == 400 and r.json() == {"error": message}


# ---- keep --------------------------------------------------------------------------------------------
def test_keeping_a_node_makes_a_verified_job(client_alice, job, monkeypatch):
    run_jobs_synchronously(monkeypatch)  # keep runs on a worker; here at once
    truth = brute_force(job)
    levels = next(lv for lv, (a, _) in sorted(truth.items()) if a and lv != job_levels(job))
    r = client_alice.post(urls(job)["keep"], {"levels": levels})
    new = Job.objects.filter(kind=Job.LATTICE_KEEP).get()
    assert r.status_code == 302 and r["Location"] == f"/jobs/{new.pk}/"
    assert (new.kind, new.algorithm, new.k, new.suppression_limit, new.sensitive) == (
        Job.LATTICE_KEEP, "full-domain", K, SUPPRESSION, "disease")
    assert new.options == {"levels": levels} and new.config == job.config
    assert new.status == Job.SUCCEEDED
    report = new.result.report
    assert report["verified"] is True
    assert results.transformation_key(report) == levels
    assert report["metrics"]["discernibility"] == truth[levels][1]
    data = client_alice.get(urls(job)["data"]).json()
    assert data["kept"] == {levels: f"/jobs/{new.pk}/result/"}
    assert client_alice.get(f"/jobs/{job.pk}/lattice/node.json", {"levels": levels}).json()["kept"] == \
        f"/jobs/{new.pk}/result/"
    assert client_alice.get(f"/jobs/{new.pk}/result/").status_code == 200


def test_keeping_a_bad_node_makes_no_job(client_alice, job, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    r = client_alice.post(urls(job)["keep"], {"levels": "0,0"})
    assert r.status_code == 302 and r["Location"] == urls(job)["page"]
    assert Job.objects.count() == 1
    r = client_alice.post(urls(job)["keep"], {"levels": "0,0,0"})  # not anonymous: the job fails and says why
    new = Job.objects.filter(kind=Job.LATTICE_KEEP).get()
    assert new.status == Job.FAILED and "does not meet 2-anonymity" in new.message
    assert r["Location"] == f"/jobs/{new.pk}/"


def test_keep_needs_post(client_alice, job):
    assert client_alice.get(urls(job)["keep"]).status_code == 405


def test_the_lattice_of_an_l_diverse_run_honours_l_and_its_kept_node_too(client_alice, user, monkeypatch):
    """The lattice tags, the star and "keep" use every model of the job: a node is "anonymous" only if it is
    2-anonymous AND distinct 2-diverse (recounted here), and the kept node's published rows are l-diverse."""
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    job = jobs.create_job(ds, "flash", 2, 0.25, "disease",
                          models=[{"model": "distinct-l-diversity", "l": 2, "column": "disease"}])
    job = jobs.run_job(job)
    assert job.status == Job.SUCCEEDED, job.message
    data = client_alice.get(urls(job)["data"]).json()
    assert data["models"] == ["2-anonymity", "distinct 2-diversity on disease"]
    table, hs = table_and_hierarchies(job)
    budget = math.floor(0.25 * table.n + 1e-9)
    for levels, tag in zip(data["nodes"]["levels"], data["nodes"]["tag"]):
        out = table.frame.copy()
        for col, lv in zip(table.qi, map(int, levels.split(","))):
            codes = hs[col].encode(out[col], col)
            out[col] = np.asarray(hs[col].labels[lv], dtype=object)[hs[col].maps[lv][codes]]
        groups = out.groupby(table.qi)["disease"]
        bad = (groups.size() < 2) | (groups.nunique() < 2)
        outliers = int(groups.size()[bad].sum())
        assert (tag in "Aa") == (outliers <= budget), levels
    assert data["optimum"] == results.transformation_key(job.result.report)
    node = client_alice.get(f"/jobs/{job.pk}/lattice/node.json", {"levels": data["optimum"]}).json()
    assert "distinct 2-diversity on disease" in node["models"]
    client_alice.post(urls(job)["keep"], {"levels": data["optimum"]})
    kept = Job.objects.filter(kind=Job.LATTICE_KEEP).get()
    assert kept.status == Job.SUCCEEDED, kept.message
    assert kept.models == job.models
    assert [c["describe"] for c in kept.result.report["model_checks"]] == ["2-anonymity",
                                                                           "distinct 2-diversity on disease"]
    output, suppressed = results.load_output(kept.result)
    assert not suppressed.any()
    groups = output.groupby(table.qi)["disease"]
    assert groups.size().min() >= 2 and groups.nunique().min() >= 2


# ---- the evaluation runs on a worker -------------------------------------------------------------------
def test_the_evaluation_is_a_job_with_progress_and_one_at_a_time(client_alice, job, monkeypatch):
    queued = queue_without_running(monkeypatch)
    r = client_alice.get(urls(job)["data"])
    assert r.status_code == 202
    evaluation = Job.objects.get(kind=Job.LATTICE)
    first = r.json()
    known = first.pop("lattice")  # the run's search's nodes, shown while every node is evaluated
    assert first == {"pending": True, "job": str(evaluation.pk), "status": "queued", "progress": 0.0,
                     "phase": "waiting for a worker", "job_url": f"/jobs/{evaluation.pk}/",
                     "cancel_url": f"/jobs/{evaluation.pk}/cancel/"}
    assert known["partial"] is True and known["optimum"] == results.transformation_key(job.result.report)
    assert "lattice" not in client_alice.get(urls(job)["data"], {"known": "0"}).json()  # a poller that has them
    assert evaluation.options == {"source_job": str(job.pk)} and evaluation.models == job.models
    Job.objects.filter(pk=evaluation.pk).update(status=Job.RUNNING, progress=0.4, phase="evaluating node 5 of 12")
    again = client_alice.get(urls(job)["data"]).json()
    assert (again["job"], again["progress"], again["phase"]) == (str(evaluation.pk), 0.4, "evaluating node 5 of 12")
    assert Job.objects.filter(kind=Job.LATTICE).count() == 1 and queued == [evaluation.pk]
    # the worker runs it: the lattice lands in the run's cache and the page gets it
    Job.objects.filter(pk=evaluation.pk).update(status=Job.QUEUED)
    evaluation = jobs.run_job(evaluation)
    assert evaluation.status == Job.SUCCEEDED and evaluation.progress == 1.0
    assert (storage.lattice_cache_dir(job) / "lattice.json").exists()
    data = client_alice.get(urls(job)["data"])
    assert data.status_code == 200 and data.json()["size"] == len(data.json()["nodes"]["levels"])
    whole = data.json()
    assert "partial" not in whole and known["nodes"]["levels"] == whole["nodes"]["levels"]
    assert (known["qi"], known["labels"], known["models"]) == (whole["qi"], whole["labels"], whole["models"])
    # every node the search tagged has the evaluation's tag (A/a, N/n), every value it computed the same value
    for tag, value, full_tag, full_value in zip(known["nodes"]["tag"], known["nodes"]["value"],
                                                whole["nodes"]["tag"], whole["nodes"]["value"]):
        assert tag == "?" or (tag in "Aa") == (full_tag == "A")
        assert value is None or value == full_value
    status = client_alice.get(f"/jobs/{evaluation.pk}/status/").json()
    assert status["result_url"] == urls(job)["page"]
    assert client_alice.get(f"/jobs/{evaluation.pk}/result/")["Location"] == urls(job)["page"]


def test_a_run_whose_first_view_was_not_written_still_succeeds(client_alice, dataset, monkeypatch):
    def fail(job, publication):
        raise RuntimeError("disk full")
    monkeypatch.setattr(lattice_known, "remember", fail)
    job = run(dataset, options={"metric": "discernibility"})
    assert job.status == Job.SUCCEEDED and not (storage.lattice_cache_dir(job) / lattice_known.KNOWN_FILE).exists()
    queue_without_running(monkeypatch)
    r = client_alice.get(urls(job)["data"])
    assert r.status_code == 202 and "lattice" not in r.json()  # progress alone, as before the first view


def test_a_failed_or_cancelled_evaluation_says_why_and_can_be_retried(client_alice, job, monkeypatch):
    queue_without_running(monkeypatch)
    client_alice.get(urls(job)["data"])
    evaluation = Job.objects.get(kind=Job.LATTICE)
    client_alice.post(f"/jobs/{evaluation.pk}/cancel/")
    r = client_alice.get(urls(job)["data"])
    assert r.status_code == 422
    assert r.json() == {"error": "The lattice evaluation cancelled: cancelled before it started", "retry": True,
                        "job": str(evaluation.pk)}
    r = client_alice.get(urls(job)["data"], {"retry": "1"})
    assert r.status_code == 202 and r.json()["job"] != str(evaluation.pk)
    assert Job.objects.filter(kind=Job.LATTICE).count() == 2


def test_another_user_starts_no_evaluation(client, other_user, job, monkeypatch):
    queue_without_running(monkeypatch)
    client.force_login(other_user)
    assert client.get(urls(job)["data"]).status_code == 404
    assert not Job.objects.filter(kind=Job.LATTICE).exists()
