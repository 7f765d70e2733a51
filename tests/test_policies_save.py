"""policies:save (the result page's "Save as policy…"): a version from the job's configuration; a second save under
the same name is version 2; the owner only."""

from __future__ import annotations

import pytest
from policies_helpers import small_job

from anonymizer_app.services import jobs
from policies import policy_file
from policies.models import Policy

pytestmark = pytest.mark.django_db


def test_the_result_page_links_to_it(client_alice, user):
    job = small_job(user)
    r = client_alice.get(f"/jobs/{job.pk}/result/")
    assert f'href="/policies/save/{job.pk}/"'.encode() in r.content


def test_save_keeps_the_run_configuration_by_column_name(client_alice, user):
    job = small_job(user)
    r = client_alice.post(f"/policies/save/{job.pk}/", {"name": "small", "description": "monthly"})
    policy = Policy.objects.get(owner=user, name="small")
    assert r["Location"] == f"/policies/{policy.pk}/"
    v = policy.versions.get()
    assert (v.number, v.source_job_id) == (1, job.pk)
    config = v.config
    assert config == policy_file.validate(config)
    assert (config["name"], config["description"], config["algorithm"], config["k"], config["suppression_limit"],
            config["sensitive"]) == ("small", "monthly", "datafly", 2, 0.25, "disease")
    assert config["models"] == [{"model": "distinct-l-diversity", "l": 2, "column": "disease"}]
    roles = {c["name"]: c["role"] for c in config["columns"]}
    assert roles == {"name": "identifying", "age": "quasi-identifying", "zip": "quasi-identifying",
                     "sex": "quasi-identifying", "note": "insensitive", "disease": "sensitive"}
    by_name = {c["name"]: c for c in config["columns"]}
    assert by_name["sex"]["hierarchy"] == {"name": "sex h", "on_conflict": "error", "rows": [["F", "*"], ["M", "*"]]}
    assert by_name["age"]["hierarchy"] is None  # the engine's default, built from each batch's data
    assert by_name["zip"]["type"] == "integer"


def test_the_same_name_again_is_a_new_version(client_alice, user):
    job = small_job(user)
    client_alice.post(f"/policies/save/{job.pk}/", {"name": "small"})
    client_alice.post(f"/policies/save/{job.pk}/", {"name": "small"})
    policy = Policy.objects.get(owner=user, name="small")
    assert list(policy.versions.values_list("number", flat=True)) == [1, 2]


def test_a_name_is_required(client_alice, user):
    job = small_job(user)
    r = client_alice.post(f"/policies/save/{job.pk}/", {"name": ""})
    assert r.status_code == 400
    assert not Policy.objects.exists()


def test_a_queued_job_cannot_be_saved(client_alice, user):
    from policies_helpers import small_configured

    job = jobs.create_job(small_configured(user), "datafly", 2, 0.0)
    r = client_alice.get(f"/policies/save/{job.pk}/")
    assert r.status_code == 302 and r["Location"] == f"/jobs/{job.pk}/"


def test_other_user_gets_404(client, user, other_user):
    job = small_job(user)
    client.force_login(other_user)
    assert client.get(f"/policies/save/{job.pk}/").status_code == 404
    assert client.post(f"/policies/save/{job.pk}/", {"name": "mine"}).status_code == 404
    assert not Policy.objects.exists()


def test_it_requires_login(client, user):
    job = small_job(user)
    assert client.get(f"/policies/save/{job.pk}/")["Location"].startswith("/accounts/login/")
