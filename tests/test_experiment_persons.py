"""The homogeneity experiment on a dataset with a person id (issue 28): its runs count persons (against the adversary
who knows one class, a run's default), so k reached is the smallest number of distinct persons in a published class
and the persons in homogeneous classes are counted too; both recounted here in plain Python from the published rows
of the same run and the input's person column. An algorithm that counts records is refused by name, k above the
persons is named, and the result page says what it counts."""

from __future__ import annotations

from collections import defaultdict

import pytest
from anonymizer_helpers import set_roles
from person_helpers import input_column, patients_csv

from anonymizer_app.engine import ALGORITHMS, InputError, Role
from anonymizer_app.engine.measure import experiments
from anonymizer_app.engine.run.stages import anonymize
from anonymizer_app.models import Job
from anonymizer_app.services import datasets, jobs
from anonymizer_app.services import experiment as experiment_service

pytestmark = pytest.mark.django_db

ROLES = {"patient_id": Role.PERSON, "age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING,
         "zip": Role.QUASI_IDENTIFYING, "result": Role.SENSITIVE}
QI = ["age", "sex", "zip"]


@pytest.fixture
def patients(user):
    ds = datasets.create_dataset(user, patients_csv().encode(), "tests.csv", name="tests")
    set_roles(ds, ROLES)
    return ds


def _recount(ds, k: int) -> dict:
    """The run's published rows (the same run as the experiment's), counted per person in plain Python."""
    table, hierarchies = datasets.dataset_table(ds)
    r = anonymize(table, hierarchies, "flash", k=k, suppression_limit=0.1, sensitive="result")
    person, result = input_column(patients_csv(), "patient_id"), input_column(patients_csv(), "result")
    persons: dict[tuple, set] = defaultdict(set)
    values: dict[tuple, set] = defaultdict(set)
    records: dict[tuple, int] = defaultdict(int)
    for row, (cells, hidden) in enumerate(zip(r.output[QI].itertuples(index=False, name=None), r.suppressed)):
        if hidden:
            continue
        persons[cells].add(person[row])
        values[cells].add(result[row])
        records[cells] += 1
    homogeneous = set().union(*(persons[c] for c in persons if len(values[c]) == 1))
    return {"k_reached": min(len(p) for p in persons.values()), "k_reached_records": min(records.values()),
            "homogeneous_persons": len(homogeneous), "persons": len(set(person))}


def test_the_experiment_counts_persons(client_alice, user, patients):
    job = experiment_service.create_experiment(patients, [], 0, True, [2, 4], "flash", 0.1, "result")
    job = jobs.run_job(job)
    assert job.status == Job.SUCCEEDED, job.message
    rows = job.result.report["experiment"]
    for row in rows:
        assert row["counted"] == "persons" and row["person_id"] == "patient_id"
        expected = _recount(patients, row["k"])
        assert {f: row[f] for f in expected} == expected
        assert row["k_reached"] >= row["k"]
    html = client_alice.get(f"/jobs/{job.pk}/experiment/").content.decode()
    assert 'id="experiment-persons"' in html and "With the person id patient_id the runs count persons" in html
    assert "Persons in them" in html
    assert "homogeneous_persons" in experiment_service.experiment_csv(rows).splitlines()[0]


def test_records_only_algorithms_and_k_above_the_persons_are_refused(patients):
    records_only = next(info for info in ALGORITHMS.values() if not info.person_level)
    with pytest.raises(InputError, match=f"{records_only.label} counts records, not people"):
        experiment_service.create_experiment(patients, [], 0, True, [2], records_only.name, 0.0, "result")
    persons = len(set(input_column(patients_csv(), "patient_id")))
    with pytest.raises(InputError, match=f"larger than the dataset's {persons:,} persons"):
        experiment_service.create_experiment(patients, [], 0, True, [persons + 1], "flash", 0.0, "result")


def test_a_table_without_a_person_id_counts_records(user):
    frame = experiments.generate_people(200, 1)
    row = experiments.homogeneity_vs_k(experiments.people_table(frame), experiments.people_hierarchies(), [3],
                                       "flash", 0.0, experiments.SENSITIVE)[0]
    assert row["counted"] == "records" and "homogeneous_persons" not in row
