"""The job page with a person id (issue 28): it names the person-id column, how it leaves (removed, or its
treatment) and the adversary the job counts persons against; a job without a person id shows neither."""

from __future__ import annotations

import pytest
from anonymizer_helpers import make_dataset, set_roles
from django.utils.html import escape
from person_helpers import patients_csv

from anonymizer_app.engine import Role
from anonymizer_app.services import jobs, pseudonyms

pytestmark = pytest.mark.django_db

ROLES = {"patient_id": Role.PERSON, "age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING,
         "zip": Role.QUASI_IDENTIFYING, "result": Role.SENSITIVE}


@pytest.mark.parametrize("adversary, words", [
    ("class", "knows one record of a person: each class holds at least k persons"),
    ("all-records", "knows all of a person's records: at least k persons share every class a person's records "
                    "are in")])
def test_the_person_id_and_the_adversary_are_shown(client_alice, user, adversary, words):
    ds = make_dataset(user, patients_csv(), "tests.csv", roles=ROLES)
    job = jobs.create_job(ds, "flash", 3, 0.1, "result", person_adversary=adversary)
    html = client_alice.get(f"/jobs/{job.pk}/").content.decode()
    assert 'id="job-person"' in html
    section = html.split('id="job-person"')[1].split("</dd>")[0]
    assert '<span class="chip">patient_id</span>' in section and "removed;" in section
    assert f"<strong>{escape(words)}</strong>" in section and f"<code>{adversary}</code>" in section


def test_a_pseudonymized_person_id_is_named_with_its_treatment(client_alice, user):
    ds = make_dataset(user, patients_csv(), "tests.csv", roles=ROLES)
    key, _ = pseudonyms.create_key(user, "clinic")
    pseudonyms.save_rule(ds.columns.get(name="patient_id"), {"treatment": "pseudonym", "key": str(key.pk)})
    job = jobs.create_job(ds, "flash", 3, 0.1, "result")
    html = client_alice.get(f"/jobs/{job.pk}/").content.decode()
    section = html.split('id="job-person"')[1].split("</dd>")[0]
    assert "published as keyed pseudonym" in section and "&#x27;clinic&#x27;" in section


def test_no_person_id_no_person_row(client_alice, user):
    ds = make_dataset(user, patients_csv(), "tests.csv", roles=ROLES)
    set_roles(ds, {**ROLES, "patient_id": Role.IDENTIFYING})
    job = jobs.create_job(ds, "flash", 3, 0.1, "result")
    html = client_alice.get(f"/jobs/{job.pk}/").content.decode()
    assert 'id="job-person"' not in html and "chip-struck\">patient_id" in html
