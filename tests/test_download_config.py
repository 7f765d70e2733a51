import json

import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.services import exports, jobs

pytestmark = pytest.mark.django_db


def url(job):
    return f"/jobs/{job.pk}/config.json"


def test_it_downloads_the_run_configuration(client_alice, user):
    job = finished_job(make_dataset(user), k=2, suppression_limit=0.25, sensitive="disease")
    r = client_alice.get(url(job))
    assert r.status_code == 200
    assert r["Content-Type"] == "application/json; charset=utf-8"
    assert r["Content-Disposition"] == 'attachment; filename="small-datafly-k2-config.json"'
    config = json.loads(r.content)
    assert config == exports.job_configuration(job)
    assert (config["algorithm"], config["k"], config["suppression_limit"]) == ("datafly", 2, 0.25)
    assert config["quasi_identifiers"] == ["age", "zip", "sex"]
    assert config["identifiers"] == ["name"]
    assert config["sensitive"] == "disease"


def test_a_queued_job_has_a_configuration_too(client_alice, user):
    job = jobs.create_job(make_dataset(user), "datafly", 3, 0.0)
    assert json.loads(client_alice.get(url(job)).content)["k"] == 3


def test_other_user_gets_404(client, user, other_user):
    job = jobs.create_job(make_dataset(user), "datafly", 3, 0.0)
    client.force_login(other_user)
    assert client.get(url(job)).status_code == 404


def test_it_requires_login(client, user):
    job = jobs.create_job(make_dataset(user), "datafly", 3, 0.0)
    r = client.get(url(job))
    assert r.status_code == 302
    assert r["Location"].startswith("/accounts/login/?next=")
