"""Jobs through a REAL Celery worker process over a REAL broker (Redis, and kombu's filesystem transport).

The worker is a separate process, so the test cannot use pytest-django's test database (in-memory
SQLite, or a transaction the worker would never see). Instead every test gets its own folder with
a SQLite file, a MEDIA_ROOT and a broker folder, and every process (migrate, job submission, worker)
runs with the same environment:

    DATABASE_URL=sqlite:///<tmp>/db.sqlite3  MEDIA_ROOT=<tmp>/media  [REDIS_URL=redis://.../15]
    DJANGO_SETTINGS_MODULE=worker_test_settings  (the project settings + a private queue/broker folder)

The small settings module is needed because the project settings take the filesystem broker's
folder from var/broker without an environment override, and because a unique queue name keeps this
worker away from anyone else's tasks on the shared Redis database 15.

Progress is observed two ways: the test polls the job row, and SQLite triggers record EVERY write
to it (the worker throttles its progress writes to one per 0.3 s, so polling alone could miss them).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
JOB_TIMEOUT = 45  # seconds from submission to a finished job

pytestmark = [pytest.mark.celery, pytest.mark.timeout(180)]

SETTINGS_MODULE = '''\
import os

from anonymizer_app.settings import *  # noqa: F401,F403
from anonymizer_app.settings import REDIS_URL

CELERY_TASK_DEFAULT_QUEUE = {queue!r}
if not REDIS_URL:
    _broker = {broker!r}
    CELERY_BROKER_TRANSPORT_OPTIONS = {{
        "data_folder_in": os.path.join(_broker, "queue"),
        "data_folder_out": os.path.join(_broker, "queue"),
        "processed_folder": os.path.join(_broker, "processed"),
        "store_processed": False,
        "control_folder": os.path.join(_broker, "control"),
    }}
'''

# Runs in a child process: make a job on a demo dataset and put it on the broker (services.jobs.submit_job).
SUBMIT = r'''
import sys

import django

django.setup()

from anonymizer_app.services import jobs
from anonymizer_app.models import Dataset
from hierarchy_editor.models import Hierarchy

dataset_prefix, k, suppression, variant = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
dataset = Dataset.objects.get(name__startswith=dataset_prefix)
if variant == "uncovered-age":
    # a hierarchy that covers ages 1..30 only: Adult has people up to 90
    column = dataset.columns.get(name="age")
    text = "\n".join(column.hierarchy.content.splitlines()[:30]) + "\n"
    h = Hierarchy.from_text(dataset.owner, "age 1-30 only", text, "age_1_to_30.csv")
    h.save()
    column.hierarchy = h
    column.save()
if variant == "disk":  # the disk hybrid out of core, in small chunks: seconds of writing, scratch files on disk
    job = jobs.create_job(dataset, "disk-clustering", k, suppression, sensitive="occupation",
                          options={"memory_mb": 16})
else:
    job = jobs.create_job(dataset, "datafly", k, suppression, sensitive="occupation")
jobs.submit_job(job)
print(job.pk)
'''

LOG_TRIGGERS = """
CREATE TABLE job_log (id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT, status TEXT, progress REAL,
                      phase TEXT, message TEXT);
CREATE TRIGGER job_log_insert AFTER INSERT ON anonymizer_app_job BEGIN
    INSERT INTO job_log (job_id, status, progress, phase, message)
    VALUES (NEW.id, NEW.status, NEW.progress, NEW.phase, NEW.message);
END;
CREATE TRIGGER job_log_update AFTER UPDATE ON anonymizer_app_job BEGIN
    INSERT INTO job_log (job_id, status, progress, phase, message)
    VALUES (NEW.id, NEW.status, NEW.progress, NEW.phase, NEW.message);
