"""Load benchmark: 20 concurrent users against the production server for 2 minutes.

    .venv/bin/pip install -e ".[bench]"          # locust (once)
    .venv/bin/python benchmarks/bench_load.py [--users 20] [--minutes 2] [--workers 2] [--json out.json]

What runs, all on 127.0.0.1 and all torn down afterwards:
- a fresh PostgreSQL database (anonymizer_load; DATABASE_URL's server, default the local one), migrated,
  with LOAD_USERS accounts load-0 .. load-19, each with the demo data (Adult with its ARX hierarchies and
  the people table);
- the production server as `make serve` starts it: gunicorn with DEBUG off and gunicorn.conf.py, whitenoise,
  the production settings from the environment; and ``--workers`` Celery workers over Redis (a queue of
  their own) at nice WORKER_NICE (10); ``--web-workers``, ``--web-threads``, ``--keep-alive``,
  ``--worker-nice`` and ``--conn-max-age`` override the production values (e.g. to measure older ones);
- locust, headless, with benchmarks/load_locustfile.py (browse datasets, jobs and results, upload Adult,
  run Flash/Datafly k=5 on Adult and poll until the job ends).

Prints page latency percentiles as the clients saw them (every request but the job-latency events), per
page, the job latency and the errors; the server's own time per request (gunicorn's access log); the
CPU seconds each part used (web, workers, PostgreSQL, Redis, locust) and what the rest of the machine
used meanwhile, with the load average before and after: on a shared machine the figures move with the
other work, so read them together. Figures depend on the machine; this is not a test.
"""

from __future__ import annotations

