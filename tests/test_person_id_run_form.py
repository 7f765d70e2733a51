"""The run form with a person id (issue 28): the adversary choice shown only when the dataset has a person-id
column, the algorithms that count persons named, the adversary stored on the job and passed into every RunSpec
the job's paths build (the run, a kept lattice node, the comparison); an algorithm that counts records is refused
by name before anything is queued; the published classes hold k persons, counted here."""

from __future__ import annotations

import pytest
from anonymizer_helpers import queue_without_running, run_jobs_synchronously, set_roles
from django.utils.html import escape
from person_helpers import input_column, patients_csv, persons_per_class

from anonymizer_app.engine import ALGORITHMS, InputError, Role
from anonymizer_app.engine.algorithms import supporting
from anonymizer_app.engine.run import stages
from anonymizer_app.models import Job, Result
from anonymizer_app.services import comparison, datasets, jobs, lattice, results, runs

pytestmark = pytest.mark.django_db

QI = {"patient_id": Role.PERSON, "age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
      "result": Role.SENSITIVE}


@pytest.fixture
def patients(user):
    ds = datasets.create_dataset(user, patients_csv().encode(), "tests.csv", name="tests")
    set_roles(ds, QI)
    return ds


def url(ds) -> str:
    return f"/datasets/{ds.pk}/run/"


def post(client, ds, **fields):
    data = {"algorithm": "flash", "k": 3, "suppression_percent": 10, "sensitive": "result", **fields}
    return client.post(url(ds), data)


def test_the_adversary_is_asked_only_with_a_person_id(client_alice, patients):
    html = client_alice.get(url(patients)).content.decode()
    assert 'id="person-level"' in html and "Persons: patient_id is the person id" in html
    assert '<select name="person_adversary"' in html
    assert '<option value="class" selected>' in html and '<option value="all-records">' in html
    for name in supporting("person_level"):  # the algorithms that count persons, from the registry
        assert f'<span class="person-algorithm">{name}</span>' in html
        assert escape(ALGORITHMS[name].label) in html
    assert "shared by at least k persons (the person id counts them, not records)" in html
    assert '<dd id="run-person-column"><span class="chip chip-struck">patient_id</span></dd>' in html
    set_roles(patients, {**QI, "patient_id": Role.IDENTIFYING})
    html = client_alice.get(url(patients)).content.decode()
    assert 'id="person-level"' not in html and '<select name="person_adversary"' not in html
    assert "shared by at least k records" in html and 'id="run-person-column"' not in html


def test_the_adversary_is_stored_and_passed_into_the_spec(client_alice, patients, monkeypatch):
    queue_without_running(monkeypatch)
    r = post(client_alice, patients, person_adversary="all-records")
    assert r.status_code == 302, r.content.decode()[:3000]
    job = Job.objects.get()
    assert job.person_adversary == "all-records"
    spec = runs.job_spec(job)
    assert spec.person_adversary == "all-records" and spec.table.person == "patient_id"
    # a node kept from the lattice runs with the same adversary, or is refused by name at once when the chosen
    # transformation does not count persons
    if ALGORITHMS["full-domain"].person_level:
        assert lattice.keep_node(job, "0,0,0").person_adversary == "all-records"
    else:
        with pytest.raises(InputError, match="Chosen transformation counts records, not people"):
            lattice.keep_node(job, "0,0,0")


def test_the_default_adversary_is_class(client_alice, patients, monkeypatch):
    queue_without_running(monkeypatch)
    assert post(client_alice, patients).status_code == 302
    assert Job.objects.get().person_adversary == "class"


def test_k_above_the_persons_is_named_before_the_run(client_alice, patients, monkeypatch):
    queue_without_running(monkeypatch)
    persons = len(set(input_column(patients_csv(), "patient_id")))  # counted here
    assert persons < patients.n_rows  # k between the two: enough records, too few persons
    r = post(client_alice, patients, k=persons + 1)
    assert r.status_code == 200 and Job.objects.count() == 0
    assert escape(f"k={persons + 1} is larger than the dataset's {persons:,} persons (person id 'patient_id'): "
                  f"lower k to at most {persons:,}") in r.content.decode()
    assert post(client_alice, patients, k=persons, suppression_percent=100).status_code == 302


def test_an_unknown_adversary_is_refused(client_alice, patients, monkeypatch):
    queue_without_running(monkeypatch)
    r = post(client_alice, patients, person_adversary="everything")
    assert r.status_code == 200 and Job.objects.count() == 0
    assert "everything is not an adversary; choose class or all-records" in r.content.decode()


def test_an_algorithm_that_counts_records_is_refused_by_name(client_alice, patients, monkeypatch):
    queue_without_running(monkeypatch)
    records_only = next(a for a in ALGORITHMS.values() if not a.person_level and not a.republishes
                        and not a.decides_suppression)
    r = post(client_alice, patients, algorithm=records_only.name)
    assert r.status_code == 200 and Job.objects.count() == 0
    assert escape(f"{records_only.label} counts records, not people") in r.content.decode()


@pytest.mark.parametrize("adversary", ["class", "all-records"])
def test_the_published_classes_hold_k_persons(client_alice, patients, monkeypatch, adversary):
    run_jobs_synchronously(monkeypatch)
    k = 3
    r = post(client_alice, patients, k=k, person_adversary=adversary)
    assert r.status_code == 302
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    frame, suppressed = results.load_output(Result.objects.get(job=job))
    assert "patient_id" not in frame.columns  # removed like an identifier
    text = patients_csv()
    person = input_column(text, "patient_id")
    rows = frame.attrs["rows"][~suppressed].tolist()
    published = list(frame.loc[~suppressed, ["age", "sex", "zip"]].itertuples(index=False, name=None))
    classes = persons_per_class(published, rows, person)
    assert classes and min(len(p) for p in classes.values()) >= k
    # a person's records are suppressed together: no person is both published and suppressed
    gone = {person[r] for r in frame.attrs["rows"][suppressed].tolist()}
    assert not gone & {person[r] for r in rows}


def test_the_comparison_passes_the_adversary_to_every_run(user, patients, monkeypatch):
    seen = []
    compute = stages.compute

    def spy(spec, progress=None):
        seen.append((spec.algorithm, spec.person_adversary))
        return compute(spec, progress)

    monkeypatch.setattr(stages, "compute", spy)
    records_only = next(a.name for a in ALGORITHMS.values() if not a.person_level and not a.republishes
                        and not a.decides_suppression)
    job = comparison.create_comparison(patients, ["flash", records_only], [2], 0.1, "result",
                                       person_adversary="all-records")
    assert job.person_adversary == "all-records"
    comparison.run_comparison(job)
    assert ("flash", "all-records") in seen
    rows = {row["algorithm"]: row for row in Result.objects.get(job=job).report["comparison"]}
    assert rows["flash"]["verified"] and not rows["flash"]["error"]
    assert "counts records, not people" in rows[records_only]["error"]


def test_a_run_again_keeps_the_adversary(client_alice, patients, monkeypatch):
    queue_without_running(monkeypatch)
    post(client_alice, patients, person_adversary="all-records")
    job = Job.objects.get()
    html = client_alice.get(url(patients) + f"?from={job.pk}").content.decode()
    assert '<option value="all-records" selected>' in html


def test_services_refuse_two_person_ids(patients):
    set_roles(patients, {**QI, "result": Role.PERSON})
    with pytest.raises(Exception, match="only one column can be the person id"):
        jobs.create_job(patients, "flash", 2, 0.1, "result")
