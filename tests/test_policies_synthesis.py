"""Release policies hold a synthesis step (policies/synthesis_step.py, policy_file "synthesis"): saved from a
synthetic set (alone, or beside the anonymization of the policy's latest version), applied to another dataset
on the web, through the API and from a file on the command line; applying starts a synthesis job that spends ε
from that dataset's ledger (refused past the budget, naming the field, nothing created). Bad steps are refused
by field. Another account's objects are 404."""

from __future__ import annotations

import json

import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously
from api_helpers import api_for
from cli_helpers import run_command
from django.test import Client

from anonymizer_app.models import Job, PrivacyBudget, PrivacyLedgerEntry
from anonymizer_app.services import jobs, synthesis
from policies import policy_file, services
from policies.models import Policy, Release

pytestmark = pytest.mark.django_db

CSV = """name,age,sex,disease
Ann,34,F,flu
Bob,36,M,cold
Cid,35,M,flu
Dee,52,F,asthma
Eve,55,F,flu
Fay,58,F,cold
Gus,71,M,flu
Hal,23,M,flu
"""
ROLES = {"name": "identifying", "age": "quasi-identifying", "sex": "quasi-identifying", "disease": "sensitive"}
STEP = {"method": "mst", "epsilon": 0.75, "delta": 1e-8, "columns": ["age", "sex", "disease"],
        "bounds": {"age": [0.0, 100.0, 10]}, "holdout": 0.25, "seed": 7, "options": {"iterations": 50}}


def _dataset(user, name: str):
    return make_dataset(user, CSV, f"{name}.csv", roles=ROLES, name=name)


def _synthetic_set(user, name: str = "first") -> Job:
    ds = _dataset(user, name)
    job = jobs.run_job(synthesis.create_synthesis_job(ds, user, dict(STEP)))
    assert job.status == Job.SUCCEEDED, job.message
    return job


def _file(**step) -> dict:
    return {"format": "anonymizer-policy", "version": 1, "name": "p",
            "columns": [{"name": "name", "role": "identifying", "type": "string"},
                        {"name": "age", "role": "quasi-identifying", "type": "integer"},
                        {"name": "sex", "role": "quasi-identifying", "type": "string"},
                        {"name": "disease", "role": "sensitive", "type": "string"}],
            "synthesis": {**STEP, **step}}


def test_a_synthesis_only_policy_round_trips_in_its_normal_form():
    policy = policy_file.validate(_file())
    assert "algorithm" not in policy and policy["synthesis"] == STEP
    assert policy_file.loads(policy_file.dumps(policy)) == policy
    cart = policy_file.validate(_file(method="cart", bounds={}, options={"min_leaf": 2}))
    assert cart["synthesis"]["options"] == {"min_leaf": 2}  # CART needs no bounds: it is not DP


@pytest.mark.parametrize("step, message", [
    ({"method": "gan"}, "synthesis.method: unknown method 'gan'; available: aim, cart, mst"),
    ({"epsilon": 0}, "synthesis.epsilon: must be above 0, got 0"),
    ({"epsilon": "1"}, "synthesis.epsilon: expected a number, got '1'"),
    ({"delta": 1}, "synthesis.delta: must be above 0 and below 1, got 1"),
    ({"columns": ["name", "sex"]}, "synthesis.columns[0]: 'name' is identifying: identifiers are never synthesized"),
    ({"columns": ["sex", "zip"]}, "synthesis.columns[1]: 'zip' is not one of the policy's columns"),
    ({"columns": ["sex", "sex"]}, "synthesis.columns[1]: 'sex' is given twice"),
    ({"bounds": {}}, "synthesis.bounds: the numeric column 'age' needs a hierarchy (in columns) or bounds"),
    ({"bounds": {"sex": [0, 1]}}, "synthesis.bounds.sex: 'sex' is not a synthesized numeric column"),
    ({"bounds": {"age": [5, 1, 3]}}, "synthesis.bounds.age: bins: the upper bound 1 must be above the lower bound 5"),
    ({"holdout": 1}, "synthesis.holdout: the share of rows held out must be at least 0 and below 1, got 1"),
    ({"seed": -1}, "synthesis.seed: expected a whole number from 0 to 4294967295, got -1"),
    ({"options": {"depth": 3}}, "synthesis.options.depth: MST"),
    ({"options": {"iterations": 5}}, "synthesis.options.iterations: iterations must be at least 50, got 5"),
    ({"rows": 3}, "synthesis.rows: unknown field; the fields are: method, epsilon"),
])
def test_a_bad_step_is_refused_naming_the_field(step, message):
    with pytest.raises(policy_file.PolicyError) as caught:
        policy_file.validate(_file(**step), "p.json")
    assert str(caught.value).startswith("p.json: " + message), str(caught.value)


def test_run_fields_without_an_algorithm_are_refused():
    with pytest.raises(policy_file.PolicyError, match="p.json: models: applies to an anonymization"):
        policy_file.validate(dict(_file(), models=[]), "p.json")
    with pytest.raises(policy_file.PolicyError, match=r"p.json: algorithm: missing \(or give a synthesis step"):
        policy_file.validate(dict(_file(), k=2), "p.json")


