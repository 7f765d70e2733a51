"""The release report of a run on a table with a person-id column (/jobs/<id>/result/release-report/): the person
id and the adversary named, each model checked per person, the risk per person and the persons suppressed,
recounted here in plain Python from the published rows and the CSV's person column."""

from __future__ import annotations

import csv
import io
import re

import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.engine import Role
from anonymizer_app.services import results, storage

pytestmark = pytest.mark.django_db

# patients with 1 to 3 tests; age and sex their own
LONG_CSV = "patient,age,sex\n" + "".join(
    f"P{p},{age},{sex}\n" for p, age, sex, n in [
        (1, 31, "f", 3), (2, 33, "f", 1), (3, 35, "f", 2), (4, 37, "m", 1), (5, 39, "m", 2), (6, 32, "m", 1),
        (7, 45, "f", 2), (8, 47, "f", 1), (9, 44, "f", 1), (10, 71, "m", 3)]
    for _ in range(n))
ROLES = {"patient": Role.PERSON, "age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING}


def test_the_release_report_counts_persons(client_alice, user):
    job = finished_job(make_dataset(user, LONG_CSV, "long.csv", roles=ROLES), k=3, suppression_limit=0.2)
    assert job.status == "succeeded", job.message
    html = client_alice.get(f"/jobs/{job.pk}/result/release-report/").content.decode()
    patient = [r["patient"] for r in csv.DictReader(io.StringIO(LONG_CSV))]
    stored = storage.read_frame(storage.output_path(job.result))
    classes: dict[tuple, set] = {}
    for age, sex, row, sup in zip(stored["age"], stored["sex"], stored[results.ROW_COLUMN],
                                  stored[results.SUPPRESSED_COLUMN]):
        if not sup:
            classes.setdefault((age, sex), set()).add(patient[row])
    published = {p for ps in classes.values() for p in ps}
    gone = set(patient) - published
    assert re.search(r'id="report-person-id"><th scope="row">Person id</th><td>patient: every model counts persons',
                     html)
    assert "knows one record of a person" in html
    checks = html[html.index('id="report-person-checks"'):]
    checks = checks[:checks.index("</table>")]
    smallest = min(len(ps) for ps in classes.values())
    assert f"3-anonymity, per person</th><td>smallest EC: {smallest}</td>" in checks and "✓ yes" in checks
    para = re.sub(r"\s+", " ", html[html.index('id="report-persons-suppressed"'):])
    gone_records = sum(1 for p in patient if p in gone)
    assert para.startswith(f'id="report-persons-suppressed">{len(gone)} of 10 persons suppressed ({gone_records} records)')
    risk = re.sub(r"\s+", " ", html[html.index('id="report-person-risk"'):])
    assert f"{len(published)} persons published, the smallest class holds {smallest} persons" in risk
