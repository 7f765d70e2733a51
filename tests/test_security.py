"""Secure by default: DEBUG off unless asked for, no start on the public key, `check --deploy` clean with
the production environment of docs/operations/deployment.md, login throttling, no-store caching of users' data, styled errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously
from django.template.loader import render_to_string
from django.urls import include, path

from anonymizer_app.services import jobs

REPO = Path(__file__).resolve().parent.parent
# the production environment of docs/operations/deployment.md
PRODUCTION = {
    "SECRET_KEY": "x7Jq2-production-test-key-" + "aZ9" * 12,
    "ALLOWED_HOSTS": "anonymizer.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://anonymizer.example.org",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO",
    "ANONYMIZER_VAULT_KEY": "oV7y3sYb3q0m3mJ2kq4yQ9fWkz2cXl5u1vTq8r9pZ6A=",  # its own key (docs/vault.md)
    "ANONYMIZER_TRUSTED_PROXIES": "127.0.0.1",  # the proxy in front (docs/security.md)
}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if k not in ("DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE", "REDIS_URL", "DATABASE_URL")
            and not k.startswith("SECURE_")}
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


def test_no_server_starts_on_the_public_key_with_debug_off(tmp_path):
    done = manage("manage.py", "check", env={})
    assert done.returncode == 1
    assert "(anonymizer.E001) SECRET_KEY is not set: the public development key must not be used with DEBUG off" \
        in done.stderr
    wsgi = manage("-c", "import anonymizer_app.wsgi", env={})
    assert wsgi.returncode == 1 and "ImproperlyConfigured: SECRET_KEY is not set" in wsgi.stderr
    worker = manage("-m", "celery", "-A", "anonymizer_app", "worker", "--pool=solo",
                    env={"CELERY_BROKER_DIR": str(tmp_path / "broker"), "DATABASE_URL": f"sqlite:///{tmp_path}/db"})
    assert worker.returncode == 1
    assert "ImproperlyConfigured: SECRET_KEY is not set: the public development key must not be used with DEBUG off" \
        in worker.stderr
    assert manage("manage.py", "check", env={"DEBUG": "1"}).returncode == 0  # development


@pytest.mark.django_db
def test_fifty_wrong_passwords_then_the_right_one_is_refused(client, user):
    for _ in range(50):
        r = client.post("/accounts/login/", {"username": "alice", "password": "wrong"}, REMOTE_ADDR="10.0.0.7")
    assert r.status_code == 429 and "Too many failed log-ins" in r.content.decode()
    assert ("This account cannot log in from your address for 15 minutes after\n    5 wrong passwords in a row."
            in r.content.decode())
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


def _boom(request):
    raise RuntimeError("secret detail of the failure")


# test_a_server_error_is_the_styled_page_without_details: the project's URLs plus one view that fails
urlpatterns = [path("boom/", _boom), path("", include("anonymizer_app.urls"))]


@pytest.mark.django_db
def test_a_server_error_is_the_styled_page_without_details(client_alice, settings):
    settings.ROOT_URLCONF = __name__
    client_alice.raise_request_exception = False
    r = client_alice.get("/boom/")
    assert r.status_code == 500
    html = r.content.decode()
    assert "<h1>Something went wrong</h1>" in html and '<link rel="stylesheet" href="/static/css/app.css">' in html
    assert "secret detail" not in html and "Traceback" not in html and "RuntimeError" not in html
    assert r["Cache-Control"] == "no-store"


@pytest.mark.django_db
def test_errors_have_styled_pages_without_details(client_alice):
    r = client_alice.get("/jobs/00000000-0000-0000-0000-000000000000/")
    assert r.status_code == 404
    html = r.content.decode()
    assert "<h1>Not found</h1>" in html and "belongs to another account" in html and "Traceback" not in html
    page = render_to_string("500.html")
    assert "<h1>Something went wrong</h1>" in page and "Nothing you uploaded was changed" in page


# settings.CONTENT_SECURITY_POLICY as a browser reads it: directive -> sources
POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:", "blob:"],
    "font-src": ["'self'", "data:"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}


def policy(response) -> dict[str, list[str]]:
    directives = [d.split() for d in response["Content-Security-Policy"].split(";") if d.strip()]
    return {d[0]: d[1:] for d in directives}


@pytest.mark.django_db
def test_every_page_sends_the_content_security_policy(client, client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    dataset = make_dataset(user)
    job = jobs.run_job(jobs.create_job(dataset, "flash", 2, 0.25, "disease"))
    for url in ("/", f"/datasets/{dataset.pk}/", f"/datasets/{dataset.pk}/run/", f"/jobs/{job.pk}/",
                f"/jobs/{job.pk}/result/", "/hierarchies/", "/no/such/page/"):
        assert policy(client_alice.get(url)) == POLICY, url
    # the lattice page only: plotly's WebGL traces need Function() (views/lattice.py)
    assert policy(client_alice.get(f"/jobs/{job.pk}/lattice/")) == {**POLICY, "script-src": ["'self'", "'unsafe-eval'"]}
    client.logout()
    assert policy(client.get("/accounts/login/")) == POLICY


def test_templates_hold_no_inline_script():
    """Scripts are static files (script-src 'self'): no inline <script>, event handler or javascript: URL."""
    found = []
    for template in sorted((REPO / "templates").rglob("*.html")):
        text = template.read_text(encoding="utf-8")
        for match in re.finditer(r"<script\b[^>]*>|\son[a-z]+\s*=|javascript:", text, flags=re.IGNORECASE):
            if not (match.group(0).lower().startswith("<script") and " src=" in match.group(0)):
                found.append(f"{template.relative_to(REPO)}: {match.group(0)}")
    assert found == []


def test_make_serve_names_every_missing_variable():
    env = {k: v for k, v in os.environ.items()
           if k not in ("SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL", "DEBUG")
           and not k.startswith(("MAKE", "MFLAGS"))}
    done = subprocess.run(["make", "--no-print-directory", "-o", ".venv/.installed", "serve"], cwd=REPO,
                          env={**env, "DATABASE_URL": "sqlite:///var/db.sqlite3", "DEBUG": "1"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines()[:5] == [
        "make serve: set SECRET_KEY: a long random value, e.g. the output of "
        "python3 -c 'import secrets; print(secrets.token_urlsafe(50))' (docs/operations/deployment.md)",
        "make serve: set ALLOWED_HOSTS: the host name(s) of the site, e.g. anonymizer.example.org "
        "(docs/operations/deployment.md)",
        "make serve: set DATABASE_URL: the PostgreSQL database, e.g. "
        "postgres://anonymizer@db.internal:5432/anonymizer (docs/operations/deployment.md)",
        "make serve: set REDIS_URL: the Redis server that carries the jobs, e.g. redis://127.0.0.1:6379/0 "
        "(docs/operations/deployment.md)",
        "make serve: DEBUG must be off on a server: unset it or set DEBUG=0",
    ]
    assert done.stdout == ""  # nothing ran: no migrate, no server