import argparse
import base64
import csv
import json
import os
import re
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
        "ANONYMIZER_VAULT_KEY": base64.urlsafe_b64encode(os.urandom(32)).decode(),  # required with DEBUG off
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
        # the capacity is measured, not the per-account limits (docs/security.md): 20 clients on one address
        **{f"ANONYMIZER_THROTTLE_{name}": "off" for name in ("LOGIN", "UPLOAD", "RUN", "DOWNLOAD", "API_KEY")},
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


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of the processes and their children (those alive now)."""
    import psutil

    total, seen = 0.0, set()
    for pid in pids:
        try:
            top = psutil.Process(pid)
            for proc in [top, *top.children(recursive=True)]:
                if proc.pid in seen:
                    continue
                seen.add(proc.pid)
                t = proc.cpu_times()
                total += t.user + t.system
        except psutil.NoSuchProcess:
            continue
    return total


def named_pids(name: str) -> list[int]:
    import psutil

    return [p.pid for p in psutil.process_iter(["name"]) if p.info["name"] == name]


def machine_busy() -> float:
    """CPU seconds the whole machine spent busy so far (every core, every process)."""
    import psutil

    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0)


def server_times(access_log: Path) -> dict:
    """The server's own time per request (gunicorn's %(D)s), pages only (not static files)."""
    per: dict[str, list[float]] = {}
    for line in access_log.read_text().splitlines():
        match = re.search(r'"(\w+) (\S+) [^"]*" (\d{3}) \S+ (\d+)us$', line)
        if not match or match.group(2).startswith("/static/"):
            continue
        path = re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "<job>", match.group(2).split("?")[0])
        per.setdefault(f"{match.group(1)} {re.sub(r'/[0-9]+/', '/<id>/', path)}", []).append(
            int(match.group(4)) / 1000)
    every = np.array([t for ts in per.values() for t in ts])
    out = {"requests": int(len(every))}
    if len(every):
        out.update({f"p{q}_ms": round(float(np.percentile(every, q)), 1) for q in (50, 95, 99)})
    out["pages"] = {name: {"requests": len(ts), "p50_ms": round(float(np.percentile(ts, 50)), 1),
                           "p95_ms": round(float(np.percentile(ts, 95)), 1)}
                    for name, ts in sorted(per.items(), key=lambda kv: -len(kv[1]))}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=20)
    ap.add_argument("--minutes", type=float, default=2.0)
    ap.add_argument("--workers", type=int, default=2, help="Celery workers (one job each at a time)")
    ap.add_argument("--database-url", default=os.environ.get("LOAD_DATABASE_URL",
                                                             "postgres://postgres@127.0.0.1:5432/anonymizer_load"))
    # the production settings (gunicorn.conf.py, settings.py, make serve) unless given; the session's
    # "before" figures were measured with --web-workers 3 --web-threads 4 --keep-alive 2 --worker-nice 0
    # --conn-max-age 0
    ap.add_argument("--web-workers", type=int, help="gunicorn worker processes (WEB_WORKERS)")
    ap.add_argument("--web-threads", type=int, help="threads per gunicorn process (WEB_THREADS)")
    ap.add_argument("--keep-alive", type=int, help="seconds gunicorn keeps an idle connection (WEB_KEEPALIVE)")
    ap.add_argument("--worker-nice", type=int, help="niceness of the Celery workers (WORKER_NICE, make serve)")
    ap.add_argument("--conn-max-age", type=int, help="seconds a database connection is kept (DATABASE_CONN_MAX_AGE)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    var = Path(tempfile.mkdtemp(prefix="anonymizer-load-"))
    port, queue = free_port(), f"load-{os.getpid()}"
    env = server_env(var, args.database_url, queue, port)
    knobs = {"WEB_WORKERS": args.web_workers, "WEB_THREADS": args.web_threads, "WEB_KEEPALIVE": args.keep_alive,
             "DATABASE_CONN_MAX_AGE": args.conn_max_age}
    env.update({key: str(value) for key, value in knobs.items() if value is not None})
    nice = args.worker_nice if args.worker_nice is not None else int(os.environ.get("WORKER_NICE", "10"))
    dbname = args.database_url.rsplit("/", 1)[1]
    if dbname.startswith("test_"):
        raise SystemExit(f"refusing database {dbname!r}: test_* names belong to the test suites")
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
        env["WEB_ACCESS_LOG"] = str(logs / "access.log")
        web = subprocess.Popen(  # gunicorn.conf.py: workers, threads, keepalive, access log (as make serve)
            [str(BIN / "gunicorn"), "anonymizer_app.wsgi:application", "--config", str(REPO / "gunicorn.conf.py"),
             "--bind", f"127.0.0.1:{port}"],
            cwd=REPO, env=env, stdout=(logs / "gunicorn.log").open("w"), stderr=subprocess.STDOUT)
        procs.append(web)
        workers = []
        for i in range(args.workers):  # as make serve starts them: niced, so that pages come first
            workers.append(subprocess.Popen(
                ["nice", "-n", str(nice), str(BIN / "celery"), "-A", "anonymizer_app", "worker", "--concurrency", "1",
                 "--loglevel", "WARNING", "-Q", queue, "--hostname", f"load{i}-{os.getpid()}@%h"],
                cwd=REPO, env=env, stdout=(logs / f"worker{i}.log").open("w"), stderr=subprocess.STDOUT))
        procs += workers
        wait_for(port)
        time.sleep(3)  # the workers' start
        seconds = int(args.minutes * 60)
        settings_used = subprocess.run(
            [str(BIN / "python"), "-c", "import runpy; c = runpy.run_path('gunicorn.conf.py'); "
             "print(c['workers'], c['threads'], c['keepalive'])"], cwd=REPO, env=env, capture_output=True,
            text=True).stdout.split()
        print(f"locust: {args.users} users for {seconds} s against gunicorn ({settings_used[0]} processes x "
              f"{settings_used[1]} threads, keepalive {settings_used[2]} s) and {args.workers} Celery workers "
              f"(nice {nice}) ...", flush=True)
        before = {"load": os.getloadavg(), "machine": machine_busy(), "web": cpu_seconds([web.pid]),
                  "workers": cpu_seconds([w.pid for w in workers]), "postgres": cpu_seconds(named_pids("postgres")),
                  "redis": cpu_seconds(named_pids("redis-server"))}
        started = time.monotonic()
        prefix = var / "locust"
        locust = subprocess.Popen(
            [str(BIN / "locust"), "-f", str(REPO / "benchmarks" / "load_locustfile.py"), "--headless",
             "-u", str(args.users), "-r", str(max(1, args.users // 5)), "-t", f"{seconds}s",
             "--host", f"http://127.0.0.1:{port}", "--csv", str(prefix), "--only-summary"],
            cwd=REPO, env={**env, "LOAD_USERS": str(args.users), "LOAD_PASSWORD": PASSWORD,
                           "LOAD_TIMES_FILE": str(var / "page_times.json")})
        import psutil

        locust_cpu = 0.0
        while locust.poll() is None:  # its CPU, read while it runs (its children end with it)
            try:
                t = psutil.Process(locust.pid).cpu_times()
                locust_cpu = t.user + t.system
            except psutil.NoSuchProcess:
                break
            time.sleep(1)
        wall = time.monotonic() - started
        cpu = {"web": cpu_seconds([web.pid]) - before["web"],
               "workers": cpu_seconds([w.pid for w in workers]) - before["workers"],
               "postgres (all databases)": cpu_seconds(named_pids("postgres")) - before["postgres"],
               "redis": cpu_seconds(named_pids("redis-server")) - before["redis"], "locust": locust_cpu}
        busy = machine_busy() - before["machine"]
        cpu["other processes of the machine"] = max(busy - sum(cpu.values()), 0.0)
        with open(f"{prefix}_stats.csv", newline="") as fh:
            rows = list(csv.DictReader(fh))
        pages = [r for r in rows if r["Type"] not in ("JOB", "") and r["Name"] != "Aggregated"]
        times = json.loads((var / "page_times.json").read_text())
        ms = np.array([t for _, t, _ in times], dtype=float)
        out = {
            "users": args.users, "seconds": seconds, "celery_workers": args.workers,
            "gunicorn": {"workers": int(settings_used[0]), "threads": int(settings_used[1]),
                         "keepalive_s": int(settings_used[2])},
            "worker_nice": nice, "conn_max_age_s": args.conn_max_age,
            "page_requests": int(len(ms)),
            "page_errors": int(sum(1 for *_, ok in times if not ok)),
            "page_p50_ms": float(np.percentile(ms, 50)) if len(ms) else None,
            "page_p95_ms": float(np.percentile(ms, 95)) if len(ms) else None,
            "page_p99_ms": float(np.percentile(ms, 99)) if len(ms) else None,
            "pages": {f'{r["Type"]} {r["Name"]}': percentiles(rows, r["Name"]) for r in pages},
            "jobs": {r["Name"]: percentiles(rows, r["Name"]) for r in rows if r["Type"] == "JOB"},
            "server": server_times(logs / "access.log"),
            # where the machine's 2 x wall CPU-seconds went during the run (cores x seconds available)
            "cpu_seconds": {key: round(value, 1) for key, value in cpu.items()},
            "cpu_available_seconds": round(wall * (os.cpu_count() or 1), 1),
            "load_average_before": [round(x, 2) for x in before["load"]],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
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