def test_saved_on_the_web_and_applied_to_another_dataset_spending_its_ledger(client_alice, user, monkeypatch):
    job = _synthetic_set(user)
    page = client_alice.get(f"/jobs/{job.pk}/synthesis/").content.decode()
    assert f'href="/policies/save/{job.pk}/"' in page
    form = client_alice.get(f"/policies/save/{job.pk}/").content.decode()
    assert 'id="save-synthesis-note"' in form and 'name="alongside"' in form
    response = client_alice.post(f"/policies/save/{job.pk}/", {"name": "synthetic clinic", "description": ""})
    policy = Policy.objects.get(owner=user, name="synthetic clinic")
    assert response.status_code == 302 and response["Location"] == f"/policies/{policy.pk}/"
    version = policy.latest
    assert version.source_job_id == job.pk and "algorithm" not in version.config
    assert version.config["synthesis"] == STEP
    assert [c["name"] for c in version.config["columns"]] == ["name", "age", "sex", "disease"]
    detail = client_alice.get(f"/policies/{policy.pk}/").content.decode()
    assert "Differentially private synthesis" in detail or "MST" in detail
    assert "(0.75, 1e-08)-differential privacy, ε spent from the dataset&#x27;s ledger" in detail

    other = _dataset(user, "second")
    PrivacyBudget.objects.create(dataset=other, epsilon=1.0)
    checked = client_alice.get(f"/policies/apply/{other.pk}/", {"version": version.pk})
    assert checked.status_code == 200 and 'class="policy-synthesis"' in checked.content.decode()
    submitted = run_jobs_synchronously(monkeypatch)
    response = client_alice.post(f"/policies/apply/{other.pk}/", {"version": version.pk, "on_new_values": "stop"})
    applied = Job.objects.get(pk=submitted[0])
    assert response.status_code == 302 and response["Location"] == f"/jobs/{applied.pk}/"
    assert applied.kind == Job.SYNTHESIS and applied.dataset_id == other.pk and applied.status == Job.SUCCEEDED
    spec = applied.options["synthesis"]
    assert {k: spec[k] for k in STEP} == STEP
    entry = PrivacyLedgerEntry.objects.get(dataset=other)
    assert (entry.epsilon, entry.delta, entry.job_id) == (0.75, 1e-8, applied.pk)
    assert Release.objects.get(policy=policy).job_id == applied.pk

    # a second application would take ε to 1.5 > 1: refused naming the field, nothing created
    before = (Job.objects.count(), PrivacyLedgerEntry.objects.count(), Release.objects.count())
    response = client_alice.post(f"/policies/apply/{other.pk}/", {"version": version.pk, "on_new_values": "stop"})
    html = response.content.decode()
    assert response.status_code == 400
    assert ("synthetic clinic v1 on second: synthesis.epsilon: refused: this release would spend ε = 0.75, but the "
            "dataset&#x27;s privacy budget is ε = 1, of which 0.75 is spent (1 release), 0.25 remaining.") in html
    assert (Job.objects.count(), PrivacyLedgerEntry.objects.count(), Release.objects.count()) == before


