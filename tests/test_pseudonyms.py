"""Keyed pseudonyms, masks and surrogates in the web app: the key ring (secret shown once, stored encrypted,
owner-only), the identifiers page, runs of two uploads under one key (same pseudonyms, equal to an
independent HMAC), the re-identification table (password asked, owner-only), and a scan of every page and
download of a result for the secret (hex, base64, raw) and the mapping."""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import re

import pandas as pd
import pytest
from anonymizer_helpers import make_dataset
from api_helpers import api_for
from pypdf import PdfReader

from anonymizer_app.engine import Role
from anonymizer_app.models import PseudonymKey, ReidentificationTable
from anonymizer_app.services import jobs, pseudonyms, vault

pytestmark = pytest.mark.django_db

# distinctive names: none of them can occur in a page's own text
CSV_A = """name,age,zip,sex,disease
Zorblax Quint,34,10115,F,flu
Yventa Plosk,36,10117,M,cold
Xarnob Trell,35,10119,M,flu
Wubbler Fenk,52,20095,F,asthma
Vostrim Galb,55,20097,F,flu
,58,20099,F,cold
"""
CSV_B = """name,age,zip,sex,disease
Xarnob Trell,44,10115,M,flu
Qwimbly Dorn,46,10117,F,cold
Zorblax Quint,45,10119,M,flu
Ulmfrey Stake,42,20095,F,asthma
"""
NAMES = ["Zorblax Quint", "Yventa Plosk", "Xarnob Trell", "Wubbler Fenk", "Vostrim Galb", "Qwimbly Dorn",
         "Ulmfrey Stake"]
ROLES = {"name": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
         "sex": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}


def _hmac(secret: bytes, value: str, n: int = 16) -> str:
    return hmac.new(secret, value.encode(), hashlib.sha256).hexdigest()[:n]


def _new_key(client, name="clinic", secret=""):
    r = client.post("/keys/", {"name": name, "secret": secret})
    assert r.status_code == 200
    shown = re.search(r'<code id="new-secret-value">([0-9a-f]+)</code>', r.content.decode()).group(1)
    return PseudonymKey.objects.get(name=name), bytes.fromhex(shown), r


def _treat(client, dataset, data: dict):
    position = dataset.columns.get(name="name").position
    post = {f"{k}-{position}": v for k, v in data.items()}
    return client.post(f"/datasets/{dataset.pk}/identifiers/", post)


def _run(dataset, reid=False):
    job = jobs.create_job(dataset, "datafly", 2, 0.0, "disease")  # no suppression: every row published, in order
    pseudonyms.snapshot(job, reid)
    return jobs.run_job(job)


def _published(client, job) -> pd.DataFrame:
    r = client.get(f"/jobs/{job.pk}/result/anonymized.csv")
    assert r.status_code == 200
    return pd.read_csv(io.StringIO(b"".join(r.streaming_content).decode() if r.streaming else r.content.decode()),
                       dtype=str, keep_default_na=False)


def test_a_key_is_shown_once_and_stored_encrypted(client_alice, user):
    key, secret, r = _new_key(client_alice)
    assert len(secret) == 32 and "no-store" in r["Cache-Control"]
    assert secret.hex() not in key.secret and pseudonyms.key_secret(key) == secret
    assert vault.decrypt_text(key.secret) == secret.hex()
    page = client_alice.get("/keys/").content.decode()
    assert "clinic" in page and secret.hex() not in page


def test_an_entered_secret_is_checked(client_alice, user):
    r = client_alice.post("/keys/", {"name": "mine", "secret": "zz"})
    assert r.status_code == 400 and "hexadecimal" in r.content.decode()
    r = client_alice.post("/keys/", {"name": "mine", "secret": "ab" * 8 + "c"})
    assert r.status_code == 400
    r = client_alice.post("/keys/", {"name": "mine", "secret": "ab" * 15})
    assert r.status_code == 400 and "at least 16 bytes" in r.content.decode()
    key, secret, _ = _new_key(client_alice, "mine", "00" * 16 + "ff" * 16)
    assert secret == bytes(16) + b"\xff" * 16 and pseudonyms.key_secret(key) == secret
    r = client_alice.post("/keys/", {"name": "mine", "secret": ""})
    assert r.status_code == 400 and "already have a key named" in r.content.decode()


