"""The vault key (services/vault.py, docs/vault.md): its own setting, never derived from SECRET_KEY; rotation with
ANONYMIZER_VAULT_OLD_KEYS and `manage.py rotate_vault_key` over every kind of stored secret; the move off the key
earlier versions derived from SECRET_KEY; a wrong or missing key is a clear message naming ANONYMIZER_VAULT_KEY
on every surface (web, API, job, connection), never a 500; the system check and `make serve` refuse a server
without a key of its own."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from anonymizer_helpers import finished_job, make_dataset
from api_helpers import api_for
from cryptography.fernet import Fernet, InvalidToken
from django.core.management import CommandError, call_command

from anonymizer_app import checks
from anonymizer_app.engine import Role
from anonymizer_app.engine.republication import History
from anonymizer_app.models import Job, PseudonymKey, ReidentificationTable, RemoteAccount
from anonymizer_app.services import dicom, jobs, pseudonyms, republication, sql, storage, vault
from anonymizer_app.services import dicom as dicom_service
from policies.models import Policy, PolicyVersion, Release

REPO = Path(__file__).resolve().parents[2]
KEY_A, KEY_B, KEY_C = (Fernet.generate_key().decode() for _ in range(3))
CSV = """name,age,zip,sex,disease
Zorblax Quint,34,10115,F,flu
Yventa Plosk,36,10117,M,cold
Xarnob Trell,35,10119,M,flu
Wubbler Fenk,52,20095,F,asthma
"""
ROLES = {"name": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
         "sex": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}
PSEUDONYM_SECRET = bytes(range(32))
MAPPING = {"name": {"Zorblax Quint": "a1b2", "Yventa Plosk": "c3d4"}}
TOKEN = "zenodo-token-0123456789abcdef"
PASSWORD = "sql-pass-w0rd"
UID_KEY = "ab" * 32
STATE_SECRET = bytes(range(100, 132))
KINDS = ["pseudonymization keys", "re-identification tables", "repository connection tokens", "saved SQL passwords",
         "m-invariance release states", "DICOM UID keys", "m-invariance state files"]


def _use(settings, key: str, old: list[str] | None = None) -> None:
    settings.ANONYMIZER_VAULT_KEY = key
    settings.ANONYMIZER_VAULT_OLD_KEYS = old or []


@pytest.fixture
def stored(settings, user, tmp_path):
    """One secret of every kind the vault stores, each through the code that stores it, under KEY_A."""
    _use(settings, KEY_A)
    ds = make_dataset(user, CSV, roles=ROLES, name="patients")
    key = PseudonymKey.objects.create(owner=user, name="clinic", secret=vault.encrypt_text(PSEUDONYM_SECRET.hex()))
    job = finished_job(ds, sensitive="disease")
    pseudonyms.store_reidentification(_asked_table(job), MAPPING)
    account = RemoteAccount(owner=user, service="zenodo", base_url="https://zenodo.org", name="mine")
    account.set_token(TOKEN)
    account.save()
    ds.sql_source = {"url": "postgresql://reader@db.example/clinic", "table": "patients",
                     "password": vault.encrypt_text(PASSWORD)}
    ds.save(update_fields=["sql_source"])
    version = PolicyVersion.objects.create(policy=Policy.objects.create(owner=user, name="quarterly"), number=1,
                                           config={})
    history = History.empty(2, "disease", ["age"])
    release = Release.objects.create(policy=version.policy, version=version, job=job, number=1,
                                     state=republication.state_dict(history, STATE_SECRET))
    folder = storage.dicom_dir(ds)
    storage.make_folder(folder)
    (folder / dicom.MANIFEST).write_text(json.dumps({"level": "file", "attributes": [], "files": 0, "file_rows": [],
                                                     "files_per_row": [], "uid_key": vault.encrypt_text(UID_KEY)}))
    state_file = tmp_path / "history.json"
    state_file.write_text(json.dumps(republication.state_dict(history, STATE_SECRET), indent=1, sort_keys=True))
    return {"dataset": ds, "key": key, "job": job, "account": account, "release": release, "state_file": state_file}


def _asked_table(job: Job) -> Job:
    job.config = {**(job.config or {}), "reidentification_table": True}
    job.save(update_fields=["config"])
    return job


def _plaintexts(s: dict, dicom: bool = True) -> dict:
    """Every stored secret read back through the code that reads it."""
    ds = s["dataset"]
    ds.refresh_from_db()
    table = ReidentificationTable.objects.get(job=s["job"])
    rows = list(csv.reader(io.StringIO(pseudonyms.reidentification_csv(table))))
    read = {
        "pseudonymization keys": pseudonyms.key_secret(PseudonymKey.objects.get(pk=s["key"].pk)),
        "re-identification tables": rows[1:],
        "repository connection tokens": RemoteAccount.objects.get(pk=s["account"].pk).token(),
        "saved SQL passwords": sql.reimport_password(ds),
        "m-invariance release states": republication.load_state(Release.objects.get(pk=s["release"].pk).state)[1],
        "m-invariance state files": republication.load_state(json.loads(s["state_file"].read_text()))[1],
    }
    if dicom:
        read["DICOM UID keys"] = vault.decrypt_text(dicom_service.manifest(ds)["uid_key"])
    return read


EXPECTED = {
    "pseudonymization keys": PSEUDONYM_SECRET,
    "re-identification tables": [["name", "Yventa Plosk", "c3d4"], ["name", "Zorblax Quint", "a1b2"]],
    "repository connection tokens": TOKEN,
    "saved SQL passwords": PASSWORD,
    "m-invariance release states": STATE_SECRET,
    "DICOM UID keys": UID_KEY,
    "m-invariance state files": STATE_SECRET,
}


def _tokens(s: dict) -> dict:
    """Every stored ciphertext as it is at rest."""
    ds = s["dataset"]
    ds.refresh_from_db()
    return {
        "pseudonymization keys": PseudonymKey.objects.get(pk=s["key"].pk).secret,
        "re-identification tables": ReidentificationTable.objects.get(job=s["job"]).data,
        "repository connection tokens": RemoteAccount.objects.get(pk=s["account"].pk).token_encrypted,
        "saved SQL passwords": ds.sql_source["password"],
        "m-invariance release states": Release.objects.get(pk=s["release"].pk).state["secret"],
        "DICOM UID keys": dicom.manifest(ds)["uid_key"],
        "m-invariance state files": json.loads(s["state_file"].read_text())["secret"],
    }


def _rotate(*args: str, state_file: Path | None = None) -> str:
    out = io.StringIO()
    extra = ["--state-file", str(state_file)] if state_file else []
    call_command("rotate_vault_key", *args, *extra, stdout=out)
    return out.getvalue()


def _under(token: str, key: str) -> bool:
    try:
        Fernet(key.encode()).decrypt(token.encode())
    except InvalidToken:
        return False
    return True


# ---- rotation --------------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_a_new_key_with_the_old_one_in_old_keys_still_decrypts_everything(settings, stored):
    assert _plaintexts(stored) == EXPECTED
    _use(settings, KEY_B, [KEY_C, KEY_A])
    assert _plaintexts(stored) == EXPECTED
    _use(settings, KEY_B)  # without the old key, nothing opens
    for kind, token in _tokens(stored).items():
        with pytest.raises(vault.VaultError, match="ANONYMIZER_VAULT_KEY"):
            vault.decrypt_text(token)
        assert _under(token, KEY_A) and not _under(token, KEY_B), kind


@pytest.mark.django_db
def test_rotate_vault_key_re_encrypts_every_kind_then_the_old_key_can_go(settings, stored):
    _use(settings, KEY_B, [KEY_A])
    checked = _rotate("--check", state_file=stored["state_file"])
    assert checked.splitlines() == [f"{kind}: 1 stored: 0 under the current key, 1 under an old key, 0 not decryptable"
                                    for kind in KINDS] + [
        "total: 7 stored: 0 under the current key, 7 under an old key, 0 not decryptable"]
    assert all(_under(t, KEY_A) for t in _tokens(stored).values())  # --check wrote nothing

    done = _rotate(state_file=stored["state_file"])
    assert done.splitlines() == [f"{kind}: 1 stored, 1 re-encrypted, 0 already under the current key, "
                                 f"0 not decryptable" for kind in KINDS] + [
        "total: 7 stored, 7 re-encrypted, 0 already under the current key, 0 not decryptable"]
    tokens = _tokens(stored)
    assert all(_under(t, KEY_B) and not _under(t, KEY_A) for t in tokens.values())
    # the state file keeps the CLI's layout (indent 1, sorted keys) and the manifest its other fields
    data = json.loads(stored["state_file"].read_text())
    assert stored["state_file"].read_text() == json.dumps(data, indent=1, sort_keys=True)
    assert dicom.manifest(stored["dataset"])["level"] == "file"

    again = _rotate(state_file=stored["state_file"])  # idempotent: nothing left to do, nothing rewritten
    assert again.splitlines()[-1] == "total: 7 stored, 0 re-encrypted, 7 already under the current key, " \
                                     "0 not decryptable"
    assert _tokens(stored) == tokens

    _use(settings, KEY_B)  # the old key removed
    assert _plaintexts(stored) == EXPECTED
    assert _rotate("--check", state_file=stored["state_file"]).splitlines()[-1] == \
        "total: 7 stored: 7 under the current key, 0 under an old key, 0 not decryptable"


@pytest.mark.django_db
def test_what_no_key_opens_is_named_by_kind_and_id_never_shown(settings, stored, user):
    _use(settings, KEY_C)
    lost = PseudonymKey.objects.create(owner=user, name="lost", secret=vault.encrypt_text("ee" * 32))
    _use(settings, KEY_B, [KEY_A])
    with pytest.raises(CommandError) as checked:
        _rotate("--check")
    message = str(checked.value)
    assert message.startswith(f"1 stored secret(s) cannot be decrypted with any configured key: "
                              f"pseudonymization key {lost.pk}. Add the key they were stored under to "
                              f"ANONYMIZER_VAULT_OLD_KEYS")
    assert "ee" * 32 not in message and KEY_C not in message
    assert _under(PseudonymKey.objects.get(pk=stored["key"].pk).secret, KEY_A)  # nothing written

    with pytest.raises(CommandError, match=f"pseudonymization key {lost.pk}"):
        _rotate()  # the others are rotated all the same; the lost one is left as it was
    assert _under(PseudonymKey.objects.get(pk=stored["key"].pk).secret, KEY_B)
    assert _under(PseudonymKey.objects.get(pk=lost.pk).secret, KEY_C)


@pytest.mark.django_db
def test_a_changed_secret_key_changes_nothing_for_the_vault(settings, stored):
    tokens = _tokens(stored)
    settings.SECRET_KEY = "a-rotated-secret-key-" + "q" * 40
    # all read through the code that reads them, but the DICOM manifest: storage.py names its folder with an
    # HMAC under SECRET_KEY (not the vault's doing), so its token is read as it was found before
    assert _plaintexts(stored, dicom=False) == {k: v for k, v in EXPECTED.items() if k != "DICOM UID keys"}
    assert vault.decrypt_text(tokens["DICOM UID keys"]) == UID_KEY
    derived = vault.secret_key_derived_key(settings.SECRET_KEY)
    assert not any(_under(t, derived) for t in tokens.values())
    # nor in development, where the key comes from the development key file, not from SECRET_KEY
    _use(settings, "")
    settings.DEBUG = True
    token = vault.encrypt_text("dev")
    settings.SECRET_KEY = settings.DEVELOPMENT_SECRET_KEY
    assert vault.decrypt_text(token) == "dev"
    assert not _under(token, vault.secret_key_derived_key(settings.SECRET_KEY))


@pytest.mark.django_db
def test_moving_off_the_key_derived_from_secret_key(settings, stored, user):
    legacy = vault.secret_key_derived_key(settings.SECRET_KEY)
    _use(settings, legacy)  # what an earlier version stored: the key derived from SECRET_KEY
    old = PseudonymKey.objects.create(owner=user, name="from-v1", secret=vault.encrypt_text("cd" * 32))
    _use(settings, KEY_A)
    with pytest.raises(vault.VaultError, match="the pseudonymization key 'from-v1' cannot be decrypted"):
        pseudonyms.key_secret(old)
    # either list the derived key as an old key (the server keeps working meanwhile) ...
    assert _rotate("--derived-key").strip() == legacy
    _use(settings, KEY_A, [legacy])
    assert pseudonyms.key_secret(old) == bytes.fromhex("cd" * 32)
    # ... or let the rotation read it from SECRET_KEY
    _use(settings, KEY_A)
    assert _rotate("--from-secret-key").splitlines()[0] == \
        "pseudonymization keys: 2 stored, 1 re-encrypted, 1 already under the current key, 0 not decryptable"
    assert pseudonyms.key_secret(PseudonymKey.objects.get(pk=old.pk)) == bytes.fromhex("cd" * 32)


# ---- a wrong or missing key, on every surface -------------------------------------------------------------
def _break(settings, how: str) -> str:
    """A server whose key is not the one the secrets were stored under, or that has none; the phrase expected."""
    if how == "wrong":
        _use(settings, KEY_B)
        return "cannot be decrypted with the server's vault key: it was stored under another key. The operator " \
               "must set ANONYMIZER_VAULT_KEY back to that key, or add that key to ANONYMIZER_VAULT_OLD_KEYS"
    _use(settings, "")
    # not a development setup: SECRET_KEY is not the development key (changed the other way round, so that the
    # test client's session, signed with SECRET_KEY, stays valid)
    settings.DEVELOPMENT_SECRET_KEY = "another-development-key"
    return "ANONYMIZER_VAULT_KEY is not set: the server has no key for the secrets it stores"


@pytest.mark.django_db
@pytest.mark.parametrize("how", ["wrong", "missing"])
def test_the_reidentification_download_names_the_setting_web_and_api(settings, stored, client_alice, user, how):
    job = stored["job"]
    api = api_for(user)
    expected = _break(settings, how)
    web = client_alice.post(f"/jobs/{job.pk}/result/reidentification/", {"password": user.raw_password})
    page = web.content.decode()
    assert web.status_code == 503 and expected in page.replace("&#x27;", "'") and "Zorblax" not in page
    r = api.post(f"/api/v1/runs/{job.pk}/reidentification/", {"password": user.raw_password})
    assert r.status_code == 503 and r["Content-Type"] == "application/json"
    assert expected in r.json()["detail"]
    if how == "wrong":
        assert r.json()["detail"].startswith("the re-identification table of this result cannot be decrypted")


@pytest.mark.django_db
@pytest.mark.parametrize("how", ["wrong", "missing"])
def test_a_run_with_pseudonym_rules_fails_with_the_setting_named(settings, stored, how):
    ds, key = stored["dataset"], stored["key"]
    pseudonyms.save_rule(ds.columns.get(name="name"), {"treatment": "pseudonym", "key": str(key.pk)})
    expected = _break(settings, how)
    job = jobs.create_job(ds, "datafly", 2, 0.0, "disease")
    pseudonyms.snapshot(job, False)
    job = jobs.run_job(job)
    assert job.status == Job.FAILED and not hasattr(job, "result")
    assert expected in job.message and "internal error" not in job.message
    if how == "wrong":
        assert job.message.startswith("the pseudonymization key 'clinic' cannot be decrypted")


@pytest.mark.django_db
@pytest.mark.parametrize("how", ["wrong", "missing"])
def test_a_stored_connection_names_the_setting_web_and_api(settings, stored, client_alice, user, how):
    account = stored["account"]
    expected = _break(settings, how)
    body = {"account": account.pk, "identifier": "123"}
    web = client_alice.post("/datasets/import-remote/", body)
    assert web.status_code == 400 and expected in web.content.decode().replace("&#x27;", "'")
    r = api_for(user).post("/api/v1/repositories/import/", body)
    assert r.status_code == 400 and expected in r.json()["detail"]
    assert r.json()["detail"].startswith("the token of 'mine' cannot be read")


@pytest.mark.django_db
@pytest.mark.parametrize("how", ["wrong", "missing"])
def test_a_saved_sql_password_names_the_setting(settings, stored, client_alice, how):
    ds = stored["dataset"]
    expected = _break(settings, how)
    r = client_alice.post(f"/datasets/{ds.pk}/reimport-sql/", follow=True)
    assert r.status_code == 200 and expected in r.content.decode().replace("&#x27;", "'")


def test_a_malformed_key_is_named_never_shown(settings):
    settings.ANONYMIZER_VAULT_KEY = "not-a-key-but-a-secret"
    with pytest.raises(vault.VaultError) as error:
        vault.encrypt_text("x")
    assert str(error.value).startswith("ANONYMIZER_VAULT_KEY is not a valid Fernet key") and \
        "not-a-key-but-a-secret" not in str(error.value)
    settings.ANONYMIZER_VAULT_KEY = KEY_A
    settings.ANONYMIZER_VAULT_OLD_KEYS = [KEY_B, "0123"]
    with pytest.raises(vault.VaultError, match="ANONYMIZER_VAULT_OLD_KEYS: key 2 of 2 is not a valid Fernet key"):
        vault.decrypt_text("x")


# ---- development and production -----------------------------------------------------------------------------
def test_the_development_key_is_made_once_private_and_refused_in_production(settings, tmp_path):
    settings.ANONYMIZER_VAULT_DEVELOPMENT_KEY_FILE = tmp_path / "var" / "vault-development.key"
    _use(settings, "")
    settings.DEBUG = True
    token = vault.encrypt_text("dev")
    file = settings.ANONYMIZER_VAULT_DEVELOPMENT_KEY_FILE
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    key = file.read_text().strip()
    assert _under(token, key) and vault.decrypt_text(token) == "dev"
    assert vault.primary_key() == key  # made once, then read
    assert checks.vault_key_check(None) == []  # DEBUG on: development
    settings.DEBUG = False
    assert [e.id for e in checks.vault_key_check(None)] == ["anonymizer.E002"]
    settings.ANONYMIZER_VAULT_KEY = key  # the development key copied into production
    errors = checks.vault_key_check(None)
    assert [(e.id, e.msg) for e in errors] == [
        ("anonymizer.E004", f"ANONYMIZER_VAULT_KEY is the development key of {file}: it must not be used with DEBUG off")]


def test_the_system_check_refuses_a_missing_or_malformed_key_with_debug_off(settings):
    settings.DEBUG = False
    _use(settings, "")
    errors = checks.vault_key_check(None)
    assert [(e.id, e.msg) for e in errors] == [
        ("anonymizer.E002", "ANONYMIZER_VAULT_KEY is not set: with DEBUG off the vault needs a key of its own")]
    assert "manage.py rotate_vault_key --from-secret-key" in errors[0].hint
    assert "base64.urlsafe_b64encode(os.urandom(32))" in errors[0].hint
    _use(settings, KEY_A[:-2], ["x", KEY_B])
    assert [(e.id, e.msg) for e in checks.vault_key_check(None)] == [
        ("anonymizer.E003", "ANONYMIZER_VAULT_KEY is not a valid Fernet key (32 random bytes in url-safe base64)"),
        ("anonymizer.E005", "ANONYMIZER_VAULT_OLD_KEYS: key 1 of 2 is not a valid Fernet key (32 random bytes in "
                            "url-safe base64)")]
    _use(settings, KEY_A, [KEY_B])
    assert checks.vault_key_check(None) == []


PRODUCTION = {
    "SECRET_KEY": "x7Jq2-production-test-key-" + "aZ9" * 12,
    "ALLOWED_HOSTS": "anonymizer.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://anonymizer.example.org",
}


def _env(**extra: str) -> dict:
    base = {k: v for k, v in os.environ.items()
            if k not in ("DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE", "ANONYMIZER_VAULT_KEY",
                         "ANONYMIZER_VAULT_OLD_KEYS", "ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL")
            and not k.startswith(("SECURE_", "MAKE", "MFLAGS"))}
    return {**base, **extra}


def test_no_server_starts_without_a_vault_key_with_debug_off():
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=REPO, env=_env(**PRODUCTION),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "(anonymizer.E002) ANONYMIZER_VAULT_KEY is not set: with DEBUG off the vault needs a key of its own" \
        in done.stderr
    wsgi = subprocess.run([sys.executable, "-c", "import anonymizer_app.wsgi"], cwd=REPO, env=_env(**PRODUCTION),
                          capture_output=True, text=True, timeout=120)
    assert wsgi.returncode == 1 and "ImproperlyConfigured: ANONYMIZER_VAULT_KEY is not set" in wsgi.stderr
    ok = subprocess.run([sys.executable, "manage.py", "check"], cwd=REPO,
                        env=_env(**PRODUCTION, ANONYMIZER_VAULT_KEY=KEY_A), capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0, ok.stderr


def test_make_serve_names_a_missing_or_malformed_vault_key():
    server = {**PRODUCTION, "DATABASE_URL": "postgres://x/y", "REDIS_URL": "redis://127.0.0.1:6379/0"}
    hint = ("the key of the stored secrets, its own (never SECRET_KEY's), made by python3 -c 'import base64, os; "
            "print(base64.urlsafe_b64encode(os.urandom(32)).decode())'; docs/vault.md (docs/operations/deployment.md)")

    def serve_env(**extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(["make", "--no-print-directory", "serve-env"], cwd=REPO, env=_env(**server, **extra),
                              capture_output=True, text=True, timeout=60)

    missing = serve_env()
    assert missing.returncode == 2
    assert missing.stderr.splitlines()[0] == f"make serve: set ANONYMIZER_VAULT_KEY: {hint}"
    malformed = serve_env(ANONYMIZER_VAULT_KEY="not-a-key")
    assert malformed.returncode == 2
    assert malformed.stderr.splitlines()[0] == \
        f"make serve: set ANONYMIZER_VAULT_KEY: not a Fernet key (44 characters of url-safe base64): {hint}"
    assert "not-a-key" not in malformed.stderr.replace("not a Fernet", "")
    assert serve_env(ANONYMIZER_VAULT_KEY=KEY_A).returncode == 0