def test_the_api_saves_and_applies_a_synthesis_and_refuses_past_the_budget(user, other_user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    job = _synthetic_set(user)
    api = api_for(user)
    created = api.post("/api/v1/policies/", {"job": str(job.pk), "name": "api synth"}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["config"]["synthesis"] == STEP
    policy = Policy.objects.get(name="api synth")
    other = _dataset(user, "third")
    PrivacyBudget.objects.create(dataset=other, epsilon=1.0)
    response = api.post(f"/api/v1/policies/{policy.pk}/apply/", {"dataset": other.pk}, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    applied = Job.objects.get(pk=body["job"])
    assert body["jobs"] == [{"job": str(applied.pk), "kind": "synthesis", "release": 1}]
    assert PrivacyLedgerEntry.objects.get(dataset=other).job_id == applied.pk
    refused = api.post(f"/api/v1/policies/{policy.pk}/apply/", {"dataset": other.pk}, format="json")
    assert refused.status_code == 400
    assert refused.json()["detail"].startswith("api synth v1 on third: synthesis.epsilon: refused: this release "
                                               "would spend ε = 0.75")
    assert Job.objects.filter(dataset=other).count() == 1
    bob = api_for(other_user)
    assert bob.post(f"/api/v1/policies/{policy.pk}/apply/", {"dataset": other.pk}, format="json").status_code == 404
    bob_ds = _dataset(other_user, "bob's")
    assert api.post(f"/api/v1/policies/{policy.pk}/apply/", {"dataset": bob_ds.pk}, format="json").status_code == 404
    assert bob.post("/api/v1/policies/", {"job": str(job.pk), "name": "x"}, format="json").status_code == 404


def test_a_synthesis_beside_the_anonymization_runs_both(user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    first = _synthetic_set(user)
    run = jobs.run_job(jobs.create_job(first.dataset, "datafly", 2, 0.5, "", {}))
    assert run.status == Job.SUCCEEDED, run.message
    services.save_from_job(run, "both")
    with pytest.raises(policy_file.PolicyError, match="alongside: a synthetic set is saved beside"):
        services.save_from_job(run, "both", alongside=True)
    with pytest.raises(policy_file.PolicyError, match="name: the policy 'none' has no version with an anonymization"):
        services.save_from_job(first, "none", alongside=True)
    version = services.save_from_job(first, "both", alongside=True)
    assert version.number == 2 and version.config["algorithm"] == "datafly" and version.config["synthesis"] == STEP
    other = _dataset(user, "fourth")
    made = services.apply_jobs(other, version)
    assert [j.kind for j in made] == [Job.RUN, Job.SYNTHESIS]
    assert [r.job_id for r in Release.objects.filter(policy=version.policy).order_by("number")] == [m.pk for m in made]
    assert PrivacyLedgerEntry.objects.get(dataset=other).job_id == made[1].pk
    for j in made:
        assert jobs.run_job(j).status == Job.SUCCEEDED


def test_the_command_line_draws_a_policy_file_and_refuses_its_flags(user, tmp_path):
    version = services.add_version(user, "cli", policy_file.validate(_file(method="cart", bounds={}, options={})))
    policy = tmp_path / "policy.json"
    policy.write_text(services.export_text(version))
    data = tmp_path / "data.csv"
    data.write_text(CSV)
    out, report = tmp_path / "out.csv", tmp_path / "r.json"
    status, text, err = run_command("synthesize", data, "--policy", policy, "--out", out, "--json", report, "--quiet")
    assert status == 0, (text, err)
    lines = out.read_text().splitlines()
    assert lines[0] == "age,sex,disease" and len(lines) == 1 + 6  # 8 rows, 2 held out (25%)
    assert json.loads(report.read_text())["method"] == "cart"
    status, text, err = run_command("synthesize", data, "--policy", policy, "--out", out, "--epsilon", "2")
    assert status == 2 and "--epsilon cannot be given with --policy: the policy sets it" in (text + err)
    status, text, err = run_command("anonymize", data, "--policy", policy, "--out", out)
    assert status != 0 and "the policy holds a synthesis only: draw it with manage.py synthesize" in (text + err)
    wrong = tmp_path / "wrong.csv"
    wrong.write_text(CSV.replace("disease", "illness"))
    status, text, err = run_command("synthesize", wrong, "--policy", policy, "--out", out)
    assert status == 2 and "column 'disease' is missing" in (text + err)


def test_another_users_synthetic_set_and_policy_are_404(user, other_user):
    job = _synthetic_set(user)
    version = services.save_from_job(job, "mine")
    bob = Client()
    bob.force_login(other_user)
    assert bob.get(f"/policies/save/{job.pk}/").status_code == 404
    assert bob.post(f"/policies/save/{job.pk}/", {"name": "stolen"}).status_code == 404
    assert bob.get(f"/policies/{version.policy.pk}/").status_code == 404
    bob_ds = _dataset(other_user, "bob")
    response = bob.post(f"/policies/apply/{bob_ds.pk}/", {"version": version.pk, "on_new_values": "stop"})
    assert response.status_code == 400 and not Job.objects.filter(dataset=bob_ds).exists()


def test_the_command_line_applies_a_policy_to_a_dataset_spending_its_ledger(user, tmp_path):
    version = services.add_version(user, "cli ledger", policy_file.validate(_file()))
    policy = tmp_path / "policy.json"
    policy.write_text(services.export_text(version))
    ds = _dataset(user, "fifth")
    PrivacyBudget.objects.create(dataset=ds, epsilon=1.0)
    out = tmp_path / "synthetic.csv"
    status, text, err = run_command("synthesize", "--policy", policy, "--dataset", ds.pk, "--out", out)
    assert status == 0, (text, err)
    job = Job.objects.get(dataset=ds, kind=Job.SYNTHESIS)
    entry = PrivacyLedgerEntry.objects.get(dataset=ds)
    assert (entry.epsilon, entry.job_id) == (0.75, job.pk)
    assert out.read_text().splitlines()[0] == "age,sex,disease"
    assert "(0.75, 1e-08)-differential privacy for each person's record." in text
    assert "Ledger of fifth: ε = 0.75 spent in 1 release(s), budget ε = 1, 0.25 remaining" in text
    again = tmp_path / "again.csv"
    status, text, err = run_command("synthesize", "--policy", policy, "--dataset", ds.pk, "--out", again)
    assert status == 2 and "synthesis.epsilon: refused: this release would spend ε = 0.75" in text
    assert not again.exists() and Job.objects.filter(dataset=ds).count() == 1
    status, text, _ = run_command("synthesize", "--dataset", ds.pk, "--out", again)
    assert status == 2 and "--dataset applies to --policy FILE" in text