def test_keys_and_pages_are_the_owners(client, user, other_user):
    client.force_login(user)
    key, _, _ = _new_key(client)
    ds = make_dataset(user, CSV_A, roles=ROLES)
    client.force_login(other_user)
    assert client.get(f"/keys/{key.pk}/delete/").status_code == 404
    assert client.post(f"/keys/{key.pk}/delete/").status_code == 404
    assert client.get(f"/datasets/{ds.pk}/identifiers/").status_code == 404
    assert "clinic" not in client.get("/keys/").content.decode()
    # another user's dataset cannot name this key
    mine = make_dataset(other_user, CSV_A, roles=ROLES)
    r = _treat(client, mine, {"treatment": "pseudonym", "key": str(key.pk)})
    assert r.status_code == 400 and "choose one of your pseudonymization keys" in r.content.decode()
    assert mine.columns.get(name="name").identifier_rule == {}
    assert PseudonymKey.objects.filter(pk=key.pk).exists()
    client.logout()
    assert client.get("/keys/").status_code == 302


def test_same_identifier_in_two_uploads_gets_the_same_pseudonym(client_alice, user):
    key, secret, _ = _new_key(client_alice)
    other, other_secret, _ = _new_key(client_alice, "other")
    a = make_dataset(user, CSV_A, roles=ROLES, name="A")
    b = make_dataset(user, CSV_B, roles=ROLES, name="B")
    for ds in (a, b):
        r = _treat(client_alice, ds, {"treatment": "pseudonym", "key": str(key.pk)})
        assert r.status_code == 302
    assert a.columns.get(name="name").identifier_rule == {"treatment": "pseudonym", "key": str(key.pk),
                                                          "case_sensitive": True, "length": 16}
    ja, jb = _run(a), _run(b)
    assert ja.status == jb.status == "succeeded", (ja.message, jb.message)
    pa, pb = _published(client_alice, ja), _published(client_alice, jb)
    raw_a = pd.read_csv(io.StringIO(CSV_A), dtype=str, keep_default_na=False)
    raw_b = pd.read_csv(io.StringIO(CSV_B), dtype=str, keep_default_na=False)
    for published, raw in ((pa, raw_a), (pb, raw_b)):
        assert list(published.columns)[:2] == ["name", "age"]
        expected = ["" if v == "" else _hmac(secret, v) for v in raw["name"]]
        assert list(published["name"]) == expected
    joined = set(pa["name"]) & set(pb["name"]) - {""}
    assert joined == {_hmac(secret, "Zorblax Quint"), _hmac(secret, "Xarnob Trell")}
    # another key: unrelated pseudonyms
    r = _treat(client_alice, b, {"treatment": "pseudonym", "key": str(other.pk)})
    jc = _run(b)
    pc = _published(client_alice, jc)
    assert not set(pc["name"]) & set(pb["name"])
    assert set(pc["name"]) == {_hmac(other_secret, n) for n in raw_b["name"]}
    page = client_alice.get(f"/jobs/{jc.pk}/").content.decode()
    assert "keyed pseudonym" in page and "&#x27;other&#x27;" in page


def test_masks_and_surrogates_from_the_page(client_alice, user):
    ds = make_dataset(user, CSV_A, roles=ROLES)
    assert _treat(client_alice, ds, {"treatment": "mask", "prefix": "2", "suffix": "1", "char": "#"}).status_code == 302
    published = _published(client_alice, _run(ds))
    raw = pd.read_csv(io.StringIO(CSV_A), dtype=str, keep_default_na=False)["name"]
    masked = {v[:2] + "#" * (len(v) - 3) + v[-1] for v in raw if v} | {""}
    assert list(published["name"]) == [v[:2] + "#" * (len(v) - 3) + v[-1] if v else "" for v in raw]
    assert published["name"][0] == "Zo##########t" and masked
    r = _treat(client_alice, ds, {"treatment": "mask", "regex": "("})
    assert r.status_code == 400 and "bad regex" in r.content.decode()
    assert _treat(client_alice, ds, {"treatment": "surrogate"}).status_code == 302
    one, two = _published(client_alice, _run(ds)), _published(client_alice, _run(ds))
    tokens = [t for t in one["name"] if t]
    assert len(set(tokens)) == len(tokens) and all(re.fullmatch(r"[0-9a-f]{16}", t) for t in tokens)
    assert not set(tokens) & set(two["name"])
    assert _treat(client_alice, ds, {"treatment": "remove"}).status_code == 302
    assert "name" not in _published(client_alice, _run(ds)).columns


