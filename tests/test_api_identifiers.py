"""API identifier treatments: the key ring (secret in the creating answer only, no-store, stored encrypted;
deletion names its policies and columns), a dataset's treatments (the web page's messages, all or nothing),
the run option "keep a re-identification table" and the table's download (the password, not the key alone);
owner only (404), no key 401; the secret in no later answer."""

from __future__ import annotations

import base64
import csv
import hashlib
import hmac
import io
import json

import pytest
from anonymizer_helpers import make_dataset
from api_helpers import Api, api_for, eager_celery  # noqa: F401

from anonymizer_app.engine import Role
from anonymizer_app.models import Job, PseudonymKey, ReidentificationTable
from anonymizer_app.services import vault
from policies.models import Policy, PolicyVersion

pytestmark = pytest.mark.django_db

CSV = """name,phone,age,zip,sex,disease
Zorblax Quint,030-1234567,34,10115,F,flu
Yventa Plosk,030-7654321,36,10117,M,cold
Xarnob Trell,040-5550001,35,10119,M,flu
Wubbler Fenk,040-5550002,52,20095,F,asthma
Vostrim Galb,089-1112223,55,20097,F,flu
zorblax quint,089-3332221,58,20099,F,cold
"""
NAMES = ["Zorblax Quint", "Yventa Plosk", "Xarnob Trell", "Wubbler Fenk", "Vostrim Galb", "zorblax quint"]
ROLES = {"name": Role.IDENTIFYING, "phone": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING,
         "zip": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}
SECRET = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"


def _hmac(secret: bytes, value: str, n: int = 16) -> str:
    return hmac.new(secret, value.encode(), hashlib.sha256).hexdigest()[:n]


def _text(response) -> str:
    return (b"".join(response.streaming_content) if response.streaming else response.content).decode()


# ---- keys ------------------------------------------------------------------------------------------------
def test_a_generated_key_is_shown_once_and_stored_encrypted(user):
    api = api_for(user)
    r = api.post("/api/v1/keys/", {"name": "clinic"})
    assert r.status_code == 201, r.content
    body = r.json()
    assert set(body) == {"id", "name", "created", "columns", "policies", "secret"}
    assert (body["name"], body["columns"], body["policies"]) == ("clinic", [], [])
    assert len(bytes.fromhex(body["secret"])) == 32 and "no-store" in r["Cache-Control"]
    key = PseudonymKey.objects.get(pk=body["id"])
    assert key.owner == user and body["secret"] not in key.secret
    assert vault.decrypt_text(key.secret) == body["secret"]
    listed = api.get("/api/v1/keys/")
    assert listed.status_code == 200
    assert [{k: v for k, v in row.items() if k != "created"} for row in listed.json()] == \
        [{"id": key.pk, "name": "clinic", "columns": [], "policies": []}]
    detail = api.get(f"/api/v1/keys/{key.pk}/")
    assert detail.status_code == 200 and "secret" not in detail.json()
    for later in (listed, detail):
        assert body["secret"] not in later.content.decode()


def test_an_entered_secret_is_checked_with_the_web_messages(user):
    api = api_for(user)
    r = api.post("/api/v1/keys/", {"name": "mine", "secret": SECRET.upper()})
    assert r.status_code == 201 and r.json()["secret"] == SECRET
    assert vault.decrypt_text(PseudonymKey.objects.get(name="mine").secret) == SECRET
    bad = [({"name": "short", "secret": "abcd1234"},
            "the secret must be at least 16 bytes (32 hex digits), got 4"),
           ({"name": "nothex", "secret": "zz" * 16}, "the secret must be hexadecimal digits (0-9, a-f)"),
           ({"name": "mine"}, "you already have a key named 'mine'"),
           ({"name": "   "}, "give the key a name")]
    for data, message in bad:
        r = api.post("/api/v1/keys/", data)
        assert (r.status_code, r.json()["detail"]) == (400, message), r.content
    r = api.post("/api/v1/keys/", {})
    assert r.status_code == 400 and set(r.json()["errors"]) == {"name"}
    assert list(PseudonymKey.objects.values_list("name", flat=True)) == ["mine"]


