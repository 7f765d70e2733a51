"""The columns page and the person-id role (issue 28): a repeating patient id is pre-selected as "person id" at
upload, the page explains the role and says which column counts persons, and at most one column can have it."""

from __future__ import annotations

import pytest
from django.utils.html import escape
from person_helpers import patients_csv

from anonymizer_app.engine import Role
from anonymizer_app.forms import ROLE_HELP
from anonymizer_app.services import datasets

pytestmark = pytest.mark.django_db


@pytest.fixture
def patients(user):
    return datasets.create_dataset(user, patients_csv().encode(), "tests.csv", name="tests")


def url(ds) -> str:
    return f"/datasets/{ds.pk}/columns/"


def form_data(ds, **roles) -> dict:
    data = {}
    for c in ds.columns.all():
        data[f"type:{c.name}"] = c.type
        data[f"role:{c.name}"] = roles.get(c.name, c.role)
    return data


def test_the_role_is_offered_and_explained(client_alice, patients):
    html = client_alice.get(url(patients)).content.decode()
    assert '<option value="person id"' in html
    assert ROLE_HELP["person id"].startswith("several records of one person (patient id, panel member)")
    assert escape(ROLE_HELP["person id"]) in html
    assert 'class="role role-person-id"' in html  # a class name without a space


def test_upload_preselects_the_repeating_patient_id(client_alice, patients):
    assert patients.columns.get(name="patient_id").role == Role.PERSON.value
    html = client_alice.get(url(patients)).content.decode()
    assert '<option value="person id" selected>person id</option>' in html
    assert 'id="person-column-notice"' in html and '<span id="person-column-name">patient_id</span>' in html
    assert "suggested as person id (one person, several records" in html
    # the rows and persons of the reason, counted here
    ids = [line.split(",")[0] for line in patients_csv().splitlines()[1:]]
    assert f"repeats: {len(set(ids)):,} persons in {len(ids):,} rows" in html


def test_no_notice_without_a_person_id(client_alice, patients):
    client_alice.post(url(patients), form_data(patients, patient_id=Role.IDENTIFYING.value))
    assert patients.columns.get(name="patient_id").role == Role.IDENTIFYING.value
    assert 'id="person-column-notice"' not in client_alice.get(url(patients)).content.decode()


def test_the_role_is_saved(client_alice, patients):
    client_alice.post(url(patients), form_data(patients, patient_id=Role.IDENTIFYING.value))
    r = client_alice.post(url(patients), form_data(patients, patient_id=Role.PERSON.value))
    assert r.status_code == 302
    assert patients.columns.get(name="patient_id").role == Role.PERSON.value


def test_a_person_id_and_identifying_columns_alone_leave_no_output(client_alice, patients):
    roles = {c.name: Role.IDENTIFYING.value for c in patients.columns.all()}
    r = client_alice.post(url(patients), form_data(patients, **dict(roles, patient_id=Role.PERSON.value)))
    assert r.status_code == 200
    assert "every column is identifying: the output would have no column" in r.content.decode()


def test_at_most_one_person_id(client_alice, patients):
    r = client_alice.post(url(patients), form_data(patients, zip=Role.PERSON.value))
    assert r.status_code == 200
    html = r.content.decode()
    assert escape("only one column can be the person id; 'patient_id', 'zip' are: give the others the role "
                  "identifying") in html
    assert patients.columns.get(name="zip").role != Role.PERSON.value  # nothing saved
