"""Privacy models on the run form: stored on the job, passed to the engine, checked in the stored report.

Every figure the report claims is recounted here from the stored output rows and the input table
with pandas only (classes = identical QI tuples of the non-suppressed rows)."""

import math

import numpy as np
import pandas as pd
import pytest
from anonymizer_helpers import make_dataset, people_dataset, run_jobs_synchronously
from django.utils.html import escape

from anonymizer_app.engine import ALGORITHMS
from anonymizer_app.models import Job
from anonymizer_app.services import datasets, results
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db
QIS = ["age", "city_birth", "zip_code"]


def post(client, ds, models: dict, **fields):
    data = {"algorithm": "datafly", "k": 2, "suppression_percent": 0, "sensitive": "disease", **fields}
    for key, params in models.items():
        data[f"model:{key}:enabled"] = "on"
        for name, value in params.items():
            data[f"model:{key}:{name}"] = value
    return client.post(f"/datasets/{ds.pk}/run/", data)


def classes(job, qis=QIS, sensitive="disease"):
    """(class sizes, per-class counts of the sensitive values) recounted from the stored output."""
    output, suppressed = results.load_output(job.result)
    original = pd.read_csv(people_csv(), dtype=str, keep_default_na=False)
    frame = output.assign(_s=original[sensitive].to_numpy())[~suppressed]
    counts = frame.groupby(qis + ["_s"]).size().unstack(fill_value=0)
    return counts.sum(axis=1).to_numpy(), counts, original[sensitive].value_counts(normalize=True)


def people_csv():
    from anonymizer_helpers import PEOPLE_CSV

    return PEOPLE_CSV


def check(job, name):
    return next(c for c in job.result.report["model_checks"] if c["model"] == name)


@pytest.mark.parametrize("algorithm", ["datafly", "mondrian", "flash"])
def test_distinct_l_diversity_from_the_form(client_alice, user, monkeypatch, algorithm):
    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user)
    r = post(client_alice, ds, {"l": {"variant": "distinct", "l": 3, "column": "disease"}}, algorithm=algorithm)
    job = Job.objects.get()
    assert r.status_code == 302, r.content.decode()[:2000]
    assert job.models == [{"model": "distinct-l-diversity", "l": 3, "column": "disease"}]
    assert job.status == Job.SUCCEEDED, job.message
    sizes, counts, _ = classes(job)
    l_reached = int((counts > 0).sum(axis=1).min())
    assert l_reached >= 3
    assert check(job, "distinct-l-diversity")["value"] == l_reached
    assert check(job, "distinct-l-diversity")["holds"] is True
    assert check(job, "k-anonymity")["value"] == int(sizes.min()) == job.result.report["k_achieved"]
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert 'data-model="distinct-l-diversity"' in html and "distinct 3-diversity on disease" in html


def test_entropy_and_recursive_l_diversity(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user)
    post(client_alice, ds, {"l": {"variant": "entropy", "l": 2.5, "column": "disease"}})
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    _, counts, _ = classes(job)
    p = counts.to_numpy() / counts.to_numpy().sum(axis=1, keepdims=True)
    entropy = -(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0)).sum(axis=1)
    assert entropy.min() >= math.log(2.5) - 1e-9
    assert check(job, "entropy-l-diversity")["value"] == pytest.approx(math.exp(entropy.min()))
    Job.objects.all().delete()
    post(client_alice, ds, {"l": {"variant": "recursive", "l": 2, "c": 3, "column": "disease"}})
    job = Job.objects.get()
    assert job.models == [{"model": "recursive-cl-diversity", "c": 3.0, "l": 2, "column": "disease"}]
    assert job.status == Job.SUCCEEDED, job.message
    _, counts, _ = classes(job)
    r = -np.sort(-counts.to_numpy(), axis=1)
    assert (r[:, 0] < 3 * r[:, 1:].sum(axis=1)).all()
    assert check(job, "recursive-cl-diversity")["value"] == pytest.approx((r[:, 0] / r[:, 1:].sum(axis=1)).max())


@pytest.mark.parametrize("distance", ["equal", "hierarchical"])
def test_t_closeness(client_alice, user, monkeypatch, distance):
    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user)
    if distance == "hierarchical":
        text = "".join(f"{v};{'infectious' if v in ('AIDS',) else 'other'};*\n" for v in
                       ["AIDS", "Alzheimer's disease", "Anorexia", "Autism", "Cancer", "Heart disease"])
        h = Hierarchy.from_text(user, "disease hierarchy", text, "disease.csv")
        h.save()
        ds.columns.filter(name="disease").update(hierarchy=h)
    post(client_alice, ds, {"t": {"t": 0.3, "distance": distance, "column": "disease"}}, algorithm="flash")
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    _, counts, table = classes(job)
    p = counts.to_numpy() / counts.to_numpy().sum(axis=1, keepdims=True)
    q = table.reindex(counts.columns).to_numpy()
    if distance == "equal":
        emd = 0.5 * np.abs(p - q).sum(axis=1)
        assert emd.max() <= 0.3 + 1e-9
        assert check(job, "t-closeness")["value"] == pytest.approx(emd.max())
    else:
        assert check(job, "t-closeness")["value"] <= 0.3 + 1e-9
    assert check(job, "t-closeness")["holds"] is True


