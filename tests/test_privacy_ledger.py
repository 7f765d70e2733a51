"""The ε ledger of a dataset (services/privacy_ledger.py): every DP release (the DP page, the DP API, a SafePub
run from the run form or POST /api/v1/runs/) writes an entry with its ε, δ, mechanism, user and a link; a
release past the dataset's budget is refused with the figures spent and remaining and writes nothing; entries
stay when a SafePub run is deleted; GET /api/v1/datasets/<id>/privacy-budget/ is read-only, scope read, owner
only."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously
from api_helpers import Api, api_for
from django.test import override_settings

from accounts.models import ApiToken
from anonymizer_app.engine import Role
from anonymizer_app.models import Job, PrivacyLedgerEntry
from anonymizer_app.services import datasets, privacy_ledger

pytestmark = pytest.mark.django_db

TOY_CSV = "sex,age,job\nF,20,a\nM,35,b\nM,41,b\nF,99,a\nM,17,c\n"
COUNTS = {"mode": "counts", "columns": ["sex"], "epsilon": "0.5", "mechanism": "geometric", "bins": "10",
          "post_processing": "round-clamp", "action": "show"}


@pytest.fixture
def toy(user):
    return make_dataset(user, TOY_CSV, "toy.csv", roles={"job": Role.SENSITIVE})


def _safepub_dataset(owner):
    rng = np.random.default_rng(2)
    n = 1500
    frame = pd.DataFrame({"age": rng.integers(20, 80, n), "sex": rng.choice(["M", "F"], n),
                          "disease": rng.choice(["flu", "cold"], n)})
    ds = datasets.create_dataset(owner, frame.to_csv(index=False).encode(), "people.csv", name="People")
    roles = {"age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}
    for column in ds.columns.all():
        column.role = roles[column.name].value
        column.save()
    return ds


SAFEPUB = {"algorithm": "safepub", "k": 2, "suppression_percent": 0, "sensitive": "disease",
           "model:dp:enabled": "on", "model:dp:epsilon": "1.5", "model:dp:delta": "0.01",
           "model:dp:search_share": "0.1", "option:safepub:steps": "5", "option:safepub:score": "loss",
           "option:safepub:seed": "8"}


API_SAFEPUB = {"algorithm": "safepub", "k": 2, "suppression_percent": 0, "sensitive": "disease",
               "fields": {k: v for k, v in SAFEPUB.items() if ":" in k} | {"model:dp:epsilon": "0.5"}}


def test_dp_page_releases_are_written_to_the_ledger_and_shown(client_alice, user, toy):
    r = client_alice.post(f"/datasets/{toy.pk}/dp/", COUNTS)
    assert r.status_code == 200
    r = client_alice.post(f"/datasets/{toy.pk}/dp/", {**COUNTS, "action": "csv", "epsilon": "0.25"})
    assert r.status_code == 200
    released_csv = [line.split(",")[1] for line in r.content.decode().splitlines()[1:]]
    r = client_alice.post(f"/datasets/{toy.pk}/dp/", {"mode": "rr", "rr_column": "sex", "epsilon": "1",
                                                      "mechanism": "laplace", "bins": "10", "action": "show"})
    assert r.status_code == 200
    entries = list(PrivacyLedgerEntry.objects.filter(dataset=toy).order_by("id"))
    assert [(e.mechanism, e.epsilon, e.delta, e.description, e.user_id) for e in entries] == [
        ("geometric histogram", 0.5, 0.0, "histogram of sex", user.pk),
        ("geometric histogram", 0.25, 0.0, "histogram of sex", user.pk),
        ("randomized response", 1.0, 0.0, "randomized response on sex", user.pk)]
    # the ledger keeps the published figures (the CSV's counts), never the true ones
    assert entries[1].release["post_processing"] == "round-clamp"
    assert [str(n) for _, n in entries[1].release["cells"]] == released_csv
    assert [c for c, _ in entries[1].release["cells"]] == ["F", "M", "(other)"]
    assert "true" not in str(entries[1].release)
    html = client_alice.get(f"/datasets/{toy.pk}/dp/").content.decode()
    assert re.search(r'id="ledger-spent">ε = 1.75 in 3 releases', html)
    assert "none set (releases are recorded, none refused)" in html
    assert f"?release={entries[1].pk}#dp-shown-release" in html
    assert "Post-processing is free" in html
    shown = client_alice.get(f"/datasets/{toy.pk}/dp/", {"release": entries[1].pk}).content.decode()
    assert 'id="dp-shown-release"' in shown and "post-processing: round-clamp" in shown
    assert client_alice.get(f"/datasets/{toy.pk}/dp/", {"release": entries[1].pk + 100}).status_code == 404
    assert client_alice.get(f"/datasets/{toy.pk}/dp/", {"release": "x"}).status_code == 404


def test_budget_refuses_a_release_that_would_exceed_it(client_alice, toy):
    r = client_alice.post(f"/datasets/{toy.pk}/dp/", {"action": "budget", "budget": "1"})
    assert r.status_code == 302
    assert client_alice.post(f"/datasets/{toy.pk}/dp/", {**COUNTS, "epsilon": "0.75"}).status_code == 200
    r = client_alice.post(f"/datasets/{toy.pk}/dp/", {**COUNTS, "epsilon": "0.5"})
    assert r.status_code == 400
    html = r.content.decode()
    assert ("refused: this release would spend ε = 0.5, but the dataset&#x27;s privacy budget is ε = 1, of which "
            "0.75 is spent (1 release), 0.25 remaining.") in html
    assert 'id="dp-table"' not in html  # nothing released
    assert PrivacyLedgerEntry.objects.filter(dataset=toy).count() == 1
    # exactly the rest of the budget is allowed (0.75 + 0.25 = 1, no float slack refused)
    assert client_alice.post(f"/datasets/{toy.pk}/dp/", {**COUNTS, "epsilon": "0.25"}).status_code == 200
    html = client_alice.get(f"/datasets/{toy.pk}/dp/").content.decode()
    assert 'id="ledger-remaining">ε = 0 (every further release is refused)' in html
    # the API is refused the same way
    r = api_for(toy.owner).post(f"/api/v1/dp/{toy.pk}/", {"mode": "counts", "columns": ["sex"], "epsilon": 0.1})
    assert r.status_code == 400 and "of which 1 is spent (2 releases), 0 remaining" in r.json()["detail"]
    # a bad budget is a form error; an empty one goes back to the default (none)
    assert client_alice.post(f"/datasets/{toy.pk}/dp/", {"action": "budget", "budget": "-1"}).status_code == 400
    client_alice.post(f"/datasets/{toy.pk}/dp/", {"action": "budget", "budget": ""})
    assert privacy_ledger.budget_of(toy) is None
    assert client_alice.post(f"/datasets/{toy.pk}/dp/", {**COUNTS, "epsilon": "5"}).status_code == 200


@override_settings(ANONYMIZER_DP_DEFAULT_EPSILON_BUDGET=0.4)
def test_the_default_budget_setting(client_alice, toy):
    r = client_alice.post(f"/datasets/{toy.pk}/dp/", COUNTS)
    assert r.status_code == 400 and "privacy budget is ε = 0.4, of which 0 is spent (0 releases)" in r.content.decode()
    client_alice.post(f"/datasets/{toy.pk}/dp/", {"action": "budget", "budget": "2"})
    assert client_alice.post(f"/datasets/{toy.pk}/dp/", COUNTS).status_code == 200


def test_safepub_runs_are_charged_refused_past_the_budget_and_kept_after_deletion(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = _safepub_dataset(user)
    page = client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
    assert 'id="safepub-ledger"' in page and "ε =\n    0 spent in 0 releases, no budget set" in page
    r = client_alice.post(f"/datasets/{ds.pk}/run/", SAFEPUB)
    assert r.status_code == 302
    job = Job.objects.get()
    entry = PrivacyLedgerEntry.objects.get()
    assert (entry.dataset_id, entry.job_id, entry.epsilon, entry.delta, entry.user_id) == (ds.pk, job.pk, 1.5, 0.01,
                                                                                          user.pk)
    assert entry.mechanism == "SafePub (sampling + exponential mechanism)"
    result = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert re.search(r'id="safepub-ledger-result">.*?ε = 1.5 spent in 1\s+release, no budget\s+set', result, re.S)
    html = client_alice.get(f"/datasets/{ds.pk}/dp/").content.decode()
    assert f'href="/jobs/{job.pk}/"' in html and "SafePub run, (1.5, 0.01)-differential privacy" in html
    # a non-DP run spends nothing
    client_alice.post(f"/datasets/{ds.pk}/run/", {"algorithm": "flash", "k": 2, "suppression_percent": 0,
                                                  "sensitive": "disease"})
    assert PrivacyLedgerEntry.objects.count() == 1
    # the budget (2) leaves 0.5: a second SafePub run at ε = 1.5 is refused, no job created
    client_alice.post(f"/datasets/{ds.pk}/dp/", {"action": "budget", "budget": "2"})
    runs = Job.objects.count()
    r = client_alice.post(f"/datasets/{ds.pk}/run/", SAFEPUB)
    assert r.status_code in (200, 400)
    assert "of which 1.5 is spent (1 release), 0.5 remaining" in r.content.decode().replace("&#x27;", "'")
    assert Job.objects.count() == runs and PrivacyLedgerEntry.objects.count() == 1
    # the API's runs are charged the same way
    r = api_for(user).post("/api/v1/runs/", API_SAFEPUB | {"dataset": ds.pk})
    assert r.status_code in (201, 202), r.content
    assert PrivacyLedgerEntry.objects.count() == 2, (r.json(), Job.objects.order_by("-created").first().models)
    r = api_for(user).post("/api/v1/runs/", API_SAFEPUB | {"dataset": ds.pk})
    assert r.status_code == 400 and "0 remaining" in r.json()["detail"]
    # deleting the run keeps its entry: the budget was spent
    job.delete()
    entry.refresh_from_db()
    assert entry.job is None and entry.epsilon == 1.5
    html = client_alice.get(f"/datasets/{ds.pk}/dp/").content.decode()
    assert "SafePub run, (1.5, 0.01)-differential privacy (deleted)" in html
    assert privacy_ledger.state(ds).spent == 2.0


def test_api_ledger_read_only_scope_read_owner_only(user, other_user, toy):
    api_for(user).post(f"/api/v1/dp/{toy.pk}/", {"mode": "counts", "columns": ["job"], "epsilon": 0.5,
                                                 "post_processing": "none"})
    privacy_ledger.set_budget(toy, 3.0)
    read_only = Api(ApiToken.issue(user, "read", scopes=["read"])[1])
    r = read_only.get(f"/api/v1/datasets/{toy.pk}/privacy-budget/")
    assert r.status_code == 200, r.content
    d = r.json()
    assert (d["budget"], d["spent"], d["remaining"], d["delta_spent"], d["releases"]) == (3.0, 0.5, 2.5, 0.0, 1)
    assert d["accounting"].startswith("sequential composition")
    [e] = d["entries"]
    assert (e["mechanism"], e["epsilon"], e["delta"], e["user"], e["run"]) == ("laplace histogram", 0.5, 0.0,
                                                                                "alice", None)
    assert e["release"]["post_processing"] == "none" and [c for c, _ in e["release"]["cells"]] == ["a", "b", "c", "(other)"]
    for method in ("post", "put", "patch", "delete"):
        assert getattr(api_for(user), method)(f"/api/v1/datasets/{toy.pk}/privacy-budget/").status_code == 405
    assert api_for(other_user).get(f"/api/v1/datasets/{toy.pk}/privacy-budget/").status_code == 404
    assert api_for(None).get(f"/api/v1/datasets/{toy.pk}/privacy-budget/").status_code == 401


def test_another_users_dp_page_and_ledger_are_404(client, other_user, toy):
    entry = PrivacyLedgerEntry.objects.create(dataset=toy, user=toy.owner, mechanism="laplace histogram", epsilon=1)
    client.force_login(other_user)
    assert client.get(f"/datasets/{toy.pk}/dp/", {"release": entry.pk}).status_code == 404
    assert client.post(f"/datasets/{toy.pk}/dp/", {"action": "budget", "budget": "100"}).status_code == 404
    assert privacy_ledger.budget_of(toy) is None
