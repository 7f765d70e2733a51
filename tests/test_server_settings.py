"""The production server's settings (gunicorn.conf.py, make serve, settings.py), as benchmarks/bench_load.py measured
them: idle connections kept longer than a client's pause (no reset of a connection the client reuses), more
processes with fewer threads, Celery workers niced, persistent PostgreSQL connections."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


VARIABLES = ("BIND", "WEB_WORKERS", "WEB_THREADS", "WEB_KEEPALIVE", "WEB_ACCESS_LOG")


def _gunicorn_conf(monkeypatch, **env: str) -> dict:
    for key in VARIABLES:
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return runpy.run_path(str(REPO / "gunicorn.conf.py"))


def test_gunicorn_defaults(monkeypatch):
    conf = _gunicorn_conf(monkeypatch)
    assert (conf["bind"], conf["workers"], conf["threads"], conf["worker_class"], conf["timeout"]) == (
        "127.0.0.1:8000", 4, 4, "gthread", 120)
    # longer than a person's (or locust's 1-3 s) pause between two requests, and than nginx's 60 s upstream idle
    assert conf["keepalive"] == 75
    assert conf["accesslog"] == "-" and conf["access_log_format"].endswith("%(D)sus")


def test_gunicorn_settings_from_the_environment(monkeypatch):
    conf = _gunicorn_conf(monkeypatch, BIND="127.0.0.1:9999", WEB_WORKERS="2", WEB_THREADS="8", WEB_KEEPALIVE="5")
    assert (conf["bind"], conf["workers"], conf["threads"], conf["keepalive"]) == ("127.0.0.1:9999", 2, 8, 5)


def test_make_serve_reads_the_config_and_nices_the_worker():
    recipe = subprocess.run(["make", "-n", "serve", "SECRET_KEY=x", "ALLOWED_HOSTS=x", "REDIS_URL=redis://x",
                             "DATABASE_URL=postgres://x/y", "STAMP=Makefile"], cwd=REPO, capture_output=True,
                            text=True).stdout
    assert "gunicorn anonymizer_app.wsgi:application --config gunicorn.conf.py" in recipe
    assert "nice -n ${WORKER_NICE:-10} " in recipe and "celery -A anonymizer_app worker" in recipe


def _database_settings(url: str, **env: str) -> str:
    code = ("import django; from django.conf import settings; django.setup(); d = settings.DATABASES['default']; "
            "print(d['CONN_MAX_AGE'], d['CONN_HEALTH_CHECKS'])")
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DATABASE_CONN_MAX_AGE")}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={**clean, "DJANGO_SETTINGS_MODULE": "anonymizer_app.settings", "DEBUG": "1",
                               "DATABASE_URL": url, **env})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_postgresql_connections_are_kept_a_minute(tmp_path):
    assert _database_settings("postgres://postgres@127.0.0.1:5432/x") == "60 True"
    assert _database_settings("postgres://postgres@127.0.0.1:5432/x", DATABASE_CONN_MAX_AGE="0") == "0 True"
    assert _database_settings(f"sqlite:///{tmp_path / 'db.sqlite3'}") == "0 True"
