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


AMNESIA_RULES = """Anonymization rules:
sex
F->*
M->*

zip
10115->101**
10117->101**
10119->101**
20095->200**
20097->200**
20099->200**
30001->*
40000->*

"""


def test_amnesias_rules_are_a_full_domain_policy_that_reapplies_the_mapping(client_alice, user, monkeypatch):
    from anonymizer_helpers import make_dataset, run_jobs_synchronously

    from anonymizer_app.engine import Role
    from anonymizer_app.models import Job

    run_jobs_synchronously(monkeypatch)
    roles = {"name": Role.IDENTIFYING, "disease": Role.SENSITIVE}  # age insensitive: the rules do not cover it
    template = make_dataset(user, roles=roles, name="template")
    r = client_alice.post("/policies/import/", {"file": upload(AMNESIA_RULES.encode(), "rules.txt"), "k": 2,
                                                "dataset": template.pk, "name": "amnesia"})
    assert r.status_code == 302, r.content.decode()[-2000:]
    config = Policy.objects.get(name="amnesia").versions.get().config
    assert (config["algorithm"], config["options"], config["k"]) == ("full-domain", {"levels": "1,1"}, 2)
    by_name = {c["name"]: c for c in config["columns"]}
    assert by_name["zip"]["hierarchy"]["rows"][0] == ["10115", "101**", "*"]
    assert {n: c["role"] for n, c in by_name.items()} == {
        "sex": "quasi-identifying", "zip": "quasi-identifying", "name": "identifying", "age": "insensitive",
        "note": "insensitive", "disease": "sensitive"}
    batch = make_dataset(user, roles={}, name="batch")
    version = Policy.objects.get(name="amnesia").versions.get()
    client_alice.post(f"/policies/apply/{batch.pk}/", {"version": version.pk})
    job = Job.objects.get(dataset=batch)
    assert job.status == Job.SUCCEEDED, job.message
    text = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv").content.decode()
    assert [line.split(",")[1:3] for line in text.splitlines()[1:]] == \
        [["101**", "*"]] * 3 + [["200**", "*"]] * 3 + [["*", "*"]] * 2


@pytest.mark.parametrize("body, extra, message", [
    (AMNESIA_RULES, {}, "rules.txt: Amnesia&#x27;s anonymization rules do not hold k: give k"),
    ("Anonymization rules:\nsex\nF*\n", {"k": 2}, "rules.txt, line 3: expected original-&gt;anonymized under "
                                                 "column &#x27;sex&#x27;, got &#x27;F*&#x27;"),
    ("Anonymization rules:\nsex\n\n", {"k": 2}, "rules.txt: column &#x27;sex&#x27; has no rule"),
])
def test_bad_amnesia_rules(client_alice, body, extra, message):
    r = client_alice.post("/policies/import/", {"file": upload(body.encode(), "rules.txt"), **extra})
    assert r.status_code == 400
    assert message.encode() in r.content, r.content.decode()[-3000:]
    assert not Policy.objects.exists()


def test_a_template_qi_without_rules_is_refused(client_alice, user):
    from anonymizer_helpers import make_dataset

    template = make_dataset(user)  # age is a quasi-identifier there
    r = client_alice.post("/policies/import/", {"file": upload(AMNESIA_RULES.encode(), "rules.txt"), "k": 2,
                                                "dataset": template.pk})
    assert r.status_code == 400
    assert b"&#x27;age&#x27; is a quasi-identifier of small but the rules do not cover it" in r.content