def test_keys_are_the_owners(user, other_user):
    mine = api_for(user).post("/api/v1/keys/", {"name": "clinic"}).json()
    theirs = api_for(other_user)
    assert theirs.get("/api/v1/keys/").json() == []
    assert theirs.get(f"/api/v1/keys/{mine['id']}/").status_code == 404
    assert theirs.delete(f"/api/v1/keys/{mine['id']}/").status_code == 404
    anonymous = Api(None)
    assert anonymous.get("/api/v1/keys/").status_code == 401
    assert anonymous.post("/api/v1/keys/", {"name": "x"}).status_code == 401
    assert anonymous.get(f"/api/v1/keys/{mine['id']}/").status_code == 401
    assert anonymous.delete(f"/api/v1/keys/{mine['id']}/").status_code == 401
    assert PseudonymKey.objects.filter(pk=mine["id"], owner=user).exists()
    # the other account's own key of the same name is another key
    assert theirs.post("/api/v1/keys/", {"name": "clinic"}).status_code == 201


def test_deleting_a_key_names_its_policies_and_columns(user):
    api = api_for(user)
    key = api.post("/api/v1/keys/", {"name": "clinic"}).json()
    ds = make_dataset(user, CSV, roles=ROLES, name="patients")
    assert api.put(f"/api/v1/datasets/{ds.pk}/identifiers/",
                   {"columns": [{"column": "name", "treatment": "pseudonym", "key": key["id"]}]}).status_code == 200
    policy = Policy.objects.create(owner=user, name="quarterly")
    PolicyVersion.objects.create(policy=policy, number=1, config={"identifiers": [
        {"column": "name", "treatment": "pseudonym", "key": str(key["id"])}]})
    assert api.get(f"/api/v1/keys/{key['id']}/").json()["policies"] == ["quarterly"]
    r = api.delete(f"/api/v1/keys/{key['id']}/")
    assert r.status_code == 200
    assert r.json() == {"detail": "Key 'clinic' deleted.", "policies": ["quarterly"], "columns": ["patients: name"]}
    assert not PseudonymKey.objects.exists()
    assert ds.columns.get(name="name").identifier_rule == {}  # back to removal, as the web deletion
    assert api.delete(f"/api/v1/keys/{key['id']}/").status_code == 404


# ---- a dataset's treatments -------------------------------------------------------------------------------
def test_treatments_get_and_put(user):
    api = api_for(user)
    key = api.post("/api/v1/keys/", {"name": "clinic"}).json()
    ds = make_dataset(user, CSV, roles=ROLES)
    url = f"/api/v1/datasets/{ds.pk}/identifiers/"
    got = api.get(url).json()
    assert got["columns"] == [{"column": "name", "treatment": "remove"}, {"column": "phone", "treatment": "remove"}]
    assert set(got["treatments"]) == {"remove", "pseudonym", "mask", "surrogate"}
    r = api.put(url, {"columns": [
        {"column": "name", "treatment": "pseudonym", "key": key["id"], "case_sensitive": False, "length": 20},
        {"column": "phone", "treatment": "mask", "prefix": 4, "suffix": 0, "char": "#"}]})
    assert r.status_code == 200, r.content
    assert r.json()["columns"] == [
        {"column": "name", "treatment": "pseudonym", "key": key["id"], "case_sensitive": False, "length": 20},
        {"column": "phone", "treatment": "mask", "prefix": 4, "suffix": 0, "char": "#"}]
    assert ds.columns.get(name="name").identifier_rule == {"treatment": "pseudonym", "key": str(key["id"]),
                                                           "case_sensitive": False, "length": 20}
    assert api.get(url).json()["columns"] == r.json()["columns"]
    # a column left out goes back to removal
    r = api.put(url, {"columns": [{"column": "phone", "treatment": "mask", "regex": "[0-9]", "char": "#"}]})
    assert r.json()["columns"] == [{"column": "name", "treatment": "remove"},
                                   {"column": "phone", "treatment": "mask", "regex": "[0-9]", "char": "#"}]
    assert ds.columns.get(name="name").identifier_rule == {}


