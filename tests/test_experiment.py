"""The seed-001 experiment page: /datasets/<id>/experiment/ (form, queues a "homogeneity-experiment" job)
and /jobs/<id>/experiment/ (table and chart). The figures must equal direct experiments.homogeneity_vs_k
calls on the same generated tables."""

import csv
import io
import json
import re

import pytest
from anonymizer_helpers import make_dataset, people_dataset, queue_without_running, run_jobs_synchronously
from django.utils.html import escape

from anonymizer_app.engine.measure import experiments
from anonymizer_app.models import Job
from anonymizer_app.services import datasets, experiment

pytestmark = pytest.mark.django_db
FIGURES = ["rows", "k", "algorithm", "equivalence_classes", "homogeneous_classes", "homogeneous_records",
           "homogeneous_share", "k_reached", "suppressed", "transformation"]


def url(ds):
    return f"/datasets/{ds.pk}/experiment/"


def post(client, ds, **fields):
    data = {"sizes": "300", "seed": 7, "k_values": "2, 5, 10", "algorithm": "datafly", "suppression_percent": 0,
            **fields}
    return client.post(url(ds), data)


def json_script(html: str, element_id: str):
    start = html.index(f'<script id="{element_id}" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


def test_it_shows_the_form(client_alice, user):
    ds = make_dataset(user)
    html = client_alice.get(url(ds)).content.decode()
    assert 'id="experiment-form"' in html
    assert 'value="2, 3, 5, 10, 20, 50"' in html
    assert "Homogeneity experiment</a>" in html  # the dataset tab
    assert '<option value="disease">disease</option>' in html
    # opened from a dataset with QIs and a sensitive column, it starts on that dataset (issue 29), generated
    # tables left to ask for
    assert 'name="include_dataset" id="id_include_dataset" checked' in html
    assert re.search(r'<input type="text" name="sizes"(?! value=)[^>]*>', html)


def test_without_a_sensitive_column_it_starts_on_generated_tables(client_alice, user):
    ds = make_dataset(user, roles={"age": "quasi-identifying"})
    html = client_alice.get(url(ds)).content.decode()
    assert 'value="10000, 50000, 100000"' in html and 'id="id_include_dataset" checked' not in html


def test_it_runs_and_agrees_with_homogeneity_vs_k(client_alice, user, monkeypatch):
    submitted = run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user)
    r = post(client_alice, ds, sizes="300, 150", include_dataset="on", sensitive="disease")
    job = Job.objects.get()
    assert submitted == [job.pk]
    assert r.status_code == 302 and r["Location"] == f"/jobs/{job.pk}/"
    assert job.status == Job.SUCCEEDED, job.message
    assert (job.algorithm, job.k, job.sensitive) == ("homogeneity-experiment", 2, "disease")
    assert job.options == {"sizes": [300, 150], "seed": 7, "include_dataset": True, "k": [2, 5, 10],
                           "algorithm": "datafly"}
    rows = job.result.report["experiment"]
    hierarchies = experiments.people_hierarchies()
    expected = []
    for n in (300, 150):
        table = experiments.people_table(experiments.generate_people(n, 7))
        for row in experiments.homogeneity_vs_k(table, hierarchies, [2, 5, 10], "datafly", 0.0, "disease"):
            expected.append({"table": f"people, {n:,} rows (seed 7)", **row})
    table, own = datasets.dataset_table(ds)
    for row in experiments.homogeneity_vs_k(table, own, [2, 5, 10], "datafly", 0.0, "disease"):
        expected.append({"table": "People", **row})
    assert [{f: r[f] for f in ["table", *FIGURES]} for r in rows] == [{f: e[f] for f in ["table", *FIGURES]}
                                                                     for e in expected]
    assert all(r["k_reached"] >= r["k"] for r in rows)

    # the job page links to the experiment page; the result page redirects there
    status = client_alice.get(f"/jobs/{job.pk}/status/").json()
    assert status["result_url"] == f"/jobs/{job.pk}/experiment/"
    assert client_alice.get(f"/jobs/{job.pk}/result/")["Location"] == f"/jobs/{job.pk}/experiment/"

    html = client_alice.get(f"/jobs/{job.pk}/experiment/").content.decode()
    assert 'id="experiment-table"' in html and 'id="chart-homogeneity"' in html
    for e in expected:
        cells = (f'<td>{escape(e["table"])}</td><td class="num">{e["rows"]:,}</td><td class="num">{e["k"]}</td>'
                 f'<td class="num">{e["equivalence_classes"]:,}</td><td class="num">{e["homogeneous_classes"]:,}</td>'
                 f'<td class="num">{e["homogeneous_records"]:,}</td>')
        assert cells in html
    chart = json_script(html, "experiment-data")
    assert [t["name"] for t in chart["data"]] == ["people, 300 rows (seed 7)", "people, 150 rows (seed 7)", "People"]
    for trace in chart["data"]:
        mine = [e for e in expected if e["table"] == trace["name"]]
        assert trace["x"] == [2, 5, 10] and trace["y"] == [e["homogeneous_classes"] for e in mine]

    text = client_alice.get(f"/jobs/{job.pk}/experiment/?format=csv").content.decode()
    table_rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["table"], int(r["k"]), int(r["homogeneous_classes"])) for r in table_rows] == [
        (e["table"], e["k"], e["homogeneous_classes"]) for e in expected]


