"""The comparison page with a person id (issue 28): the adversary is asked only when the dataset has a person-id
column, stored on the comparison job, and every run of the comparison counts persons against it (an algorithm
that counts records is a row with its refusal)."""

from __future__ import annotations

import pytest
from anonymizer_helpers import queue_without_running, run_jobs_synchronously, set_roles
from person_helpers import patients_csv

from anonymizer_app.engine import ALGORITHMS, Role
from anonymizer_app.models import Job, Result
from anonymizer_app.services import datasets

pytestmark = pytest.mark.django_db

ROLES = {"patient_id": Role.PERSON, "age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING,
         "zip": Role.QUASI_IDENTIFYING, "result": Role.SENSITIVE}


@pytest.fixture
def patients(user):
    ds = datasets.create_dataset(user, patients_csv().encode(), "tests.csv", name="tests")
    set_roles(ds, ROLES)
    return ds


def url(ds) -> str:
    return f"/datasets/{ds.pk}/compare/"


def test_the_adversary_is_asked_only_with_a_person_id(client_alice, patients):
    html = client_alice.get(url(patients)).content.decode()
    assert '<select name="person_adversary"' in html and "&#x27;patient_id&#x27; is the person id" in html
    set_roles(patients, {**ROLES, "patient_id": Role.IDENTIFYING})
    assert '<select name="person_adversary"' not in client_alice.get(url(patients)).content.decode()


def test_every_run_counts_persons_against_the_adversary(client_alice, patients, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    records_only = next(a for a in ALGORITHMS.values() if not a.person_level and not a.republishes
                        and not a.decides_suppression)
    r = client_alice.post(url(patients), {"algorithms": ["flash", records_only.name], "k_values": "2, 3",
                                          "suppression_percent": 10, "sensitive": "result",
                                          "person_adversary": "all-records"})
    assert r.status_code == 302
    job = Job.objects.get()
    assert job.person_adversary == "all-records" and job.status == Job.SUCCEEDED, job.message
    rows = Result.objects.get(job=job).report["comparison"]
    assert [(row["algorithm"], row["k"], row["verified"]) for row in rows if row["algorithm"] == "flash"] == \
        [("flash", 2, True), ("flash", 3, True)]
    assert all(f"{records_only.label} counts records, not people" in row["error"]
               for row in rows if row["algorithm"] == records_only.name)


def test_an_unknown_adversary_is_refused(client_alice, patients, monkeypatch):
    queue_without_running(monkeypatch)
    r = client_alice.post(url(patients), {"algorithms": ["flash"], "k_values": "2", "suppression_percent": 10,
                                          "person_adversary": "everyone"})
    assert r.status_code == 200 and Job.objects.count() == 0
    assert "everyone is not an adversary; choose class or all-records" in r.content.decode()
