"""The comparison pages: /datasets/<id>/compare/ (form, queues a "compare" job) and
/jobs/<id>/comparison/ (charts and table). The figures must equal direct engine.anonymize calls."""

import csv
import io
import json
import re

import pytest
from anonymizer_helpers import make_dataset, queue_without_running, run_jobs_synchronously
from django.utils.html import escape

from anonymizer_app import engine
from anonymizer_app.models import Job
from anonymizer_app.services import comparison, datasets, jobs

pytestmark = pytest.mark.django_db

ALGOS = ["datafly", "flash", "mondrian", "kmember", "oka", "disk-clustering"]
KS = [1, 2, 3]


def url(ds):
    return f"/datasets/{ds.pk}/compare/"


def post(client, ds, algorithms=ALGOS, k_values="1, 2, 3", **extra):
    return client.post(url(ds), {"algorithms": algorithms, "k_values": k_values, "suppression_percent": 0,
                                 "sensitive": "disease", **extra})


def json_script(html: str, element_id: str):
    start = html.index(f'<script id="{element_id}" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


def test_it_shows_the_form(client_alice, user):
    ds = make_dataset(user)
    html = client_alice.get(url(ds)).content.decode()
    assert 'id="compare-form"' in html
    for name in ALGOS:
        assert f'value="{name}"' in html
    assert 'value="2, 5, 10, 50, 100"' in html
    assert "Compare algorithms</a>" in html  # the dataset tab


def test_it_runs_the_comparison_and_agrees_with_the_engine(client_alice, user, monkeypatch):
    submitted = run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    r = post(client_alice, ds)
    job = Job.objects.get()
    assert submitted == [job.pk]
    assert r.status_code == 302 and r["Location"] == f"/jobs/{job.pk}/"
    assert (job.algorithm, job.options, job.status) == ("compare", {"algorithms": ALGOS, "k": KS}, "succeeded")
    rows = job.result.report["comparison"]
    assert [(row["algorithm"], row["k"]) for row in rows] == [(a, k) for a in ALGOS for k in KS]
    table, hierarchies = datasets.dataset_table(ds)
    for row in rows:
        assert row["error"] == "" and row["verified"] is True
        assert row["k_achieved"] >= row["k"]
        direct = engine.anonymize(table, hierarchies, row["algorithm"], k=row["k"], sensitive="disease")
        assert row["discernibility"] == direct.metrics["discernibility"]
        assert row["equivalence_classes"] == len(direct.class_sizes)
        assert row["ncp"] == pytest.approx(direct.metrics["ncp"], abs=1e-6)
    # the job page's status points at the comparison, and the result URL redirects there
    status = client_alice.get(f"/jobs/{job.pk}/status/").json()
    assert status["result_url"] == f"/jobs/{job.pk}/comparison/"
    assert client_alice.get(f"/jobs/{job.pk}/result/")["Location"] == f"/jobs/{job.pk}/comparison/"

    html = client_alice.get(f"/jobs/{job.pk}/comparison/").content.decode()
    charts = json_script(html, "comparison-data")
    assert set(charts) == {"ncp", "discernibility", "seconds"}
    lines = charts["discernibility"]["data"]
    assert [t["name"] for t in lines] == ["Datafly", "Flash", "Mondrian", "Greedy k-member clustering",
                                         "OKA (one-pass k-means)", "Disk-based hybrid clustering"]
    mondrian = next(row for row in rows if row["algorithm"] == "mondrian" and row["k"] == 2)
    assert lines[2]["x"] == KS and lines[2]["y"][1] == mondrian["discernibility"]
    table_html = html[html.index('id="comparison-table"'):]
    assert table_html.count("<tr>") == 1 + len(rows)
    assert (f'<tr><td>Mondrian</td><td class="num">2</td><td class="num">{mondrian["k_achieved"]}</td>'
            f'<td class="num">{mondrian["equivalence_classes"]}</td><td class="num">0</td>'
            f'<td class="num">{mondrian["ncp"]:.4f}</td><td class="num">{mondrian["discernibility"]:,}</td>') in table_html
    assert '<script src="/static/js/comparison.js" defer></script>' in html

    r = client_alice.get(f"/jobs/{job.pk}/comparison/?format=csv")
    data = list(csv.DictReader(io.StringIO(r.content.decode())))
    assert r["Content-Disposition"] == 'attachment; filename="small-comparison.csv"'
    assert [(d["algorithm"], int(d["k"]), int(d["discernibility"])) for d in data] == [
        (row["algorithm"], row["k"], row["discernibility"]) for row in rows]
    # the dataset's compare page lists it
    assert f'href="/jobs/{job.pk}/comparison/"' in client_alice.get(url(ds)).content.decode()


def test_a_run_without_solution_is_a_row_with_its_error(user):
    ds = make_dataset(user)
    table, hierarchies = datasets.dataset_table(ds)
    rows = comparison.compare(table, hierarchies, ["datafly"], [8, 9])
    assert rows[0]["error"] == "" and rows[0]["k_achieved"] == 8
    assert rows[1]["error"].startswith("k=9 is larger than the table's 8 records")


@pytest.mark.parametrize("fields, message", [
    ({"k_values": "2, x"}, "k must be whole numbers separated by commas, got 'x'"),
    ({"k_values": "0"}, "k must be at least 1, got 0"),
    ({"k_values": "2, 20"}, "k=20 is larger than the dataset's 8 records"),
    ({"algorithms": []}, "This field is required."),
    ({"algorithms": ["nope"]}, "Select a valid choice. nope is not one of the available choices."),
])
def test_it_refuses_bad_input(client_alice, user, monkeypatch, fields, message):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    r = post(client_alice, ds, **fields)
    assert r.status_code == 200
    assert escape(message) in r.content.decode()
    assert Job.objects.count() == 0


def test_an_unfinished_comparison_redirects_to_its_job(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    post(client_alice, ds)
    job = Job.objects.get()
    assert job.status == Job.QUEUED
    assert client_alice.get(f"/jobs/{job.pk}/comparison/")["Location"] == f"/jobs/{job.pk}/"


def test_an_ordinary_job_has_no_comparison(client_alice, user):
    job = jobs.run_job(jobs.create_job(make_dataset(user), "datafly", 2, 0.25))
    assert client_alice.get(f"/jobs/{job.pk}/comparison/").status_code == 404


def test_other_user_gets_404(client, user, other_user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    job = jobs.run_job(comparison.create_comparison(ds, ["datafly"], [2]))
    client.force_login(other_user)
    assert client.get(url(ds)).status_code == 404
    assert client.post(url(ds), {"algorithms": ["datafly"], "k_values": "2"}).status_code == 404
    assert client.get(f"/jobs/{job.pk}/comparison/").status_code == 404
    assert Job.objects.count() == 1


def test_it_requires_login(client, user):
    ds = make_dataset(user)
    job = jobs.run_job(comparison.create_comparison(ds, ["datafly"], [2]))
    for path in (url(ds), f"/jobs/{job.pk}/comparison/"):
        r = client.get(path)
        assert r.status_code == 302 and r["Location"] == f"/accounts/login/?next={path}"


def test_risk_per_algorithm_and_k(client_alice, user, monkeypatch):
    """The risk table: the input's figures (computed by hand: classes 3,1,1,2,1 on a, b) and each run's,
    computed here from the engine's published class sizes."""
    run_jobs_synchronously(monkeypatch)
    toy = "a,b,s\nx,1,p\nx,1,q\nx,1,r\nx,2,s\ny,1,t\ny,2,u\ny,2,v\nz,3,w\n"
    ds = make_dataset(user, toy, "toy.csv", roles={"a": engine.Role.QUASI_IDENTIFYING,
                                                   "b": engine.Role.QUASI_IDENTIFYING, "s": engine.Role.SENSITIVE})
    client_alice.post(url(ds), {"algorithms": ["datafly", "mondrian"], "k_values": "2", "suppression_percent": 0,
                                "sensitive": "s"})
    job = Job.objects.get()
    html = client_alice.get(f"/jobs/{job.pk}/comparison/").content.decode()
    body = html[html.index('id="risk-table"'):]
    body = body[:body.index("</table>")]
    cells = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r'<tr class="(?:before|run)">(.*?)</tr>', body)]
    assert cells[0] == ["input (before)", "—", "3", "100.00%", "62.50%", "8", "62.50%"]
    table, hierarchies = datasets.dataset_table(ds)
    for name, row in zip(["Datafly", "Mondrian"], cells[1:]):
        sizes = engine.anonymize(table, hierarchies, name.lower(), k=2, sensitive="s").class_sizes
        kept = int(sizes.sum())
        assert row == [name, "2", str(int((sizes == 1).sum())), f"{1 / sizes.min():.2%}", f"{len(sizes) / kept:.2%}",
                       f"{int(sizes[1 / sizes > 0.2].sum()):,}", f"{len(sizes) / kept:.2%}"]