def test_treatments_are_all_or_nothing_with_the_web_messages(user, other_user):
    api = api_for(user)
    key = api.post("/api/v1/keys/", {"name": "clinic"}).json()
    foreign = api_for(other_user).post("/api/v1/keys/", {"name": "theirs"}).json()
    ds = make_dataset(user, CSV, roles=ROLES)
    url = f"/api/v1/datasets/{ds.pk}/identifiers/"
    good = {"column": "name", "treatment": "pseudonym", "key": key["id"]}
    assert api.put(url, {"columns": [good]}).status_code == 200
    before = {c.name: c.identifier_rule for c in ds.columns.all()}
    cases = [
        ([good, {"column": "phone", "treatment": "surrogate", "length": 3}],
         "identifier rule for 'phone': identifier column 'phone': token length must be 8..64 hex digits, got 3"),
        ([{"column": "name", "treatment": "pseudonym", "key": foreign["id"]}],
         "column 'name': choose one of your pseudonymization keys"),
        ([{"column": "name", "treatment": "pseudonym"}], "identifier rule for 'name': identifier column 'name': a pseudonym needs a key"),
        ([good, {"column": "phone", "treatment": "mask", "regex": "x*"}],
         "identifier rule for 'phone': identifier column 'phone': regex 'x*' matches the empty string; it would mask nothing"),
        ([good, {"column": "age", "treatment": "mask"}],
         "column 'age' is not identifying: only identifying and person-id columns are treated"),
        ([{"column": "email", "treatment": "surrogate"}], "column 'email': the dataset has no such column"),
        ([good, good], "column 'name' is given twice"),
    ]
    for columns, message in cases:
        r = api.put(url, {"columns": columns})
        assert (r.status_code, r.json()["detail"]) == (400, message), r.content
        assert r.json()["errors"] == {"columns": [message]}
        assert {c.name: c.identifier_rule for c in ds.columns.all()} == before
    # two problems at once: both named, nothing saved
    r = api.put(url, {"columns": [{"column": "name", "treatment": "surrogate", "length": 99},
                                  {"column": "phone", "treatment": "mask", "char": "##"}]})
    assert r.json()["errors"]["columns"] == [
        "identifier rule for 'name': identifier column 'name': token length must be 8..64 hex digits, got 99",
        "identifier rule for 'phone': identifier column 'phone': the mask character must be one character, got '##'"]
    assert {c.name: c.identifier_rule for c in ds.columns.all()} == before
    r = api.put(url, {"columns": [{"column": "name", "treatment": "shred"}]})
    assert r.status_code == 400 and "columns" in r.json()["errors"]


def test_treatments_are_the_owners(user, other_user):
    ds = make_dataset(user, CSV, roles=ROLES)
    url = f"/api/v1/datasets/{ds.pk}/identifiers/"
    theirs = api_for(other_user)
    assert theirs.get(url).status_code == 404
    assert theirs.put(url, {"columns": [{"column": "name", "treatment": "surrogate"}]}).status_code == 404
    assert Api(None).get(url).status_code == 401
    assert Api(None).put(url, {"columns": []}).status_code == 401
    assert ds.columns.get(name="name").identifier_rule == {}


# ---- runs: pseudonyms, the re-identification table, no secret anywhere -------------------------------------
def _submit(api, ds, **extra):
    r = api.post("/api/v1/runs/", {"dataset": ds.pk, "algorithm": "datafly", "k": 2, "suppression_percent": 0,
                                   "sensitive": "disease", **extra})
    assert r.status_code == 201, r.content
    return r.json()


