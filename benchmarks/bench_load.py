"""Load benchmark: 20 concurrent users against the production server for 2 minutes.

    .venv/bin/pip install -e ".[bench]"          # locust (once)
    .venv/bin/python benchmarks/bench_load.py [--users 20] [--minutes 2] [--workers 2] [--json out.json]

What runs, all on 127.0.0.1 and all torn down afterwards:
- a fresh PostgreSQL database (anonymizer_load; DATABASE_URL's server, default the local one), migrated,
  with LOAD_USERS accounts load-0 .. load-19, each with the demo data (Adult with its ARX hierarchies and
  the people table);
- the production server as `make serve` starts it: gunicorn with DEBUG off, whitenoise, the production
  settings from the environment; and ``--workers`` Celery workers over Redis (a queue of their own);
- locust, headless, with benchmarks/load_locustfile.py (browse, upload Adult, run Flash/Datafly k=5 on
  Adult and poll until the job ends).

Prints page latency percentiles (every request but the job-latency events), p95/p99 per page, job
latency and the error count. Figures depend on the machine; this is not a test.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PASSWORD = "load-password-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(var: Path, database_url: str, queue: str, port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "DJANGO_SETTINGS_MODULE": "anonymizer_app.settings",
        "DEBUG": "0", "DJANGO_DEBUG": "0",
        "SECRET_KEY": "load-benchmark-" + os.urandom(24).hex(),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CSRF_TRUSTED_ORIGINS": f"http://127.0.0.1:{port}",
        "DATABASE_URL": database_url,
        "REDIS_URL": os.environ.get("LOAD_REDIS_URL", "redis://127.0.0.1:6379/9"),
        "CELERY_QUEUE": queue,
        "MEDIA_ROOT": str(var / "media"),
        "STATIC_ROOT": str(var / "static"),
        "CELERY_BROKER_DIR": str(var / "broker"),
        "ANONYMIZER_JOB_TMP": str(var / "job-tmp"),
        # plain HTTP on 127.0.0.1: no HTTPS redirect, cookies not Secure-only, and locust may log in fast
        "SECURE_SSL_REDIRECT": "0", "SESSION_COOKIE_SECURE": "0", "CSRF_COOKIE_SECURE": "0",
        "AXES_ENABLED": "0", "LOG_LEVEL": "WARNING",
    })
    return env


def manage(env: dict, *args: str) -> None:
    subprocess.run([str(BIN / "python"), "manage.py", *args], cwd=REPO, env=env, check=True,
                   stdout=subprocess.DEVNULL)


def prepare(env: dict, users: int) -> None:
    manage(env, "migrate", "--noinput")
    manage(env, "collectstatic", "--noinput")
    code = ("from django.contrib.auth import get_user_model\nfrom anonymizer_app import demo\n"
            f"U = get_user_model()\nfor i in range({users}):\n"
            f"    u = U.objects.create_user(f'load-{{i}}', password={PASSWORD!r})\n    demo.load_demo(u)\n")
    manage(env, "shell", "-c", code)


def wait_for(port: int, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise SystemExit(f"the server did not listen on 127.0.0.1:{port} within {timeout:g} s")


def percentiles(rows: list[dict], name: str) -> dict:
    row = next((r for r in rows if r["Name"] == name), None)
    if row is None:
        return {}
    pick = {"requests": "Request Count", "failures": "Failure Count", "median_ms": "50%", "p95_ms": "95%",
            "p99_ms": "99%", "max_ms": "Max Response Time"}
    return {k: float(row[v]) if row[v] not in ("", "N/A") else None for k, v in pick.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=20)
    ap.add_argument("--minutes", type=float, default=2.0)
    ap.add_argument("--workers", type=int, default=2, help="Celery workers (one job each at a time)")
    ap.add_argument("--web-workers", type=int, default=3, help="gunicorn worker processes")
    ap.add_argument("--database-url", default=os.environ.get("LOAD_DATABASE_URL",
                                                             "postgres://postgres@127.0.0.1:5432/anonymizer_load"))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    var = Path(tempfile.mkdtemp(prefix="anonymizer-load-"))
    port, queue = free_port(), f"load-{os.getpid()}"
    env = server_env(var, args.database_url, queue, port)
    dbname = args.database_url.rsplit("/", 1)[1]
    admin_url = args.database_url.rsplit("/", 1)[0] + "/postgres"
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{dbname}"')
    procs: list[subprocess.Popen] = []
    try:
        print(f"preparing {args.users} users with the demo data in {dbname} ...", flush=True)
        prepare(env, args.users)
        logs = var / "logs"
        logs.mkdir()
        procs.append(subprocess.Popen(
            [str(BIN / "gunicorn"), "anonymizer_app.wsgi:application", "--bind", f"127.0.0.1:{port}",
             "--workers", str(args.web_workers), "--threads", "4", "--timeout", "120"],
            cwd=REPO, env=env, stdout=(logs / "gunicorn.log").open("w"), stderr=subprocess.STDOUT))
        for i in range(args.workers):
            procs.append(subprocess.Popen(
                [str(BIN / "celery"), "-A", "anonymizer_app", "worker", "--concurrency", "1", "--loglevel", "WARNING",
                 "-Q", queue, "--hostname", f"load{i}-{os.getpid()}@%h"],
                cwd=REPO, env=env, stdout=(logs / f"worker{i}.log").open("w"), stderr=subprocess.STDOUT))
        wait_for(port)
        seconds = int(args.minutes * 60)
        print(f"locust: {args.users} users for {seconds} s against gunicorn ({args.web_workers} processes) "
              f"and {args.workers} Celery workers ...", flush=True)
        prefix = var / "locust"
        subprocess.run([str(BIN / "locust"), "-f", str(REPO / "benchmarks" / "load_locustfile.py"), "--headless",
                        "-u", str(args.users), "-r", str(max(1, args.users // 5)), "-t", f"{seconds}s",
                        "--host", f"http://127.0.0.1:{port}", "--csv", str(prefix), "--only-summary"],
                       cwd=REPO, env={**env, "LOAD_USERS": str(args.users), "LOAD_PASSWORD": PASSWORD,
                                      "LOAD_TIMES_FILE": str(var / "page_times.json")}, check=False)
        with open(f"{prefix}_stats.csv", newline="") as fh:
            rows = list(csv.DictReader(fh))
        pages = [r for r in rows if r["Type"] not in ("JOB", "") and r["Name"] != "Aggregated"]
        times = json.loads((var / "page_times.json").read_text())
        ms = np.array([t for _, t, _ in times], dtype=float)
        out = {
            "users": args.users, "seconds": seconds, "celery_workers": args.workers,
            "web_workers": args.web_workers,
            "page_requests": int(len(ms)),
            "page_errors": int(sum(1 for *_, ok in times if not ok)),
            "page_p50_ms": float(np.percentile(ms, 50)) if len(ms) else None,
            "page_p95_ms": float(np.percentile(ms, 95)) if len(ms) else None,
            "page_p99_ms": float(np.percentile(ms, 99)) if len(ms) else None,
            "pages": {f'{r["Type"]} {r["Name"]}': percentiles(rows, r["Name"]) for r in pages},
            "jobs": {r["Name"]: percentiles(rows, r["Name"]) for r in rows if r["Type"] == "JOB"},
        }
        with open(f"{prefix}_failures.csv", newline="") as fh:
            out["failures"] = list(csv.DictReader(fh))
        server_errors = sum(1 for line in (logs / "gunicorn.log").read_text().splitlines() if "Traceback" in line)
        out["server_tracebacks"] = server_errors
        print(json.dumps(out, indent=2))
        if args.json:
            args.json.write_text(json.dumps(out, indent=2))
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
        shutil.rmtree(var, ignore_errors=True)


if __name__ == "__main__":
    main()
