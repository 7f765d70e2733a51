"""The identifier pre-flight on every web and API path that publishes (issue 28): a table with an e-mail column left
insensitive is held, with a message naming the column, on the run form, POST /api/v1/runs/, a policy applied on
the web and through the API, and a kept lattice node (web and API: the node runs with the roles of its run, and
needs the confirmation that run was made with). A comparison publishes nothing (its rows link to the run form) and
a transaction dataset has no columns to detect: docs/guide/identifiers.md says so."""

from __future__ import annotations

import pytest
from anonymizer_helpers import queue_without_running, set_roles
from api_helpers import api_for

from anonymizer_app.engine import InputError, Role
from anonymizer_app.models import Job
from anonymizer_app.services import datasets, jobs, lattice
from policies import services as policy_services

pytestmark = pytest.mark.django_db

ZIPS = ["10115", "10117", "20095", "20097"]
ROLES = {"email": Role.INSENSITIVE, "zip": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING,
         "disease": Role.SENSITIVE}
RUN = {"algorithm": "flash", "k": 2, "suppression_percent": 0, "sensitive": "disease"}
HELD = "Column &#x27;email&#x27; looks like a direct identifier"
HELD_TEXT = "Column 'email' looks like a direct identifier"


def _csv(rows: int = 40) -> bytes:
    lines = ["email,age,zip,sex,disease"]
    for i in range(rows):
        lines.append(f"person{i}@example.org,{20 + i % 30},{ZIPS[i % 4]},{'FM'[i % 2]},"
                     f"{['flu', 'cold', 'asthma'][i % 3]}")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def mail(user):
    ds = datasets.create_dataset(user, _csv(), "mail.csv", name="mail")
    assert ds.columns.get(name="email").role == Role.IDENTIFYING.value  # pre-selected at upload
    set_roles(ds, ROLES)  # the user set it back to insensitive
    return ds


def test_the_run_form(client_alice, mail, monkeypatch):
    queue_without_running(monkeypatch)
    r = client_alice.post(f"/datasets/{mail.pk}/run/", RUN)
    assert r.status_code in (200, 400) and HELD in r.content.decode()
    assert not Job.objects.exists()
    r = client_alice.post(f"/datasets/{mail.pk}/run/", {**RUN, "publish_as_is": ["email"]})
    assert r.status_code == 302
    assert Job.objects.get().config["publish_as_is"] == ["email"]  # kept for a job made from this one


def test_the_api_run(user, mail):
    api = api_for(user)
    r = api.post("/api/v1/runs/", {"dataset": mail.pk, **RUN})
    assert r.status_code == 400 and HELD_TEXT in r.json()["detail"]
    assert not Job.objects.exists()


def _policy_version(mail):
    source = jobs.create_job(mail, "full-domain", 2, 0.0, "disease", {"levels": "1,1"})  # roles as on the form
    return policy_services.save_from_job(source, "mail policy")


def test_a_policy_applied_on_the_web(client_alice, user, mail, monkeypatch):
    queue_without_running(monkeypatch)
    version = _policy_version(mail)
    target = datasets.create_dataset(user, _csv(), "mail2.csv", name="mail2")
    before = Job.objects.count()
    r = client_alice.post(f"/policies/apply/{target.pk}/", {"version": version.pk})
    assert r.status_code == 400 and HELD in r.content.decode()
    assert Job.objects.count() == before


def test_a_policy_applied_through_the_api(user, mail):
    version = _policy_version(mail)
    target = datasets.create_dataset(user, _csv(), "mail2.csv", name="mail2")
    before = Job.objects.count()
    r = api_for(user).post(f"/api/v1/policies/{version.policy.pk}/apply/", {"dataset": target.pk,
                                                                            "version": version.number})
    assert r.status_code == 400 and HELD_TEXT in r.json()["detail"], r.content
    assert Job.objects.count() == before


def test_a_kept_lattice_node(user, mail, monkeypatch):
    queue_without_running(monkeypatch)
    job = jobs.run_job(jobs.create_job(mail, "flash", 2, 0.0, "disease"))  # made without the form: not confirmed
    assert job.status == "succeeded", job.message
    before = Job.objects.count()
    with pytest.raises(InputError, match="Column 'email' looks like a direct identifier"):
        lattice.keep_node(job, "1,1")
    r = api_for(user).post(f"/api/v1/lattice/{job.pk}/keep/", {"levels": "1,1"})
    assert r.status_code == 400 and HELD_TEXT in r.json()["detail"], r.content
    assert Job.objects.count() == before
    # confirmed when the run was made: the node is kept
    job.config = {**job.config, "publish_as_is": ["email"]}
    job.save(update_fields=["config"])
    kept = lattice.keep_node(job, "1,1")
    assert kept.kind == Job.LATTICE_KEEP and kept.config["publish_as_is"] == ["email"]
