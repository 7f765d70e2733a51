"""policies:delete: a confirmation, then the policy, its versions and its release records go; the released jobs
stay; the owner only."""

from __future__ import annotations

import pytest
from policies_helpers import small_job

from anonymizer_app.models import Job
from policies import services
from policies.models import Policy, PolicyVersion, Release

pytestmark = pytest.mark.django_db


def test_confirm_then_delete(client_alice, user):
    job = small_job(user)
    v = services.save_from_job(job, "small")
    Release.objects.create(policy=v.policy, version=v, job=job, number=1)
    r = client_alice.get(f"/policies/{v.policy.pk}/delete/")
    assert b"the policy &#x27;small&#x27;, its 1 version(s) and the record of its 1 release(s)" in r.content
    r = client_alice.post(f"/policies/{v.policy.pk}/delete/")
    assert r["Location"] == "/policies/"
    assert not Policy.objects.exists() and not PolicyVersion.objects.exists() and not Release.objects.exists()
    assert Job.objects.filter(pk=job.pk).exists()


def test_deleting_the_job_keeps_the_release_record(user):
    job = small_job(user)
    v = services.save_from_job(job, "small")
    Release.objects.create(policy=v.policy, version=v, job=job, number=1)
    job.delete()
    assert Release.objects.get().job is None
    assert PolicyVersion.objects.get().source_job is None


def test_other_user_gets_404(client, user, other_user):
    v = services.save_from_job(small_job(user), "small")
    client.force_login(other_user)
    assert client.get(f"/policies/{v.policy.pk}/delete/").status_code == 404
    assert client.post(f"/policies/{v.policy.pk}/delete/").status_code == 404
    assert Policy.objects.exists()