def test_the_same_seed_gives_the_same_table(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    post(client_alice, ds, sizes="200", k_values="3")
    post(client_alice, ds, sizes="200", k_values="3")
    a, b = (j.result.report["experiment"] for j in Job.objects.order_by("created"))
    assert [{f: r[f] for f in FIGURES} for r in a] == [{f: r[f] for f in FIGURES} for r in b]


@pytest.mark.parametrize("fields, message", [
    ({"sizes": "10, abc"}, "table sizes must be whole numbers separated by commas, got 'abc'"),
    ({"sizes": "0"}, "a generated table has 1 to 1,000,000 rows, got 0"),
    ({"sizes": "2000000"}, "a generated table has 1 to 1,000,000 rows, got 2,000,000"),
    ({"k_values": "2, x"}, "k must be whole numbers separated by commas, got 'x'"),
    ({"k_values": "0"}, "k must be at least 1, got 0"),
    ({"k_values": ""}, "This field is required."),
    ({"sizes": ""}, "Choose at least one table: a generated size or this dataset."),
    ({"sizes": "300", "k_values": "2, 400"}, "k=400 is larger than the generated table of 300 rows"),
    ({"seed": "-1"}, "the seed must be 0 or more, got -1"),
    ({"suppression_percent": "150"}, "The suppression limit is a percentage between 0 and 100."),
    ({"algorithm": "nope"}, "Select a valid choice. nope is not one of the available choices."),
    ({"sizes": "", "include_dataset": "on", "k_values": "9"}, "k=9 is larger than the dataset&#x27;s 8 records"),
])
def test_bad_input_is_refused_with_a_message(client_alice, user, fields, message):
    ds = make_dataset(user)
    r = post(client_alice, ds, **fields)
    assert r.status_code == 200
    assert message.replace("'", "&#x27;") in r.content.decode() or message in r.content.decode()
    assert Job.objects.count() == 0


def test_this_dataset_needs_a_sensitive_column(client_alice, user):
    ds = make_dataset(user, roles={"age": "quasi-identifying"})
    r = post(client_alice, ds, sizes="", include_dataset="on")
    assert escape("the homogeneity count needs a sensitive column in this dataset") in r.content.decode()
    assert Job.objects.count() == 0


def test_it_is_owner_only(client, client_alice, user, other_user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    foreign = make_dataset(other_user)
    assert client_alice.get(url(foreign)).status_code == 404
    assert post(client_alice, foreign).status_code == 404
    post(client_alice, ds)
    job = Job.objects.get()
    theirs = experiment.create_experiment(foreign, [50], 0, False, [2], "datafly")
    assert client_alice.get(f"/jobs/{theirs.pk}/experiment/").status_code == 404
    # a queued job: its page is the job page until it succeeds
    assert client_alice.get(f"/jobs/{job.pk}/experiment/")["Location"] == f"/jobs/{job.pk}/"
    client.logout()
    for path in (url(ds), f"/jobs/{job.pk}/experiment/"):
        r = client.get(path)
        assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")


def test_another_job_is_not_an_experiment(client_alice, user):
    from anonymizer_helpers import finished_job

    job = finished_job(make_dataset(user))
    assert client_alice.get(f"/jobs/{job.pk}/experiment/").status_code == 404


def test_the_job_page_and_the_download_of_an_experiment(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    post(client_alice, ds, sizes="100", k_values="2")
    job = Job.objects.get()
    html = client_alice.get(f"/jobs/{job.pk}/").content.decode()
    assert "Homogeneity experiment" in html
    assert client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv").status_code == 404