def test_reidentification_table_needs_the_password_and_is_the_owners(client, user, other_user):
    client.force_login(user)
    key, secret, _ = _new_key(client)
    ds = make_dataset(user, CSV_A, roles=ROLES)
    _treat(client, ds, {"treatment": "pseudonym", "key": str(key.pk)})
    plain = _run(ds)
    assert client.get(f"/jobs/{plain.pk}/result/reidentification/").status_code == 404
    job = _run(ds, reid=True)
    table = ReidentificationTable.objects.get(job=job)
    assert "Zorblax" not in table.data and _hmac(secret, "Zorblax Quint") not in table.data
    url = f"/jobs/{job.pk}/result/reidentification/"
    assert client.get(url).status_code == 200
    r = client.post(url, {"password": "wrong"})
    assert r.status_code == 400 and "not your password" in r.content.decode()
    r = client.post(url, {"password": user.raw_password})
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    lines = r.content.decode().splitlines()
    assert lines[0] == "column,original,pseudonym"
    published = _published(client, job)
    assert set(lines[1:]) == {f"name,{n},{_hmac(secret, n)}" for n in NAMES[:5]}
    assert set(published["name"]) == {_hmac(secret, n) for n in NAMES[:5]} | {""}
    client.force_login(other_user)
    assert client.get(url).status_code == 404
    assert client.post(url, {"password": other_user.raw_password}).status_code == 404


def _scan(text: str, secret: bytes) -> list[str]:
    forbidden = [secret.hex(), secret.hex().upper(), base64.b64encode(secret).decode(),
                 base64.urlsafe_b64encode(secret).decode().rstrip("=")] + NAMES
    return [f for f in forbidden if f in text]


def test_nothing_of_the_secret_or_the_mapping_leaves(client_alice, user):
    key, secret, _ = _new_key(client_alice)
    ds = make_dataset(user, CSV_A, roles=ROLES)
    _treat(client_alice, ds, {"treatment": "pseudonym", "key": str(key.pk)})
    job = _run(ds, reid=True)
    assert job.status == "succeeded", job.message
    base = f"/jobs/{job.pk}"
    texts = {}
    for url in [f"{base}/", f"{base}/result/", f"{base}/config.json", f"{base}/result/release-report/",
                f"{base}/result/anonymized.csv", f"{base}/result/anonymized.csv?format=tsv",
                f"{base}/result/anonymized.csv?format=jsonl", "/keys/", f"/datasets/{ds.pk}/identifiers/",
                f"/datasets/{ds.pk}/run/?from={job.pk}"]:
        r = client_alice.get(url)
        assert r.status_code == 200, url
        body = b"".join(r.streaming_content) if r.streaming else r.content
        texts[url] = body.decode("utf-8", "replace")
        assert secret not in body, url
    r = client_alice.get(f"{base}/result/release-report.pdf")
    assert r.status_code == 200
    texts["pdf"] = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(r.content)).pages)
    for fmt in ("parquet", "xlsx"):
        r = client_alice.get(f"{base}/result/anonymized.csv?format={fmt}")
        if r.status_code == 200:
            body = b"".join(r.streaming_content) if r.streaming else r.content
            assert secret not in body and not any(n.encode() in body for n in NAMES), fmt
    texts["report"] = json.dumps(job.result.report)
    texts["config"] = json.dumps(job.config) + json.dumps(job.options)
    # the policy saved from the result, exported as a file
    r = client_alice.post(f"/policies/save/{job.pk}/", {"name": "quarterly", "description": ""})
    assert r.status_code == 302
    from policies.models import Policy

    policy = Policy.objects.get(owner=user, name="quarterly")
    r = client_alice.get(f"/policies/{policy.pk}/versions/1/export/")
    assert r.status_code == 200
    texts["policy"] = r.content.decode()
    assert json.loads(r.content)["identifiers"] == [
        {"column": "name", "treatment": "pseudonym", "key": str(key.pk), "case_sensitive": True, "length": 16}]
    assert "quarterly" in client_alice.get(f"/keys/{key.pk}/delete/").content.decode()  # the policy naming the key
    # the HTTP API's views of the result
    api = api_for(user)
    for path in ("", "report/", "rows/", "download/", "config/", "release-report/"):
        r = api.get(f"/api/v1/runs/{job.pk}/{path}")
        if r.status_code == 200:
            body = b"".join(r.streaming_content) if r.streaming else r.content
            texts[f"api {path}"] = body.decode("utf-8", "replace")
    assert {"api ", "api report/", "api rows/", "api config/"} <= set(texts)
    leaks = {url: _scan(text, secret) for url, text in texts.items() if _scan(text, secret)}
    assert leaks == {}
    # the pseudonyms themselves are published (that is the point), and the result page links the table
    assert _hmac(secret, "Zorblax Quint") in texts[f"{base}/result/anonymized.csv"]
    assert "/result/reidentification/" in texts[f"{base}/result/"]
    # Edit and re-run: the run form lists the treatment and keeps the re-identification table ticked
    rerun = texts[f"/datasets/{ds.pk}/run/?from={job.pk}"]
    assert re.search(r'<input type="checkbox" name="reidentification_table"[^>]* checked', rerun)
    assert 'id="run-identifiers"' in rerun and "keyed pseudonym" in rerun
    # the release report's command line repeats the treatment, the key by a file name only
    assert "--pseudonymize name" in texts[f"{base}/result/release-report/"]
    assert "--pseudonym-key-file KEY.hex" in texts[f"{base}/result/release-report/"]
    assert "published as keyed pseudonym (HMAC-SHA-256" in texts[f"{base}/result/release-report/"]


