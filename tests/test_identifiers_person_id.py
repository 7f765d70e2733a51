"""The identifiers page and its API with a person id (issue 28): the person-id column is offered the treatments
of an identifying column (remove, keyed pseudonym, mask, surrogate), the page says that a keyed pseudonym keeps a
person's records linkable, and a run publishing the person id as a keyed pseudonym still publishes classes of k
persons (recounted here from the published rows and the input's person column) whose pseudonyms are the HMAC of
the input ids (computed here with hmac)."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from anonymizer_helpers import make_dataset
from api_helpers import api_for
from person_helpers import input_column, patients_csv, persons_per_class

from anonymizer_app.engine import Role
from anonymizer_app.services import jobs, pseudonyms, results

pytestmark = pytest.mark.django_db

ROLES = {"patient_id": Role.PERSON, "age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING,
         "zip": Role.QUASI_IDENTIFYING, "result": Role.SENSITIVE}
K = 3


def _hmac(secret: bytes, value: str) -> str:
    return hmac.new(secret, value.encode(), hashlib.sha256).hexdigest()[:16]


def _run(dataset):
    job = jobs.create_job(dataset, "flash", K, 0.1, "result")
    pseudonyms.snapshot(job)
    return jobs.run_job(job)


def test_the_page_offers_the_person_id_and_a_pseudonym_links_records(client_alice, user):
    ds = make_dataset(user, patients_csv(), "tests.csv", roles=ROLES)
    key, secret = pseudonyms.create_key(user, "clinic")
    page = client_alice.get(f"/datasets/{ds.pk}/identifiers/").content.decode()
    assert "patient_id" in page and 'id="person-id-help"' in page
    assert "keeps each\n    person's records linkable in the release" in page
    position = ds.columns.get(name="patient_id").position
    r = client_alice.post(f"/datasets/{ds.pk}/identifiers/",
                          {f"treatment-{position}": "pseudonym", f"key-{position}": str(key.pk)})
    assert r.status_code == 302
    assert ds.columns.get(name="patient_id").identifier_rule["treatment"] == "pseudonym"

    job = _run(ds)
    assert job.status == "succeeded", job.message
    frame, suppressed = results.load_output(job.result)
    person = input_column(patients_csv(), "patient_id")
    rows = frame.attrs["rows"][~suppressed].tolist()
    published = frame.loc[~suppressed]
    assert list(published["patient_id"]) == [_hmac(secret, person[r]) for r in rows]
    # the gate's person counting is unchanged: every published class holds >= K distinct input persons
    tuples = list(published[["age", "sex", "zip"]].itertuples(index=False, name=None))
    classes = persons_per_class(tuples, rows, person)
    assert min(len(p) for p in classes.values()) >= K
    # and a reader sees the same persons through the pseudonyms (one pseudonym per person: records linkable)
    by_token = persons_per_class(tuples, list(range(len(rows))), list(published["patient_id"]))
    assert {c: len(p) for c, p in by_token.items()} == {c: len(p) for c, p in classes.items()}


def test_a_mask_and_removal_of_the_person_id(client_alice, user):
    ds = make_dataset(user, patients_csv(), "tests.csv", roles=ROLES)
    position = ds.columns.get(name="patient_id").position
    r = client_alice.post(f"/datasets/{ds.pk}/identifiers/",
                          {f"treatment-{position}": "mask", f"prefix-{position}": "1", f"char-{position}": "#"})
    assert r.status_code == 302
    job = _run(ds)
    assert job.status == "succeeded", job.message
    frame, suppressed = results.load_output(job.result)
    assert set(frame.loc[~suppressed, "patient_id"]) == {"P####"}
    r = client_alice.post(f"/datasets/{ds.pk}/identifiers/", {f"treatment-{position}": "remove"})
    assert r.status_code == 302 and ds.columns.get(name="patient_id").identifier_rule == {}
    job = _run(ds)
    frame, _ = results.load_output(job.result)
    assert "patient_id" not in frame.columns


def test_the_api_treats_the_person_id(user):
    ds = make_dataset(user, patients_csv(), "tests.csv", roles=ROLES)
    key, _ = pseudonyms.create_key(user, "clinic")
    api = api_for(user)
    url = f"/api/v1/datasets/{ds.pk}/identifiers/"
    assert api.get(url).json()["columns"] == [{"column": "patient_id", "treatment": "remove"}]
    r = api.put(url, {"columns": [{"column": "patient_id", "treatment": "pseudonym", "key": key.pk}]})
    assert r.status_code == 200, r.content
    assert r.json()["columns"][0]["treatment"] == "pseudonym" and r.json()["columns"][0]["key"] == key.pk
    r = api.put(url, {"columns": [{"column": "age", "treatment": "mask"}]})
    assert r.status_code == 400
    assert "only identifying and person-id columns are treated" in r.json()["detail"]
    # a column that is neither identifying nor the person id is never offered
    ds.columns.filter(name="patient_id").update(role=Role.INSENSITIVE.value)
    assert api.get(url).json()["columns"] == []
