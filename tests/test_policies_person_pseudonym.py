"""A release policy remembers a person id published as a keyed pseudonym (issue 28): saved from a job whose person
id is pseudonymized, the policy's rule names the person-id column; applied to the next batch, the run publishes
the same person's records under the same pseudonym (the HMAC computed here with hmac) and still holds k distinct
persons per class (counted in plain Python from the published rows and the input's person column)."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from anonymizer_helpers import set_roles
from person_helpers import input_column, patients_csv, persons_per_class

from anonymizer_app.engine import Role
from anonymizer_app.services import datasets, jobs, pseudonyms, results
from policies import policy_file as pf
from policies import services

pytestmark = pytest.mark.django_db

ROLES = {"patient_id": Role.PERSON, "age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING,
         "zip": Role.QUASI_IDENTIFYING, "result": Role.SENSITIVE}
K = 3


def test_a_policy_keeps_the_person_id_pseudonym(user):
    key, secret = pseudonyms.create_key(user, "clinic")
    first = datasets.create_dataset(user, patients_csv(seed=3).encode(), "q1.csv", name="q1")
    set_roles(first, ROLES)
    pseudonyms.save_rule(first.columns.get(name="patient_id"), {"treatment": "pseudonym", "key": str(key.pk)})
    job = jobs.run_job(jobs.create_job(first, "flash", K, 0.1, "result"))
    assert job.status == "succeeded", job.message
    version = services.save_from_job(job, "quarterly")
    config = pf.validate(version.config)
    assert [r["column"] for r in config["identifiers"]] == ["patient_id"]

    text = patients_csv(seed=4)
    second = datasets.create_dataset(user, text.encode(), "q2.csv", name="q2")
    applied = jobs.run_job(services.apply_policy(second, version))
    assert applied.status == "succeeded", applied.message
    frame, suppressed = results.load_output(applied.result)
    person = input_column(text, "patient_id")
    rows = frame.attrs["rows"][~suppressed].tolist()
    published = frame.loc[~suppressed]
    expected = [hmac.new(secret, person[r].encode(), hashlib.sha256).hexdigest()[:16] for r in rows]
    assert list(published["patient_id"]) == expected
    classes = persons_per_class(list(published[["age", "sex", "zip"]].itertuples(index=False, name=None)), rows,
                                person)
    assert min(len(p) for p in classes.values()) >= K
