"""The result page of a run on a table with a person-id column (/jobs/<id>/result/): the persons counted where
persons are counted (smallest class in persons with its records, persons suppressed with their records, the
person-id column and the adversary named, each model per person), recounted here in plain Python from the
published rows, their dataset rows and the CSV's person column."""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.engine import Role
from anonymizer_app.services import results, storage

pytestmark = pytest.mark.django_db


def longitudinal_csv(persons: int = 40, seed: int = 5) -> str:
    """Lab tests of ``persons`` patients, 1 to 4 each: the patient id repeats; age and sex are the patient's own."""
    rng = np.random.default_rng(seed)
    lines = ["patient,age,sex,result"]
    for p in range(persons):
        age, sex = int(rng.integers(20, 80)), str(rng.choice(["f", "m"]))
        for _ in range(int(rng.integers(1, 5))):
            lines.append(f"P{p:03d},{age},{sex},{rng.choice(['neg', 'pos'])}")
    return "\n".join(lines) + "\n"


ROLES = {"patient": Role.PERSON, "age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING,
         "result": Role.SENSITIVE}


def published_persons(job, text: str) -> tuple[dict[tuple, set], dict[tuple, int], set, int]:
    """Published (age, sex) class -> its patients and its records; the suppressed patients; suppressed records."""
    patient = [row["patient"] for row in csv.DictReader(io.StringIO(text))]
    path = storage.output_path(job.result)
    stored = storage.read_frame(path)
    rows = stored[results.ROW_COLUMN].to_numpy()
    suppressed = stored[results.SUPPRESSED_COLUMN].to_numpy(dtype=bool)
    classes: dict[tuple, set] = {}
    records: dict[tuple, int] = {}
    for age, sex, row, sup in zip(stored["age"], stored["sex"], rows, suppressed):
        if sup:
            continue
        classes.setdefault((age, sex), set()).add(patient[row])
        records[(age, sex)] = records.get((age, sex), 0) + 1
    published = {p for ps in classes.values() for p in ps}
    gone = set(patient) - published
    return classes, records, gone, sum(1 for p in patient if p in gone)


def text_of(html: str, element_id: str) -> str:
    m = re.search(rf'id="{element_id}"[^>]*>(.*?)</div></div>', html, re.S)
    assert m, element_id
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", m.group(1))).strip()


def test_the_result_page_counts_persons(client_alice, user):
    text = longitudinal_csv()
    job = finished_job(make_dataset(user, text, "tests.csv", roles=ROLES), k=3, suppression_limit=0.1)
    assert job.status == "succeeded", job.message
    report = job.result.report
    assert report["persons"]["column"] == "patient"
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert 'id="persons"' in html
    assert '<strong id="person-column">patient</strong>' in html
    assert "knows one record of a person" in html  # the default adversary, named
    classes, records, gone, gone_records = published_persons(job, text)
    smallest = min(classes, key=lambda c: (len(classes[c]), records[c]))
    fewest = len(classes[smallest])
    assert fewest >= 3  # 3-anonymous per person
    # the smallest class in persons, with its records (ties between classes of as many persons: any of their records)
    tied = {records[c] for c in classes if len(classes[c]) == fewest}
    card = text_of(html, "stat-persons-smallest")
    m = re.fullmatch(r"Smallest class (\d+) persons? \((\d+) records?\)", card)
    assert m and int(m.group(1)) == fewest and int(m.group(2)) in tied, card
    card = text_of(html, "stat-persons-suppressed")
    assert card.startswith(f"Suppressed {len(gone)} person{'s' if len(gone) != 1 else ''} suppressed "
                           f"({gone_records} record{'s' if gone_records != 1 else ''})"), card
    # the suppression card's limit counts persons: floor(0.1 x 40) = 4
    note = re.search(r'id="stat-suppressed".*?<div class="stat-note">(.*?)</div>', html, re.S)
    assert note and note.group(1).startswith(f"limit: 4 persons (10% of 40; {len(gone)} person"), note
    published = {p for ps in classes.values() for p in ps}
    assert text_of(html, "stat-persons-published").startswith(f"Persons published {len(published)} of 40")
    # each model per person: k-anonymity's smallest class counted in persons
    k_card = re.search(r'id="person-model-\d+" data-model="k-anonymity">(.*?)</div>\s*</div>', html, re.S)
    assert k_card and "holds" in k_card.group(1)
    assert f'<span class="model-value">{fewest}</span>' in k_card.group(1)
    # the risk per person: the adversary knows all of a person's records
    sets: dict[str, set] = {}
    for c, ps in classes.items():
        for p in ps:
            sets.setdefault(p, set()).add(c)
    sharing = [sum(1 for q in sets.values() if s <= q) for s in sets.values()]
    highest = max(1 / n for n in sharing)
    assert text_of(html, "stat-persons-risk").startswith(
        f"Highest prosecutor risk per person {float(f'{highest * 100:.3g}'):g}%")


def test_a_table_without_a_person_id_has_no_persons_section(client_alice, user):
    text = longitudinal_csv(10)
    job = finished_job(make_dataset(user, text, "tests.csv", roles={**ROLES, "patient": Role.INSENSITIVE}), k=2)
    assert "persons" not in job.result.report
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert 'id="persons"' not in html