def test_deleting_a_key_names_its_users_and_the_run_then_stops(client_alice, user):
    key, _, _ = _new_key(client_alice)
    ds = make_dataset(user, CSV_A, roles=ROLES)
    _treat(client_alice, ds, {"treatment": "pseudonym", "key": str(key.pk)})
    job = jobs.create_job(ds, "datafly", 2, 0.5, "disease")
    page = client_alice.get(f"/keys/{key.pk}/delete/").content.decode()
    assert f"{ds.name}: name" in page
    assert client_alice.post(f"/keys/{key.pk}/delete/").status_code == 302
    assert not PseudonymKey.objects.filter(pk=key.pk).exists()
    assert ds.columns.get(name="name").identifier_rule == {}
    done = jobs.run_job(job)  # queued before the deletion: it names a key that is gone
    assert done.status == "failed" and "no longer exists" in done.message


def test_reidentification_table_is_erased_with_its_job_and_account(client_alice, user):
    key, _, _ = _new_key(client_alice)
    ds = make_dataset(user, CSV_A, roles=ROLES)
    _treat(client_alice, ds, {"treatment": "surrogate"})
    job = _run(ds, reid=True)
    assert ReidentificationTable.objects.filter(job=job).exists()
    from anonymizer_app.services import erasure

    erasure.erase_job(job)
    assert not ReidentificationTable.objects.exists()
    job = _run(ds, reid=True)
    ds2 = make_dataset(user, CSV_B, roles=ROLES)
    _treat(client_alice, ds2, {"treatment": "surrogate"})
    assert ReidentificationTable.objects.filter(job=_run(ds2, reid=True)).exists()
    erasure.erase_dataset(ds2)
    assert ReidentificationTable.objects.count() == 1
    erasure.erase_user(user)
    assert not ReidentificationTable.objects.exists() and not PseudonymKey.objects.exists()


def test_the_web_key_gives_the_command_line_the_same_pseudonyms(client_alice, user, tmp_path):
    from django.core.management import call_command

    key, secret, _ = _new_key(client_alice)
    ds = make_dataset(user, CSV_A, roles=ROLES)
    _treat(client_alice, ds, {"treatment": "pseudonym", "key": str(key.pk)})
    web = _published(client_alice, _run(ds))
    (tmp_path / "in.csv").write_text(CSV_A)
    (tmp_path / "key.hex").write_text(secret.hex())
    call_command("anonymize", str(tmp_path / "in.csv"), "--qi", "age", "--qi", "zip", "--qi", "sex", "--k", "2",
                 "--pseudonymize", "name", "--pseudonym-key-file", str(tmp_path / "key.hex"),
                 "--out", str(tmp_path / "out.csv"), "--quiet")
    cli = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)
    assert list(cli["name"]) == list(web["name"])


def test_wrong_passwords_on_the_table_page_count_as_failed_logins(client, user):
    """The page asks through authenticate(): django-axes locks the account after its limit (5), as the login
    page does, so an open session cannot be used to guess the password; then the right one is refused too."""
    client.force_login(user)
    key, _, _ = _new_key(client)
    ds = make_dataset(user, CSV_A, roles=ROLES)
    _treat(client, ds, {"treatment": "pseudonym", "key": str(key.pk)})
    url = f"/jobs/{_run(ds, reid=True).pk}/result/reidentification/"
    for _ in range(4):
        r = client.post(url, {"password": "guess"})
        assert r.status_code == 400 and "not your password" in r.content.decode()
    r = client.post(url, {"password": "guess"})
    assert r.status_code == 400 and "Too many wrong passwords" in r.content.decode()
    r = client.post(url, {"password": user.raw_password})
    assert r.status_code == 400 and "Too many wrong passwords" in r.content.decode()
