"""SafePub from the web app: the run form runs it (the derived β and k shown live from the JSON endpoint),
the result page gives the parameters and what the guarantee means, the published rows are recounted here,
and a SafePub run's lattice and "keep this node" are refused with the reason; owner-only."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from anonymizer_helpers import run_jobs_synchronously
from pypdf import PdfReader

from anonymizer_app.engine.model.table import Role
from anonymizer_app.engine.safepub.parameters import derive
from anonymizer_app.models import Job
from anonymizer_app.services import datasets, results

pytestmark = pytest.mark.django_db


def _dataset(owner):
    rng = np.random.default_rng(2)
    n = 1500
    frame = pd.DataFrame({"age": rng.integers(20, 80, n), "sex": rng.choice(["M", "F"], n),
                          "disease": rng.choice(["flu", "<b>cold</b>"], n)})
    ds = datasets.create_dataset(owner, frame.to_csv(index=False).encode(), "people.csv", name="People")
    roles = {"age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}
    for column in ds.columns.all():
        column.role = roles[column.name].value
        column.save()
    return ds


FORM = {"algorithm": "safepub", "k": 2, "suppression_percent": 0, "sensitive": "disease",
        "model:dp:enabled": "on", "model:dp:epsilon": "3", "model:dp:delta": "0.01",
        "model:dp:search_share": "0.1", "option:safepub:steps": "10", "option:safepub:score": "loss",
        "option:safepub:seed": "8"}


def test_run_form_runs_safepub_and_the_result_page_explains_it(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = _dataset(user)
    page = client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
    assert 'id="safepub-derived"' in page and "js/safepub.js" in page and "/safepub/parameters.json" in page
    r = client_alice.post(f"/datasets/{ds.pk}/run/", FORM)
    assert r.status_code == 302, [line for line in r.content.decode().splitlines() if "error" in line]
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    s = job.result.report["search"]
    p = derive(3, 0.01)
    assert (s["k"], s["beta"], s["seed"], s["score"]) == (p.k, p.beta, 8, "loss")
    output, suppressed = results.load_output(job.result)
    published = output[~suppressed]
    assert len(published) == s["published_records"] <= s["sample_size"]
    assert published[["age", "sex", "disease"]].value_counts().min() >= p.k
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert 'id="safepub-result"' in html and f'<dd id="safepub-k">{p.k}' in html
    assert "What it does not" in html and "8 (reproducible, therefore not for release: a test or demonstration run)" in html
    assert "<b>cold</b>" not in html and "&lt;b&gt;cold&lt;/b&gt;" in html  # escaped wherever shown
    assert "limit: 1,500 records (100%)" in html  # the limit the run applied: none
    assert 'id="advice"' not in html  # no "try Mondrian / allow more suppression": the guarantee decides
    # the same seed gives the same published table
    r = client_alice.post(f"/datasets/{ds.pk}/run/", FORM)
    again = Job.objects.exclude(pk=job.pk).get()
    assert again.status == Job.SUCCEEDED
    out2, sup2 = results.load_output(again.result)
    assert out2[~sup2].reset_index(drop=True).equals(published.reset_index(drop=True))


def test_other_algorithms_refuse_the_model_from_the_form(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = _dataset(user)
    r = client_alice.post(f"/datasets/{ds.pk}/run/", {**FORM, "algorithm": "flash"})
    text = r.content.decode() if r.status_code == 200 else Job.objects.get().message
    assert "only SafePub can" in text


def test_parameters_endpoint(client_alice, client):
    r = client_alice.get("/safepub/parameters.json", {"epsilon": "1", "delta": "1e-6"})
    assert r.status_code == 200 and r["Cache-Control"] == "no-store"
    d = r.json()
    assert (d["k"], round(d["beta"], 4), d["epsilon_search"]) == (73, 0.5934, 0.1)
    r = client_alice.get("/safepub/parameters.json", {"epsilon": "<script>", "delta": "1e-6"})
    assert r.status_code == 400 and "ε (epsilon) must be a number" in r.json()["error"]
    r = client_alice.get("/safepub/parameters.json", {"epsilon": "1", "delta": "0.5"})
    assert r.status_code == 400 and "δ" in r.json()["error"]


def test_parameters_endpoint_needs_a_login(client):
    r = client.get("/safepub/parameters.json", {"epsilon": "1"})
    assert r.status_code == 302 and "login" in r["Location"]


def test_lattice_and_keep_are_refused_with_the_reason(client_alice, user, other_user, client, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = _dataset(user)
    client_alice.post(f"/datasets/{ds.pk}/run/", FORM)
    job = Job.objects.get()
    r = client_alice.get(f"/jobs/{job.pk}/lattice/")
    assert r.status_code == 409 and "spend privacy the guarantee does not account for" in r.content.decode()
    r = client_alice.post(f"/jobs/{job.pk}/lattice/keep/", {"levels": "1,1"})
    assert r.status_code == 409 and Job.objects.count() == 1
    assert client_alice.get(f"/jobs/{job.pk}/lattice/node.json", {"levels": "1,1"}).status_code == 404
    client.force_login(other_user)
    assert client.get(f"/jobs/{job.pk}/lattice/").status_code == 404
    assert client.post(f"/jobs/{job.pk}/lattice/keep/", {"levels": "1,1"}).status_code == 404


def test_job_pages_and_edit_and_rerun_carry_the_model(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = _dataset(user)
    client_alice.post(f"/datasets/{ds.pk}/run/", FORM)
    job = Job.objects.get()
    assert job.models[-1] == {"model": "differential-privacy", "epsilon": 3.0, "delta": 0.01, "search_share": 0.1}
    assert "differential privacy" in client_alice.get(f"/jobs/{job.pk}/").content.decode()
    form = client_alice.get(f"/datasets/{ds.pk}/run/", {"from": str(job.pk)}).content.decode()
    # numbers that are whole show as such on the form (l '2', ε '3'), not '3.0'
    assert 'name="model:dp:epsilon"' in form and 'value="3"' in form and 'value="safepub" selected' in form


def test_the_release_report_withholds_the_seed(client_alice, user, monkeypatch):
    """The seed decides the sample; the release report (a document that travels) withholds it in the options, the
    configuration and the command line, and says why; the owner's configuration download keeps it."""
    run_jobs_synchronously(monkeypatch)
    ds = _dataset(user)
    client_alice.post(f"/datasets/{ds.pk}/run/", {**FORM, "option:safepub:seed": "918273"})
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    html = client_alice.get(f"/jobs/{job.pk}/result/release-report/").content.decode()
    assert "918273" not in html
    assert "the SafePub seed is withheld from this report" in html and "withheld" in html
    pdf = client_alice.get(f"/jobs/{job.pk}/result/release-report.pdf")
    text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf.content)).pages)
    assert pdf.status_code == 200 and "918273" not in text and "seed is withheld" in text
