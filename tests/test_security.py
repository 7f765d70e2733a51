"""Secure by default: DEBUG off unless asked for, no start on the public key, `check --deploy` clean with
the README's production environment, login throttling, no-store caching of users' data, styled errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously
from django.template.loader import render_to_string

from anonymizer_app.services import jobs

REPO = Path(__file__).resolve().parent.parent
# the production environment of the README's "Deployment" section
PRODUCTION = {
    "SECRET_KEY": "x7Jq2-production-test-key-" + "aZ9" * 12,
    "ALLOWED_HOSTS": "anonymizer.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://anonymizer.example.org",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO",
}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if k not in ("DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE") and not k.startswith("SECURE_")}
    return subprocess.run([sys.executable, *args], cwd=REPO, env={**base, **env}, capture_output=True, text=True,
                          timeout=120)


def test_check_deploy_is_clean_with_the_documented_production_environment():
    done = manage("manage.py", "check", "--deploy", env=PRODUCTION)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "System check identified no issues (0 silenced)."


def test_debug_is_off_unless_turned_on():
    code = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"
    env = {"DJANGO_SETTINGS_MODULE": "anonymizer_app.settings", "SECRET_KEY": PRODUCTION["SECRET_KEY"]}
    assert manage("-c", code, env=env).stdout.strip() == "False"
    assert manage("-c", code, env={**env, "DEBUG": "1"}).stdout.strip() == "True"


def test_no_server_starts_on_the_public_key_with_debug_off():
    done = manage("manage.py", "check", env={})
    assert done.returncode == 1
    assert "(anonymizer.E001) SECRET_KEY is not set: the public development key must not be used with DEBUG off" \
        in done.stderr
    wsgi = manage("-c", "import anonymizer_app.wsgi", env={})
    assert wsgi.returncode == 1 and "ImproperlyConfigured: SECRET_KEY is not set" in wsgi.stderr
    assert manage("manage.py", "check", env={"DEBUG": "1"}).returncode == 0  # development


@pytest.mark.django_db
def test_fifty_wrong_passwords_then_the_right_one_is_refused(client, user):
    for _ in range(50):
        r = client.post("/accounts/login/", {"username": "alice", "password": "wrong"}, REMOTE_ADDR="10.0.0.7")
    assert r.status_code == 429 and "Too many failed log-ins" in r.content.decode()
    r = client.post("/accounts/login/", {"username": "alice", "password": user.raw_password}, REMOTE_ADDR="10.0.0.7")
    assert r.status_code == 429
    assert "_auth_user_id" not in client.session
    # the lock is on this user from this address: another address still logs in
    r = client.post("/accounts/login/", {"username": "alice", "password": user.raw_password}, REMOTE_ADDR="10.0.0.8")
    assert r.status_code == 302 and client.session["_auth_user_id"] == str(user.pk)


@pytest.mark.django_db
def test_four_wrong_passwords_do_not_lock(client, user):
    for _ in range(4):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    r = client.post("/accounts/login/", {"username": "alice", "password": user.raw_password})
    assert r.status_code == 302


@pytest.mark.django_db
def test_pages_and_downloads_with_data_are_not_stored(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    dataset = make_dataset(user)
    job = jobs.run_job(jobs.create_job(dataset, "datafly", 2, 0.25, "disease"))
    for url in ("/", f"/datasets/{dataset.pk}/", f"/jobs/{job.pk}/", f"/jobs/{job.pk}/result/",
                f"/jobs/{job.pk}/result/anonymized.csv", f"/jobs/{job.pk}/status/"):
        r = client_alice.get(url)
        assert r.status_code == 200, url
        assert r["Cache-Control"] == "no-store", url
    assert client_alice.get("/accounts/login/")["Cache-Control"] == "no-store"


@pytest.mark.django_db
def test_errors_have_styled_pages_without_details(client_alice):
    r = client_alice.get("/jobs/00000000-0000-0000-0000-000000000000/")
    assert r.status_code == 404
    html = r.content.decode()
    assert "<h1>Not found</h1>" in html and "belongs to another account" in html and "Traceback" not in html
    page = render_to_string("500.html")
    assert "<h1>Something went wrong</h1>" in page and "Nothing you uploaded was changed" in page
