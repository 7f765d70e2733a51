"""Policies and the person id (issue 28): a policy remembers the person column (its role) and what the adversary
knows of a person (``person_adversary``); saving a run keeps both, applying one gives the job both, and the CLI's
policy run counts persons (checked by a recount in plain Python over OUT and the input)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from anonymizer_helpers import set_roles
from cli_helpers import run_command
from person_helpers import patients_csv, persons_per_class

from anonymizer_app.engine import Role
from anonymizer_app.services import datasets, jobs
from policies import policy_file as pf
from policies import services
from policies.policy_file import PolicyError

ROLES = {"patient_id": Role.PERSON, "age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING,
         "zip": Role.QUASI_IDENTIFYING, "result": Role.SENSITIVE}


def policy(**extra) -> dict:
    return {"format": "anonymizer-policy", "version": 1,
            "columns": [{"name": "seq", "role": "insensitive"},
                        {"name": "patient_id", "role": "person id"},
                        {"name": "age", "role": "quasi-identifying", "type": "integer"},
                        {"name": "sex", "role": "quasi-identifying"}, {"name": "zip", "role": "quasi-identifying"},
                        {"name": "result", "role": "sensitive"}],
            "algorithm": "flash", "k": 3, "suppression_limit": 0.1, "sensitive": "result", **extra}


def test_a_person_id_policy_has_the_adversary_after_sensitive():
    p = pf.validate(policy())
    assert list(p) == ["format", "version", "name", "description", "columns", "algorithm", "options", "k",
                       "suppression_limit", "sensitive", "person_adversary", "models", "publishing", "identifiers"]
    assert p["person_adversary"] == "class" and pf.person_adversary(p) == "class"
    assert pf.validate(policy(person_adversary="all-records"))["person_adversary"] == "all-records"
    assert pf.loads(pf.dumps(p)) == p  # round trip


def test_a_policy_without_persons_has_no_adversary_field():
    p = policy()
    p["columns"][1]["role"] = "identifying"
    assert "person_adversary" not in pf.validate(p) and pf.person_adversary(pf.validate(p)) == "class"


@pytest.mark.parametrize("change, message", [
    ({"person_adversary": "everyone"}, "person_adversary: expected one of class, all-records, got 'everyone'"),
    ({"columns": [{"name": "a", "role": "person id"}, {"name": "b", "role": "person id"},
                  {"name": "c", "role": "quasi-identifying"}], "sensitive": None},
     "columns: only one column can be the person id; 'a', 'b' are"),
    ({"columns": [{"name": "a", "role": "identifying"}, {"name": "c", "role": "quasi-identifying"}],
      "sensitive": None, "person_adversary": "class"},
     "person_adversary: applies to a policy with a column of role 'person id'"),
])
def test_bad_person_fields_are_named(change, message):
    with pytest.raises(PolicyError) as exc:
        pf.validate(dict(policy(), **change), "policy file")
    assert str(exc.value) == f"policy file: {message}"


@pytest.mark.django_db
def test_saved_from_a_run_and_applied_to_a_new_batch(user):
    first = datasets.create_dataset(user, patients_csv(seed=3).encode(), "q1.csv", name="q1")
    set_roles(first, ROLES)
    job = jobs.run_job(jobs.create_job(first, "flash", 3, 0.1, "result", person_adversary="all-records"))
    assert job.status == "succeeded", job.message
    version = services.save_from_job(job, "tests quarterly")
    config = pf.validate(version.config)
    assert {c["name"]: c["role"] for c in config["columns"]}["patient_id"] == "person id"
    assert config["person_adversary"] == "all-records"
    assert json.loads(services.export_text(version))["person_adversary"] == "all-records"

    second = datasets.create_dataset(user, patients_csv(seed=4).encode(), "q2.csv", name="q2")
    applied = services.apply_policy(second, version)
    assert applied.person_adversary == "all-records"
    assert second.columns.get(name="patient_id").role == "person id"


# ---- the CLI's policy run --------------------------------------------------------------------------------------
@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    lines = patients_csv().splitlines()
    table = tmp_path / "tests.csv"
    table.write_text("\n".join([f"seq,{lines[0]}"] + [f"s{i:05d},{x}" for i, x in enumerate(lines[1:])]) + "\n")
    path = tmp_path / "policy.json"
    path.write_text(pf.dumps(pf.validate(policy(person_adversary="all-records"))))
    return table, path


def test_the_cli_policy_run_counts_persons(files, tmp_path):
    table, path = files
    out = tmp_path / "out.csv"
    code, message, _ = run_command("anonymize", table, "--policy", path, "--out", out, "--quiet")
    assert code == 0, message
    source = list(csv.DictReader(io.StringIO(table.read_text())))
    person_of = {r["seq"]: r["patient_id"] for r in source}
    published = list(csv.DictReader(io.StringIO(out.read_text())))
    assert published and "patient_id" not in published[0]
    classes = persons_per_class([(r["age"], r["sex"], r["zip"]) for r in published], list(range(len(published))),
                                [person_of[r["seq"]] for r in published])
    assert min(len(p) for p in classes.values()) >= 3


@pytest.mark.parametrize("extra, message", [
    (["--person-id", "patient_id"], "--person-id cannot be given with --policy: the policy sets it"),
    (["--person-adversary", "class"], "--person-adversary cannot be given with --policy: the policy sets it"),
])
def test_the_person_flags_are_the_policys(files, tmp_path, extra, message):
    table, path = files
    code, text, _ = run_command("anonymize", table, "--policy", path, "--out", tmp_path / "o.csv", *extra)
    assert code == 2 and text == message
