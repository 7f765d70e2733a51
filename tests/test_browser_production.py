"""The browser flow (tests/browser_flow.py) once against the production server, started as
docs/operations/deployment.md says: `make serve` with the production variables, i.e. gunicorn with DEBUG off and
whitenoise serving the collected static files, a Celery worker over Redis, PostgreSQL.

Everything is private to the test: a PostgreSQL database of its own (created and dropped here), a queue of
its own on Redis database 15, MEDIA_ROOT and STATIC_ROOT in a temporary folder, a free port. `make serve`
migrates, collects the static files and starts the worker and gunicorn; the test stops the whole process
group with SIGTERM, as a supervisor would. `-o .venv/.installed` keeps make from reinstalling the venv.
"""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
from browser_flow import ROOT, run_flow

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.postgres, pytest.mark.celery,
              pytest.mark.timeout(420)]

POSTGRES = "postgres://postgres@127.0.0.1:5432"
START_TIMEOUT = 180  # migrate on an empty PostgreSQL database and collectstatic, on 2 cores under load


class SqlStore:
    """The flow's view of the server's PostgreSQL database."""

    def __init__(self, url: str):
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)

    def dataset(self, username: str) -> dict | None:
        row = self.conn.execute(
            "SELECT d.id, d.n_rows, d.n_columns, d.delimiter FROM anonymizer_app_dataset d "
            "JOIN auth_user u ON u.id = d.owner_id WHERE u.username = %s", (username,)).fetchone()
        return None if row is None else dict(zip(("id", "n_rows", "n_columns", "delimiter"), row))

    def columns(self, dataset_id: int) -> list[dict]:
        rows = self.conn.execute("SELECT id, position, name, role, hierarchy_id FROM anonymizer_app_column "
                                 "WHERE dataset_id = %s ORDER BY position", (dataset_id,)).fetchall()
        return [dict(zip(("id", "position", "name", "role", "hierarchy_id"), row)) for row in rows]

    def job(self, username: str) -> dict:
        status, message, report = self.conn.execute(
            "SELECT j.status, j.message, r.report FROM anonymizer_app_job j JOIN auth_user u ON u.id = j.owner_id "
            "LEFT JOIN anonymizer_app_result r ON r.job_id = j.id WHERE u.username = %s", (username,)).fetchone()
        return {"status": status, "message": message, "report": report or {}}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def database(postgres_available):
    import psycopg

    name = f"anonymizer_serve_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"{POSTGRES}/{name}"
    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Server:
    """`make serve` in its own process group, its output in a log file."""

    def __init__(self, env: dict[str, str], log: Path):
        self.log = log
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(["make", "--no-print-directory", "-o", ".venv/.installed", "serve"],
                                         cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def get(self, url: str) -> tuple[int, dict[str, str], str]:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status, dict(r.headers), r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode("utf-8", "replace")

    def wait_until_up(self, url: str) -> None:
        end = time.monotonic() + START_TIMEOUT
        while time.monotonic() < end:
            assert self.proc.poll() is None, f"make serve ended ({self.proc.returncode}):\n{self.output()[-4000:]}"
            try:
                if self.get(url)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise AssertionError(f"make serve did not answer {url} in {START_TIMEOUT} s:\n{self.output()[-4000:]}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=45)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        return self.proc.returncode


@pytest.fixture
def server(database, redis_url, tmp_path):
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SECURE_", "DJANGO_", "CELERY_", "AXES_", "MAKE", "MFLAGS")) and k != "DEBUG"}
    env.update({
        # the production environment of docs/operations/deployment.md, less what needs TLS (no proxy in front here)
        "SECRET_KEY": "serve-test-" + uuid.uuid4().hex * 2,
        "ANONYMIZER_VAULT_KEY": base64.urlsafe_b64encode(os.urandom(32)).decode(),  # docs/vault.md
        "ALLOWED_HOSTS": "localhost",
        "CSRF_TRUSTED_ORIGINS": f"http://localhost:{port}",
        "DATABASE_URL": database,
        "REDIS_URL": redis_url,
        "CELERY_QUEUE": f"anonymizer-serve-{uuid.uuid4().hex[:12]}",
        # rate-limit counters of this run only (the sign-up limit is per address and hour, in the shared Redis)
        "ANONYMIZER_CACHE_PREFIX": f"anonymizer-serve-{uuid.uuid4().hex[:12]}",
        "MEDIA_ROOT": str(tmp_path / "media"),
        "STATIC_ROOT": str(tmp_path / "static"),
        "CELERY_BROKER_DIR": str(tmp_path / "broker"),
        "BIND": f"127.0.0.1:{port}",
        "WEB_WORKERS": "2",
        "WORKER_CONCURRENCY": "1",
        "PYTHONUNBUFFERED": "1",
    })
    serve = Server(env, tmp_path / "serve.log")
    serve.url = f"http://localhost:{port}"
    serve.static_root = tmp_path / "static"
    try:
        serve.wait_until_up(f"{serve.url}/accounts/login/")
        yield serve
    finally:
        serve.stop()


def test_the_browser_flow_on_the_production_server(server, browser, database):
    # DEBUG off: a 404 is the styled page, no URL list; static files come from the collected folder
    status, headers, body = server.get(f"{server.url}/no/such/page/")
    assert status == 404 and "<h1>Not found</h1>" in body and "urlpatterns" not in body.lower()
    assert (server.static_root / "js" / "result.js").is_file()
    status, headers, _ = server.get(f"{server.url}/static/vendor/plotly/plotly.min.js")
    assert status == 200 and "no-store" not in headers.get("Cache-Control", "")
    status, headers, _ = server.get(f"{server.url}/accounts/login/")
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert "no-store" in headers["Cache-Control"] and headers["X-Frame-Options"] == "DENY"

    store = SqlStore(database)
    try:
        report = run_flow(browser, server.url, store, timeout=120)
    finally:
        store.conn.close()
    assert report["k_achieved"] >= 10

    # the job went through Redis to the worker that make serve started, and gunicorn served the pages
    output = server.output()
    assert "Task anonymizer.run_job[" in output and "succeeded in" in output, output[-4000:]
    assert "Booting worker with pid" in output and '"GET /jobs/' in output
    # SIGTERM to the group stops everything make serve started: gunicorn, the worker and its pool
    server.stop()
    with pytest.raises(ProcessLookupError):
        os.killpg(server.proc.pid, 0)
