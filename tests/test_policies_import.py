"""policies:import: a policy file read strictly (the message names the field and the value, nothing is stored
on error); the name from the file or the form; a second import of the same name is a new version."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from policies.models import Policy

pytestmark = pytest.mark.django_db

POLICY = {"format": "anonymizer-policy", "version": 1, "name": "from file",
          "columns": [{"name": "age", "role": "quasi-identifying", "type": "integer"},
                      {"name": "disease", "role": "sensitive"}],
          "algorithm": "mondrian", "k": 3}


def upload(data, name="p.json") -> SimpleUploadedFile:
    body = data if isinstance(data, bytes) else json.dumps(data).encode()
    return SimpleUploadedFile(name, body, content_type="application/json")


def test_imports_under_the_files_name_then_a_new_version(client_alice, user):
    r = client_alice.post("/policies/import/", {"file": upload(POLICY)})
    policy = Policy.objects.get(owner=user)
    assert r["Location"] == f"/policies/{policy.pk}/"
    assert policy.name == "from file"
    v = policy.versions.get()
    assert (v.number, v.source_job, v.config["algorithm"], v.config["k"]) == (1, None, "mondrian", 3)
    client_alice.post("/policies/import/", {"file": upload(POLICY)})
    assert list(policy.versions.values_list("number", flat=True)) == [1, 2]


def test_the_forms_name_wins(client_alice, user):
    client_alice.post("/policies/import/", {"file": upload(POLICY), "name": "renamed"})
    assert list(Policy.objects.values_list("name", flat=True)) == ["renamed"]
    assert Policy.objects.get().versions.get().config["name"] == "renamed"


@pytest.mark.parametrize("body, message", [
    (b"{nope", "bad.json: not JSON (line 1, column 2"),
    (b"\xff\xfe", "bad.json: not UTF-8 text"),
    (json.dumps(dict(POLICY, k=-1)).encode(), "bad.json: k: expected a whole number of at least 1, got -1"),
    (json.dumps(dict(POLICY, name="")).encode(), "name: give the policy a name"),
])
def test_bad_files_are_refused_by_field_and_value(client_alice, body, message):
    r = client_alice.post("/policies/import/", {"file": upload(body, "bad.json")})
    assert r.status_code == 400
    assert message.replace("'", "&#x27;").encode() in r.content, r.content.decode()[-3000:]
    assert not Policy.objects.exists()


def test_it_requires_login(client):
    r = client.post("/policies/import/", {"file": upload(POLICY)})
    assert r["Location"].startswith("/accounts/login/")
    assert not Policy.objects.exists()