def test_hierarchical_t_closeness_without_a_hierarchy_is_refused(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user, hierarchies=False)
    r = post(client_alice, ds, {"t": {"t": 0.3, "distance": "hierarchical", "column": "disease"}})
    assert r.status_code == 200
    assert escape("hierarchical t-closeness needs a hierarchy for the sensitive column 'disease': bind one to it "
                  "on the columns page") in r.content.decode()
    assert Job.objects.count() == 0


def test_beta_likeness(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user)
    post(client_alice, ds, {"beta": {"beta": 1.0, "variant": "basic", "column": "disease"}}, algorithm="mondrian")
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    _, counts, table = classes(job)
    p = counts.to_numpy() / counts.to_numpy().sum(axis=1, keepdims=True)
    q = table.reindex(counts.columns).to_numpy()
    gain = ((p - q) / q).max()
    assert gain <= 1.0 + 1e-9
    assert check(job, "beta-likeness")["value"] == pytest.approx(gain)


def pipeline_population(job):
    """The job's run recomputed through the engine (the population's output, every row)."""
    from anonymizer_app.engine.run.stages import compute
    from anonymizer_app.services.runs import job_spec

    return compute(job_spec(job))


def test_delta_presence_with_a_research_column(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    text = "age,zip,research\n" + "".join(f"{20 + i % 40},{10000 + i % 7},{1 if i % 3 == 0 else 0}\n"
                                          for i in range(60))
    ds = make_dataset(user, text, "pop.csv", roles={"age": "quasi-identifying", "zip": "quasi-identifying"})
    r = post(client_alice, ds, {"delta": {"delta_min": 0.1, "delta_max": 0.6, "column": "research"}}, sensitive="")
    assert r.status_code == 302
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    output, suppressed = results.load_output(job.result)
    assert "research" not in output.columns and len(output) == 20  # the research subset, without its marker
    # δ recounted on the population's classes: each population row generalized as its published class
    population = datasets.load_frame(ds)
    result = pipeline_population(job)
    kept = result.output[~result.suppressed].assign(research=population["research"][~result.suppressed])
    share = kept.groupby(["age", "zip"])["research"].apply(lambda s: (s == "1").mean())
    assert share.min() >= 0.1 - 1e-9 and share.max() <= 0.6 + 1e-9
    assert check(job, "delta-presence")["value"] == pytest.approx([share.min(), share.max()])


def test_several_models_each_on_its_own_column(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    text = "age,zip,disease,salary\n" + "".join(
        f"{20 + i % 30},{10000 + i % 5},{['flu', 'cold', 'asthma'][i % 3]},{['1K', '2K', '3K', '4K'][i % 4]}\n"
        for i in range(120))
    ds = make_dataset(user, text, "two.csv", roles={"age": "quasi-identifying", "zip": "quasi-identifying",
                                                    "disease": "sensitive", "salary": "sensitive"})
    post(client_alice, ds, {"l": {"variant": "distinct", "l": 2, "column": "disease"},
                            "t": {"t": 0.4, "distance": "equal", "column": "salary"}}, k=3)
    job = Job.objects.get()
    assert [m["column"] for m in job.models] == ["disease", "salary"]
    assert job.status == Job.SUCCEEDED, job.message
    assert [c["holds"] for c in job.result.report["model_checks"]] == [True, True, True]
    assert set(job.result.report["attack"]) == {"disease", "salary"}


def test_a_combination_the_algorithm_cannot_honour_is_refused_with_the_engine_message(client_alice, user,
                                                                                     monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user, hierarchies=False)
    r = post(client_alice, ds, {"t": {"t": 0.2, "distance": "equal", "column": "disease"}}, algorithm="anatomy")
    able = ", ".join(a.label for a in ALGORITHMS.values() if {"k-anonymity", "t-closeness"} <= set(a.models))
    assert r.status_code == 200
    assert escape(f"Anatomy cannot honour t-closeness; algorithms that can: {able}") in r.content.decode()
    assert Job.objects.count() == 0


@pytest.mark.parametrize("params,message", [
    ({"variant": "distinct", "l": 2.5, "column": "disease"}, "l must be an integer, got 2.5"),
    ({"variant": "distinct", "l": 0, "column": "disease"}, "l must be at least 1, got 0"),
    ({"variant": "distinct", "l": 2, "column": ""}, "distinct 2-diversity: choose the column it applies to"),
])
def test_bad_model_values_are_form_errors(client_alice, user, monkeypatch, params, message):
    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user, hierarchies=False)
    r = post(client_alice, ds, {"l": params})
    assert r.status_code == 200
    assert escape(message) in r.content.decode()
    assert Job.objects.count() == 0


def test_the_form_shows_the_models(client_alice, user):
    ds = people_dataset(user, hierarchies=False)
    html = client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
    for name in ("model:l:enabled", "model:l:variant", "model:l:l", "model:l:c", "model:t:t", "model:t:distance",
                 "model:beta:beta", "model:beta:variant", "model:delta:delta_min", "model:delta:delta_max",
                 "model:delta:column"):
        assert f'name="{name}"' in html
    assert '<option value="hierarchical">hierarchical</option>' in html
