"""Identifier suggestions on the web and the API (services/identifier_suggestions.py over
engine/model/identifier_detection/): pre-selected at upload, explained on the columns page, listed on the
risk page and the API's columns, and a run that would publish one as it is held by the pre-flight until the
user confirms it (run form / API ``publish_as_is``) or sets its role."""

from __future__ import annotations

import re

import numpy as np
import pytest
from anonymizer_helpers import queue_without_running, set_roles
from api_helpers import api_for
from django.utils.html import escape

from anonymizer_app.engine import Role
from anonymizer_app.models import Job
from anonymizer_app.services import datasets

pytestmark = pytest.mark.django_db

FIRST = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal", "Ida", "Jon", "Kim", "Lea", "Max", "Ned"]
LAST = ["Stark", "Lannister", "Tully", "Arryn", "Tyrell", "Martell", "Greyjoy", "Baratheon", "Frey", "Bolton",
        "Mormont", "Reed"]


def clinical_csv(n: int = 400) -> bytes:
    """Lab tests: a patient id that repeats across a patient's tests, fake names, a notes column with e-mails."""
    rng = np.random.default_rng(7)
    lines = ["subject_id,fake_first_name,fake_last_name,gender,age,clinic_name,result,notes"]
    for i in range(n):
        note = f"contact {FIRST[i % 14].lower()}.{i}@example.org" if i % 10 == 0 else "no remarks"
        lines.append(",".join([str(rng.integers(1000, 1300)), FIRST[int(rng.integers(0, 14))],
                               LAST[int(rng.integers(0, 12))], str(rng.choice(["female", "male"])),
                               str(rng.integers(1, 90)), str(rng.choice(["lab", "ward a", "drive thru"])),
                               str(rng.choice(["negative", "positive"])), note]))
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def clinical(user):
    return datasets.create_dataset(user, clinical_csv(), "covid_tests.csv", name="tests")


def roles_of(ds) -> dict:
    return {c.name: c.role for c in ds.columns.all()}


def test_upload_preselects_the_patient_id_and_the_names(clinical):
    roles = roles_of(clinical)
    assert {c for c, r in roles.items() if r == Role.IDENTIFYING.value} == {"fake_first_name", "fake_last_name"}
    assert roles["subject_id"] == Role.PERSON.value  # repeats across a patient's tests: the person id
    assert roles["gender"] == roles["clinic_name"] == roles["notes"] == Role.INSENSITIVE.value


def test_columns_page_says_why(client_alice, clinical):
    html = client_alice.get(f"/datasets/{clinical.pk}/columns/").content.decode()
    assert 'id="suggestion-0"' in html and "repeats across records" in html and "person id" in html
    assert escape("name looks like a surname column; 12 distinct values") in html
    hint = re.search(r'id="free-text-\d+">([^<]*)<', html).group(1)
    assert hint.startswith("free text: of 400 values looked at, 40 with an e-mail address (e.g. ")
    assert re.search(r"[a-z]\*\*\*@e\*\*\*\.org", hint) and "@example.org" not in hint  # masked


def _qi(ds, **extra):
    set_roles(ds, {"age": Role.QUASI_IDENTIFYING, "gender": Role.QUASI_IDENTIFYING, "result": Role.SENSITIVE,
                   **extra})


RUN = {"algorithm": "datafly", "k": 2, "suppression_percent": 25, "sensitive": "result"}


def test_run_is_held_until_each_identifier_is_confirmed(client_alice, clinical, monkeypatch):
    queue_without_running(monkeypatch)
    _qi(clinical, subject_id=Role.IDENTIFYING)  # the names are left insensitive: published as they are
    r = client_alice.post(f"/datasets/{clinical.pk}/run/", RUN)
    html = r.content.decode()
    assert r.status_code == 200 and Job.objects.count() == 0
    assert escape("Column 'fake_first_name' looks like a direct identifier (name looks like a first name column") \
        in html
    assert "Publish column <strong>fake_last_name</strong> as is" in html
    problems = client_alice.post(f"/datasets/{clinical.pk}/run/check/", RUN).json()["problems"]
    assert [p["field"] for p in problems] == ["publish_as_is", "publish_as_is"]
    # one confirmed: still held for the other
    problems = client_alice.post(f"/datasets/{clinical.pk}/run/check/",
                                 {**RUN, "publish_as_is": ["fake_first_name"]}).json()["problems"]
    assert len(problems) == 1 and "'fake_last_name'" in problems[0]["message"]
    r = client_alice.post(f"/datasets/{clinical.pk}/run/",
                          {**RUN, "publish_as_is": ["fake_first_name", "fake_last_name"]})
    assert r.status_code == 302 and Job.objects.count() == 1


def test_setting_the_role_releases_the_run(client_alice, clinical, monkeypatch):
    queue_without_running(monkeypatch)
    _qi(clinical, subject_id=Role.IDENTIFYING, fake_first_name=Role.IDENTIFYING, fake_last_name=Role.IDENTIFYING)
    assert client_alice.post(f"/datasets/{clinical.pk}/run/check/", RUN).json()["problems"] == []
    r = client_alice.post(f"/datasets/{clinical.pk}/run/", RUN)
    assert r.status_code == 302 and Job.objects.count() == 1


def test_api_lists_suggestions_and_refuses_until_confirmed(user, clinical, monkeypatch):
    queue_without_running(monkeypatch)
    _qi(clinical)  # every identifier left insensitive
    api = api_for(user)
    columns = {c["name"]: c for c in api.get(f"/api/v1/datasets/{clinical.pk}/columns/").json()}
    s = columns["subject_id"]["identifier_suggestion"]
    assert (s["confidence"], s["suggested_role"], s["person_id"], s["role"]) == ("high", "person id", True,
                                                                                  "person id")
    assert columns["gender"]["identifier_suggestion"] is None
    assert columns["notes"]["free_text_identifiers"]["emails"] == 40
    r = api.post("/api/v1/runs/", {"dataset": clinical.pk, **RUN})
    assert r.status_code == 400, r.content
    assert "'subject_id'" in r.json()["detail"] and "publish_as_is" in r.json()["detail"]
    r = api.post("/api/v1/runs/", {"dataset": clinical.pk, **RUN,
                                   "publish_as_is": ["subject_id", "fake_first_name", "fake_last_name"]})
    assert r.status_code == 201, r.content


def test_risk_page_lists_the_suggestions(client_alice, clinical):
    html = client_alice.get(f"/datasets/{clinical.pk}/risk/").content.decode()
    assert 'id="identifier-suggestions"' in html
    assert "subject_id" in html and "repeats across records" in html and "Identifier suggestions: none" not in html
