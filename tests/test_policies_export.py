"""policies:export: the version's policy file, byte-stable and importable; never a secret; the owner only."""

from __future__ import annotations

import json

import pytest
from policies_helpers import small_job

from policies import policy_file, services

pytestmark = pytest.mark.django_db


def test_export_then_import_is_the_same_file(client_alice, user):
    v = services.save_from_job(small_job(user), "small", "monthly")
    r = client_alice.get(f"/policies/{v.policy.pk}/versions/1/export/")
    assert r.status_code == 200
    assert r["Content-Type"] == "application/json; charset=utf-8"
    assert r["Content-Disposition"] == 'attachment; filename="small-v1.policy.json"'
    data = json.loads(r.content)
    assert (data["format"], data["version"], data["name"], data["description"]) == \
        ("anonymizer-policy", 1, "small", "monthly")
    again = services.import_policy(user, r.content, "small-v1.policy.json", "copy")
    assert policy_file.dumps(dict(again.config, name="small")) == r.content.decode()


def test_unknown_version_404(client_alice, user):
    v = services.save_from_job(small_job(user), "small")
    assert client_alice.get(f"/policies/{v.policy.pk}/versions/2/export/").status_code == 404


def test_other_user_gets_404(client, user, other_user):
    v = services.save_from_job(small_job(user), "small")
    client.force_login(other_user)
    assert client.get(f"/policies/{v.policy.pk}/versions/1/export/").status_code == 404
