"""The run's attribute weights where solutions are chosen (issue 30): the lattice page (its header and the node
table's Weight column) and the comparison of algorithms (the form and the API take weights; every algorithm that
takes them runs with them, the others unweighted, and the page says which per row)."""

import json
import re

import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously
from api_helpers import api_for

from anonymizer_app import engine
from anonymizer_app.models import Job
from anonymizer_app.services import datasets, jobs

pytestmark = pytest.mark.django_db

WEIGHTS = "age=1,zip=0.2"  # sex: 0.5


def json_script(html: str, element_id: str):
    start = html.index(f'<script id="{element_id}" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


def test_the_lattice_page_shows_the_runs_weights(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)  # the lattice's evaluation runs at once, as a worker would
    ds = make_dataset(user)
    job = jobs.run_job(jobs.create_job(ds, "flash", 2, 0.25, "disease", options={"weights": WEIGHTS}))
    assert job.status == Job.SUCCEEDED, job.message
    qi = job.result.report["quasi_identifiers"]
    expected = {"age": "1", "zip": "0.2", "sex": "0.5"}
    html = client_alice.get(f"/jobs/{job.pk}/lattice/").content.decode()
    shown = " · ".join(f"{q} {expected[q]}" for q in qi)
    assert f'<span id="lattice-weights">attribute weights: {shown}</span>' in html
    assert json_script(html, "lattice-weights-data") == expected
    assert re.search(r'<table class="table table-compact" id="node-transformation">\s*<thead><tr><th scope="col">'
                     r'Quasi-identifier</th><th scope="col" class="num" title="[^"]*">Weight</th>', html)
    # the lattice's values were computed with them (services.lattice evaluates with the run's weights)
    data = client_alice.get(f"/jobs/{job.pk}/lattice/data.json").json()
    assert data.get("weights") == {"age": 1.0, "zip": 0.2, "sex": 0.5}

    plain = jobs.run_job(jobs.create_job(ds, "flash", 2, 0.25, "disease", options={}))
    html = client_alice.get(f"/jobs/{plain.pk}/lattice/").content.decode()
    assert 'id="lattice-weights"' not in html and ">Weight</th>" not in html
    assert json_script(html, "lattice-weights-data") == {}


ALGOS = ["datafly", "flash", "mondrian", "kmember"]


def test_the_comparison_runs_and_shows_the_weights(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    r = client_alice.post(f"/datasets/{ds.pk}/compare/", {"algorithms": ALGOS, "k_values": "2, 3",
                                                          "suppression_percent": 0, "sensitive": "disease",
                                                          "weights": WEIGHTS})
    job = Job.objects.get(kind=Job.COMPARISON)
    assert r.status_code == 302 and job.status == Job.SUCCEEDED, job.message
    assert job.options == {"algorithms": ALGOS, "k": [2, 3], "weights": WEIGHTS}
    table, hierarchies = datasets.dataset_table(ds)
    for row in job.result.report["comparison"]:
        weighted = row["algorithm"] != "datafly"
        assert row.get("weights") == (WEIGHTS if weighted else None)
        direct = engine.anonymize(table, hierarchies, row["algorithm"], k=row["k"], sensitive="disease",
                                  options={"weights": WEIGHTS} if weighted else None)
        assert row["discernibility"] == direct.metrics["discernibility"]
        assert row["ncp"] == pytest.approx(direct.metrics["ncp"], abs=1e-6)
    html = client_alice.get(f"/jobs/{job.pk}/comparison/").content.decode()
    qi = [c["name"] for c in job.config["columns"] if c["role"] == "quasi-identifying"]
    shown = " · ".join(f"{q} {dict(age='1', zip='0.2', sex='0.5')[q]}" for q in qi)
    assert f'<span id="comparison-weights">attribute weights: {shown}</span>' in html
    table_html = html[html.index('id="comparison-table"'):html.index("</table>", html.index('id="comparison-table"'))]
    assert '<th scope="col">Attribute weights</th>' in table_html
    assert table_html.count(f'<td class="weights">{shown}</td>') == 6  # flash, mondrian, kmember at k = 2, 3
    assert table_html.count('<td class="weights">not weighted (the algorithm takes no weights)</td>') == 2


def test_the_comparison_refuses_bad_weights(client_alice, user):
    ds = make_dataset(user)
    r = client_alice.post(f"/datasets/{ds.pk}/compare/", {"algorithms": ["flash"], "k_values": "2",
                                                          "suppression_percent": 0, "sensitive": "disease",
                                                          "weights": "height=1"})
    assert r.status_code == 200 and not Job.objects.filter(kind=Job.COMPARISON).exists()
    assert "weights: &#x27;height&#x27; is not a quasi-identifier" in r.content.decode()


def test_the_api_comparison_takes_weights(user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    api = api_for(user)
    r = api.post("/api/v1/comparisons/", {"dataset": ds.pk, "algorithms": ["mondrian"], "k_values": [2],
                                          "sensitive": "disease", "weights": WEIGHTS})
    assert r.status_code == 201, r.content
    job = Job.objects.get(kind=Job.COMPARISON)
    assert job.options["weights"] == WEIGHTS
    r = api.post("/api/v1/comparisons/", {"dataset": ds.pk, "algorithms": ["mondrian"], "k_values": [2],
                                          "weights": "age=2"})
    assert r.status_code == 400 and "the weight of 'age' must be from 0 to 1, got 2" in r.content.decode()


@pytest.mark.parametrize("algorithm", ["mondrian", "kmember", "oka"])
def test_the_run_form_takes_weights_for_mondrian_and_the_clustering(client_alice, user, monkeypatch, algorithm):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    data = {"algorithm": algorithm, "k": 2, "suppression_percent": 0, "sensitive": "disease"}
    page = client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
    assert f'name="option:{algorithm}:weights"' in page
    bad = client_alice.post(f"/datasets/{ds.pk}/run/", {**data, f"option:{algorithm}:weights": "age=1.5"})
    assert bad.status_code == 200 and not Job.objects.exists()
    assert "weights: the weight of &#x27;age&#x27; must be from 0 to 1, got 1.5" in bad.content.decode()
    r = client_alice.post(f"/datasets/{ds.pk}/run/", {**data, f"option:{algorithm}:weights": "age=1,zip=0"})
    job = Job.objects.get()
    assert r.status_code == 302 and job.status == Job.SUCCEEDED, job.message
    assert job.options["weights"] == "age=1,zip=0"
    table, hierarchies = datasets.dataset_table(ds)
    direct = engine.anonymize(table, hierarchies, algorithm, k=2, sensitive="disease",
                              options={"weights": "age=1,zip=0"})
    assert job.result.report["metrics"]["ncp"] == pytest.approx(direct.metrics["ncp"])
    assert job.result.report["metrics"]["discernibility"] == direct.metrics["discernibility"]
    if algorithm == "mondrian":  # the run's info reports the factors w_j q / sum w (sex 0.5: 1 / 1.5 * 3)
        assert job.result.report["search"]["weight_factors"] == pytest.approx({"age": 2.0, "zip": 0.0, "sex": 1.0})