def test_a_run_pseudonymizes_and_keeps_a_reidentification_table(user, other_user, eager_celery):  # noqa: F811
    api = api_for(user)
    created = api.post("/api/v1/keys/", {"name": "clinic", "secret": SECRET}).json()
    secret = bytes.fromhex(created["secret"])
    ds = make_dataset(user, CSV, roles=ROLES, name="patients")
    assert api.put(f"/api/v1/datasets/{ds.pk}/identifiers/", {"columns": [
        {"column": "name", "treatment": "pseudonym", "key": created["id"], "case_sensitive": False},
        {"column": "phone", "treatment": "mask", "prefix": 3, "suffix": 0}]}).status_code == 200
    job = _submit(api, ds, reidentification_table=True)
    polled = api.get(f"/api/v1/runs/{job['id']}/").json()
    assert (polled["status"], polled["reidentification_table"]) == ("succeeded", True)
    rows = api.get(f"/api/v1/runs/{job['id']}/rows/").json()
    name_at, phone_at = rows["columns"].index("name"), rows["columns"].index("phone")
    # independently: HMAC-SHA-256 of the case-folded name, 16 hex digits; the phone's first 3 characters kept
    assert [row[name_at] for row in rows["rows"]] == [_hmac(secret, n.casefold()) for n in NAMES]
    assert rows["rows"][0][name_at] == rows["rows"][5][name_at]  # case folded: the same person
    assert [row[phone_at] for row in rows["rows"]] == [p[:3] + "*" * (len(p) - 3) for p in
                                                       ("030-1234567", "030-7654321", "040-5550001", "040-5550002",
                                                        "089-1112223", "089-3332221")]
    assert ReidentificationTable.objects.filter(job_id=job["id"]).exists()

    url = f"/api/v1/runs/{job['id']}/reidentification/"
    assert api.post(url, {}).status_code == 400  # the key alone is not enough
    wrong = api.post(url, {"password": "not-it"})
    assert (wrong.status_code, wrong.json()["detail"]) == (403, "password: that is not your password")
    assert api_for(other_user).post(url, {"password": other_user.raw_password}).status_code == 404
    assert Api(None).post(url, {"password": user.raw_password}).status_code == 401
    r = api.post(url, {"password": user.raw_password})
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv") and "no-store" in r["Cache-Control"]
    table = list(csv.reader(io.StringIO(_text(r))))
    assert table[0] == ["column", "original", "pseudonym"]
    assert sorted(tuple(row) for row in table[1:] if row[0] == "name") == sorted(
        ("name", n, _hmac(secret, n.casefold())) for n in NAMES)

    # a run without the option keeps no table; its download is a 404
    plain = _submit(api, ds)
    assert plain["reidentification_table"] is False
    assert not ReidentificationTable.objects.filter(job_id=plain["id"]).exists()
    assert api.post(f"/api/v1/runs/{plain['id']}/reidentification/",
                    {"password": user.raw_password}).status_code == 404

    # the secret (hex, base64) and the mapping's originals are in no later answer
    forms = [secret.hex(), secret.hex().upper(), base64.b64encode(secret).decode()]
    later = [api.get("/api/v1/keys/"), api.get(f"/api/v1/keys/{created['id']}/"),
             api.get(f"/api/v1/datasets/{ds.pk}/identifiers/"), api.get(f"/api/v1/runs/{job['id']}/"),
             api.get("/api/v1/runs/"), api.get(f"/api/v1/runs/{job['id']}/report/"),
             api.get(f"/api/v1/runs/{job['id']}/rows/"), api.get(f"/api/v1/runs/{job['id']}/download/"),
             api.get(f"/api/v1/runs/{job['id']}/config/"), api.get(f"/api/v1/runs/{job['id']}/release-report/")]
    for response in later:
        assert response.status_code == 200, response.content[:300]
        text = _text(response)
        assert not any(f in text for f in forms), response
    for response in later[3:]:  # the run's answers: no original name either
        text = _text(response)
        assert not any(n in text for n in NAMES[:5]), response
    assert Job.objects.get(pk=job["id"]).config["reidentification_table"] is True


def test_wrong_passwords_lock_the_table_as_failed_logins(user, eager_celery):  # noqa: F811
    api = api_for(user)
    ds = make_dataset(user, CSV, roles=ROLES)
    api.put(f"/api/v1/datasets/{ds.pk}/identifiers/", {"columns": [{"column": "name", "treatment": "surrogate"}]})
    url = f"/api/v1/runs/{_submit(api, ds, reidentification_table=True)['id']}/reidentification/"
    for _ in range(4):
        assert api.post(url, {"password": "guess"}).status_code == 403
    locked = api.post(url, {"password": "guess"})  # the 5th failure: the login throttle's limit
    assert locked.status_code == 429 and locked.json()["detail"].startswith("too many wrong passwords")
    # now even the right password is refused, as the login page would
    r = api.post(url, {"password": user.raw_password})
    assert r.status_code == 429 and r["Content-Type"] == "application/json"


def test_the_schema_documents_the_operations(user):
    r = api_for(user).get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert r.status_code == 200
    paths = json.loads(r.content)["paths"]
    operations = {(p, m) for p, item in paths.items() for m in item if m in ("get", "post", "put", "delete")}
    assert {("/api/v1/keys/", "get"), ("/api/v1/keys/", "post"), ("/api/v1/keys/{key_id}/", "get"),
            ("/api/v1/keys/{key_id}/", "delete"), ("/api/v1/datasets/{dataset_id}/identifiers/", "get"),
            ("/api/v1/datasets/{dataset_id}/identifiers/", "put"),
            ("/api/v1/runs/{job_id}/reidentification/", "post")} <= operations
    created = paths["/api/v1/keys/"]["post"]["responses"]["201"]["content"]["application/json"]["schema"]["$ref"]
    assert created.endswith("/KeyCreated")
    assert "text/csv" in paths["/api/v1/runs/{job_id}/reidentification/"]["post"]["responses"]["200"]["content"]