END;
"""


def _manage(env: dict, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"manage.py {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _base_env(folder: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    # DEBUG off, as in production: then a SECRET_KEY must be given (anonymizer_app/checks.py)
    env.update(DATABASE_URL=f"sqlite:///{folder / 'db.sqlite3'}", MEDIA_ROOT=str(folder / "media"),
               PYTHONUNBUFFERED="1", DEBUG="0", SECRET_KEY="worker-test-" + "k" * 50,
               ANONYMIZER_VAULT_KEY="oV7y3sYb3q0m3mJ2kq4yQ9fWkz2cXl5u1vTq8r9pZ6A=",  # required with DEBUG off
               # the system temp folder of every process, and the jobs' scratch folders: the test's own, so
               # that it can see what a job leaves behind
               TMPDIR=str(folder / "system-tmp"), ANONYMIZER_JOB_TMP=str(folder / "job-tmp"))
    (folder / "system-tmp").mkdir(exist_ok=True)
    return env


# Runs in a child process: a dataset of 5 copies of the demo Adult table (150,810 rows), with its roles and
# hierarchies, for jobs that run long enough to be killed while they write.
ADULT_X5 = r'''
import django

django.setup()

from anonymizer_app.models import Dataset
from anonymizer_app.services.datasets import create_dataset

adult = Dataset.objects.get(name__startswith="Adult")
head, *rows = adult.original.open("rb").read().decode("utf-8").splitlines()
big = create_dataset(adult.owner, ("\n".join([head, *rows * 5]) + "\n").encode("utf-8"), "adult_x5.csv",
                     name="Five Adults (150,810 rows)")
source = {c.name: c for c in adult.columns.all()}
for column in big.columns.all():
    column.role, column.hierarchy = source[column.name].role, source[column.name].hierarchy
    column.save()
print(big.n_rows)
'''


@pytest.fixture(scope="module")
def template_db(tmp_path_factory, demo_datasets) -> Path:
    """A migrated SQLite database with the demo data (Adult, people) loaded once for the module."""
    folder = tmp_path_factory.mktemp("worker-template")
    env = _base_env(folder)
    _manage(env, "migrate", "--noinput")
    _manage(env, "load_demo", "--user", "demo")
    big = subprocess.run([sys.executable, "-c", ADULT_X5], cwd=REPO, capture_output=True, text=True, timeout=120,
                         env={**env, "DJANGO_SETTINGS_MODULE": "anonymizer_app.settings"})
    assert big.returncode == 0 and big.stdout.split()[-1] == "150810", big.stderr
    return folder


class Deployment:
    """One database + media + broker folder, the processes that share it, and the job log."""

    def __init__(self, template: Path, folder: Path, redis_url: str | None):
        for item in template.iterdir():
            target = folder / item.name
            shutil.copytree(item, target) if item.is_dir() else shutil.copy2(item, target)
        self.folder = folder
        self.queue = f"anonymizer-test-{uuid.uuid4().hex[:12]}"
        self.broker = folder / "broker"
        for sub in ("queue", "processed", "control"):
            (self.broker / sub).mkdir(parents=True)
        pkg = folder / "pysettings"
        pkg.mkdir()
        (pkg / "worker_test_settings.py").write_text(SETTINGS_MODULE.format(queue=self.queue, broker=str(self.broker)))
        self.env = _base_env(folder)
        self.env.update(DJANGO_SETTINGS_MODULE="worker_test_settings",
                        PYTHONPATH=os.pathsep.join([str(pkg), str(REPO)]))
        if redis_url:
            self.env["REDIS_URL"] = redis_url
        self.db = sqlite3.connect(folder / "db.sqlite3", timeout=30, isolation_level=None)
        self.db.executescript(LOG_TRIGGERS)
        self.worker: subprocess.Popen | None = None
        self.worker_log = folder / "worker.log"

    # ---- processes ----------------------------------------------------------------------------
    def submit(self, dataset: str, k: int, suppression: float, variant: str = "") -> str:
        proc = subprocess.run([sys.executable, "-c", SUBMIT, dataset, str(k), str(suppression), variant or "-"],
                              cwd=REPO, env=self.env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"job submission failed:\n{proc.stdout}\n{proc.stderr}"
        return uuid.UUID(proc.stdout.strip().splitlines()[-1]).hex  # Django stores UUIDs as 32 hex chars

    def start_worker(self, pool: str = "solo") -> None:
        cmd = [sys.executable, "-m", "celery", "-A", "anonymizer_app", "worker", f"--pool={pool}", "--concurrency=1",
               "-l", "info", "-Q", self.queue, "-n", f"{self.queue}-{uuid.uuid4().hex[:6]}@%h",
               "--without-gossip", "--without-mingle", "--without-heartbeat"]
        with open(self.worker_log, "ab") as log:
            self.worker = subprocess.Popen(cmd, cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT)

    def kill_worker(self, sig: int) -> None:
        """Signal the worker's main process and wait for it to exit; after 10 s it is killed, as a supervisor
        (or `make run`'s stop) does with a worker that does not stop (a cold shutdown can hang in the pool)."""
        assert self.worker is not None
        self.worker.send_signal(sig)
        try:
            self.worker.wait(timeout=10 if sig != signal.SIGTERM else 30)
        except subprocess.TimeoutExpired:
            self.worker.kill()
            self.worker.wait(timeout=10)
        self.worker = None

    def stop_worker(self) -> None:
        if self.worker is None or self.worker.poll() is not None:
            return
        self.worker.send_signal(signal.SIGTERM)  # warm shutdown
        try:
            self.worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.worker.kill()
            self.worker.wait(timeout=10)

    def log_tail(self, lines: int = 40) -> str:
        text = self.worker_log.read_text(errors="replace") if self.worker_log.exists() else "(no worker log)"
        return "\n".join(text.splitlines()[-lines:])

    # ---- observation --------------------------------------------------------------------------
    def job(self, job_id: str) -> dict:
        row = self.db.execute("SELECT status, progress, phase, message FROM anonymizer_app_job WHERE id = ?",
                              (job_id,)).fetchone()
        assert row is not None, f"job {job_id} is not in the database"
        return dict(zip(("status", "progress", "phase", "message"), row))

    def wait_until_finished(self, job_id: str) -> tuple[dict, list[tuple]]:
        """Poll the job row; return its final state and the distinct (status, progress, phase) seen."""
        seen: list[tuple] = []
        deadline = time.monotonic() + JOB_TIMEOUT
        while time.monotonic() < deadline:
            job = self.job(job_id)
            state = (job["status"], job["progress"], job["phase"])
            if not seen or seen[-1] != state:
                seen.append(state)
            if job["status"] in ("succeeded", "failed", "cancelled"):
                return job, seen
            if self.worker is not None and self.worker.poll() is not None:
                pytest.fail(f"the worker exited ({self.worker.returncode}) before the job ended:\n{self.log_tail()}")
            time.sleep(0.05)
        pytest.fail(f"job still {seen[-1] if seen else '?'} after {JOB_TIMEOUT} s; polled {seen}\n{self.log_tail()}")

    def history(self, job_id: str) -> list[tuple]:
        """Every write to the job row, in order (from the triggers)."""
        return self.db.execute("SELECT status, progress, phase, message FROM job_log WHERE job_id = ? ORDER BY id",
                               (job_id,)).fetchall()

    def result_report(self, job_id: str) -> tuple[dict, str] | None:
        row = self.db.execute("SELECT report, output FROM anonymizer_app_result WHERE job_id = ?",
                              (job_id,)).fetchone()
        return None if row is None else (json.loads(row[0]), row[1])

    def close(self) -> None:
        try:
            self.stop_worker()
        finally:
            self.db.close()


@pytest.fixture
def deployment(template_db, tmp_path):
    created: list[Deployment] = []

    def make(redis_url: str | None = None) -> Deployment:
        d = Deployment(template_db, tmp_path, redis_url)
        created.append(d)
        return d

    yield make
    for d in created:
        d.close()  # the worker is always stopped, whatever the test did


def _statuses(history: list[tuple]) -> list[str]:
    out: list[str] = []
    for status, *_ in history:
        if not out or out[-1] != status:
            out.append(status)
    return out


def _assert_succeeded_with_progress(d: Deployment, job_id: str, k: int) -> None:
    job, polled = d.wait_until_finished(job_id)
    history = d.history(job_id)
    context = f"\npolled: {polled}\nhistory: {history}\nworker log:\n{d.log_tail()}"
    assert job["status"] == "succeeded", f"job ended {job['status']}: {job['message']}{context}"
    assert _statuses(history) == ["queued", "running", "succeeded"], context
    running = [(progress, phase) for status, progress, phase, _ in history if status == "running"]
    engine_updates = [(p, ph) for p, ph in running if ph != "loading the dataset"]
    # The engine's progress reached the job row while it ran, in order: its first phase, then its
    # closing phases (from 95 %, written unthrottled). Below 95 % the job row takes at most one write
    # per 0.1 s (services.jobs.Progress), and Datafly on Adult takes ~30 ms, so its per-iteration reports
    # may all fall inside one window: Datafly's own report is checked in the stored steps below.
    assert engine_updates and engine_updates[0][1] == "encoding quasi-identifiers", context
    assert any(p >= 0.95 for p, _ in engine_updates[1:]), context
    assert [p for p, _ in running] == sorted(p for p, _ in running), context
    assert history[-1][1:3] == (1.0, "done"), context
    assert polled[-1][0] == "succeeded" and set(polled) <= {(s, p, ph) for s, p, ph, _ in history}, context

    stored = d.result_report(job_id)
    assert stored is not None, f"no Result row for the succeeded job{context}"
    report, output_name = stored
    assert report["verified"] is True
    assert report["k_achieved"] >= k and report["k"] == k
    assert report["algorithm"] == "datafly"
    steps = report["steps"]  # Datafly's iterations, as its progress reports named them
    assert len(steps) >= 2 and [s["iteration"] for s in steps] == list(range(1, len(steps) + 1))
    # every Adult record went in; the suppressed ones are not published (the default publishing policy)
    assert report["input_records"] == 30162
    assert report["records"] == 30162 - report["suppressed"]
    assert (d.folder / "media" / output_name).is_file()


# ---- (a) Redis ------------------------------------------------------------------------------------------
@pytest.mark.redis
def test_datafly_job_over_redis(deployment, redis_url):
    import redis

    d = deployment(redis_url)
    client = redis.Redis.from_url(redis_url)
    try:
        job_id = d.submit("Adult", k=5, suppression=0.0)
        assert d.job(job_id)["status"] == "queued"
        assert client.llen(d.queue) == 1  # the message is on Redis, waiting for a worker
        d.start_worker()
        _assert_succeeded_with_progress(d, job_id, k=5)
        assert client.llen(d.queue) == 0
        assert "redis://" in d.worker_log.read_text(errors="replace")  # the worker's banner names its broker
    finally:
        d.stop_worker()
        client.delete(d.queue)
        celery_id = d.db.execute("SELECT celery_id FROM anonymizer_app_job").fetchone()
        if celery_id and celery_id[0]:
            client.delete(f"celery-task-meta-{celery_id[0]}")
        client.close()


# ---- (b) the embedded filesystem broker ---------------------------------------------------------------------
def test_datafly_job_over_the_filesystem_broker(deployment):
    d = deployment(None)
    job_id = d.submit("Adult", k=5, suppression=0.04)
    assert d.job(job_id)["status"] == "queued"
    queued = list((d.broker / "queue").iterdir())
    assert len(queued) == 1 and d.queue in queued[0].name  # the message file, in this test's folder
    d.start_worker()
    _assert_succeeded_with_progress(d, job_id, k=5)
    assert list((d.broker / "queue").iterdir()) == []  # consumed
    assert "filesystem://" in d.worker_log.read_text(errors="replace")


# ---- (c) a job that cannot run ends failed with the reason --------------------------------------------------
def test_job_with_a_hierarchy_that_does_not_cover_the_data_fails(deployment):
    d = deployment(None)
    job_id = d.submit("Adult", k=5, suppression=0.0, variant="uncovered-age")
    d.start_worker()
    job, polled = d.wait_until_finished(job_id)
    context = f"\npolled: {polled}\nhistory: {d.history(job_id)}\nworker log:\n{d.log_tail()}"
    assert job["status"] == "failed", context
    assert job["message"].startswith("column 'age': 58 value(s) not covered by the hierarchy age_1_to_30.csv"), context
    assert _statuses(d.history(job_id)) == ["queued", "running", "failed"], context
    assert d.result_report(job_id) is None
    assert d.worker.poll() is None  # the worker survives a failed job


# ---- (d) worker deaths: every job reaches a final state --------------------------------------------------
LIVENESS = {"ANONYMIZER_HEARTBEAT_SECONDS": "0.3", "ANONYMIZER_JOB_STALE_SECONDS": "2",
            "ANONYMIZER_SWEEP_SECONDS": "0.5"}


def _writing(d: Deployment, job_id: str) -> tuple[list[str], list[str]]:
    """The job's half-written output in media and the files in its scratch folder, right now."""
    name = str(uuid.UUID(job_id))
    results = d.folder / "media" / "results"
    partial = sorted(p.name for p in results.glob(f".job-{name}.parquet.*.tmp")) if results.is_dir() else []
    return partial, _files(d.folder / "job-tmp" / name)


def _wait_writing(d: Deployment, job_id: str, timeout: float = 45) -> list[str]:
    """Wait until the disk hybrid writes its output (a partial .tmp Parquet in media) while its scratch files are
    on disk; returns the scratch files seen then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        partial, scratch = _writing(d, job_id)
        if partial and scratch:
            return scratch
        if d.job(job_id)["status"] in ("succeeded", "failed", "cancelled"):
            break
        time.sleep(0.02)
    pytest.fail(f"never saw the job writing with scratch files: {d.job(job_id)}\n{d.log_tail()}")


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _temp_leftovers(d: Deployment) -> list[str]:
    media = d.folder / "media"
    return [str(p) for p in media.rglob("*") if p.is_file() and (p.suffix == ".tmp" or ".tmp" in p.name)]


@pytest.mark.parametrize("broker", ["filesystem", pytest.param("redis", marks=pytest.mark.redis)])
@pytest.mark.parametrize("death", ["sigkill", "child-oom", "warm-stop", "cold-stop"])
def test_a_job_ends_in_a_final_state_after_its_worker_dies(deployment, request, broker, death):
    """A disk-clustering job on 150,810 rows, its worker killed while the job writes its output (a partial
    Parquet in media, the disk hybrid's record files and class counts in its scratch folder): the job ends
    succeeded (re-run from scratch), and neither media, nor the scratch folders, nor the system temp
    folder (TMPDIR of every process) holds anything of it."""
    redis_url = request.getfixturevalue("redis_url") if broker == "redis" else None
    d = deployment(redis_url)
    d.env.update(LIVENESS)
    job_id = d.submit("Five Adults", k=5, suppression=0.0, variant="disk")
    pool = "prefork" if death in ("child-oom", "cold-stop") else "solo"  # make run: prefork
    d.start_worker(pool)
    scratch = _wait_writing(d, job_id)
    # what is killed: the disk hybrid's clustered records and the input and output class counts
    assert any("/disk-clustering-" in f and "/results/part-" in f for f in scratch) \
        and any("/after/part-" in f for f in scratch), scratch
    started = time.monotonic()
    assert d.worker is not None
    if death == "sigkill":
        d.kill_worker(signal.SIGKILL)
    elif death == "child-oom":  # the pool child running the job is killed, as the OOM killer does
        children = _children(d.worker.pid)
        assert children, d.log_tail()
        for child in children:
            os.kill(child, signal.SIGKILL)
    elif death == "warm-stop":  # SIGTERM: the worker finishes the job, then exits
        d.kill_worker(signal.SIGTERM)
    else:  # cold stop: SIGQUIT ends the worker at once
        d.kill_worker(signal.SIGQUIT)
    if death in ("sigkill", "child-oom"):  # no code ran after the kill: its leftovers wait for the sweep or re-run
        assert _temp_leftovers(d) and _files(d.folder / "job-tmp"), d.log_tail()
    if d.worker is None and d.job(job_id)["status"] not in ("succeeded", "failed", "cancelled"):
        d.start_worker(pool)  # the next worker's sweep finds the stale job and queues it again
    job, _ = d.wait_until_finished(job_id)
    elapsed = time.monotonic() - started
    history = d.history(job_id)
    context = f"\nhistory: {_statuses(history)}\nworker log:\n{d.log_tail(60)}"
    assert job["status"] == "succeeded", f"{job}{context}"
    assert elapsed < 40, context
    stored = d.result_report(job_id)
    assert stored is not None and stored[0]["verified"] is True, context
    assert stored[0]["records"] == 150810, context
    if death in ("sigkill", "child-oom", "cold-stop"):
        assert _statuses(history)[:3] == ["queued", "running", "queued"] or "restarted" in str(history), context
    # nothing of the job left: no partial output in media, no scratch folder, nothing in the system temp folder
    assert _temp_leftovers(d) == [], context
    assert sorted(os.listdir(d.folder / "job-tmp")) == [], context
    assert _files(d.folder / "system-tmp") == [], context
    # the dataset the job read is intact
    count = subprocess.run([sys.executable, "-c", "import django; django.setup(); "
                            "from anonymizer_app.models import Dataset; "
                            "print(Dataset.objects.get(name__startswith='Five Adults').n_rows)"],
                           cwd=REPO, env=d.env, capture_output=True, text=True, timeout=60)
    assert count.stdout.strip().splitlines()[-1] == "150810", count.stderr
