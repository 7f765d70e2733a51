"""Release policies keep a run's SDC steps (policies/policy_file.py "sdc", "sdc_seed"): saved from a job, applied
to a new batch (the job runs them through the pipeline and the gate), run from a policy file on the command line,
and refused by field when wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously
from cli_helpers import run_command

from anonymizer_app.engine import Role
from anonymizer_app.models import Job
from anonymizer_app.services import jobs
from policies import policy_file, services

pytestmark = pytest.mark.django_db

REFERENCE = Path(__file__).resolve().parent / "sdcmicro_reference"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
STEPS = [{"method": "local_suppression", "parameters": {"k": 2}}]


def _dataset(user, name: str):
    return make_dataset(user, (REFERENCE / "testdata2.csv").read_text(), "testdata2.csv",
                        roles={k: Role.QUASI_IDENTIFYING for k in KEYS}, name=name)


def _job(user):
    ds = _dataset(user, "batch 1")
    job = jobs.create_job(ds, "full-domain", 1, 0.0, "", {"levels": "0,0,0,0,0,0,0", "sdc": STEPS, "sdc_seed": 4})
    return jobs.run_job(job)


def test_saved_from_a_job_and_applied_to_a_batch(user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    job = _job(user)
    assert job.status == Job.SUCCEEDED, job.message
    version = services.save_from_job(job, "sdc policy")
    assert version.config["sdc"] == STEPS and version.config["sdc_seed"] == 4
    assert "sdc" not in version.config["options"]
    exported = json.loads(services.export_text(version))
    assert exported["sdc"] == STEPS
    applied = jobs.run_job(services.apply_policy(_dataset(user, "batch 2"), version))
    assert applied.status == Job.SUCCEEDED, applied.message
    assert applied.options["sdc"] == STEPS and applied.options["sdc_seed"] == 4
    assert applied.result.report["sdc"]["steps"][0]["figures"]["suppressed cells"] == 97


def test_a_policy_file_runs_its_steps_on_the_command_line(user, tmp_path, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    path = tmp_path / "policy.json"
    path.write_text(services.export_text(services.save_from_job(_job(user), "sdc policy")))
    out = tmp_path / "out.csv"
    status, text, _ = run_command("anonymize", REFERENCE / "testdata2.csv", "--policy", path, "--out", out,
                                  "--report", tmp_path / "r.json", "--quiet")
    assert status == 0, text
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["sdc"]["steps"][0]["figures"]["suppressed cells"] == 97 and report["sdc"]["seed"] == 4
    status, text, _ = run_command("anonymize", REFERENCE / "testdata2.csv", "--policy", path, "--out", out,
                                  "--sdc", "pram")
    assert status != 0 and "--sdc cannot be given with --policy" in text


def test_wrong_steps_are_refused_by_field(user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    data = policy_file.loads(services.export_text(services.save_from_job(_job(user), "p")))
    bad = dict(data, sdc=[{"method": "local_suppression", "parameters": {"importance": "age"}}])
    with pytest.raises(policy_file.PolicyError, match=r"sdc\[0\]\.parameters\.importance: 'age' is not one of"):
        policy_file.validate(bad)
    with pytest.raises(policy_file.PolicyError, match="unknown SDC method 'nope'"):
        policy_file.validate(dict(data, sdc=[{"method": "nope"}]))
    # thousands of steps (each a pass over the table) are refused, not run (found by the attacker review)
    with pytest.raises(policy_file.PolicyError, match="5000 SDC steps: a run takes at most 16"):
        policy_file.validate(dict(data, sdc=STEPS * 5000))
