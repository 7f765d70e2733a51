"""A job deleted while a REAL Celery worker runs it (services.erasure.erase_job, what the Delete button and
`manage.py erase job` call): the worker stops, stores no result and writes no file, and takes the next job.
Uses the deployment of test_celery_worker.py (its own SQLite file, media folder, broker folder and queue)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from test_celery_worker import REPO, deployment, template_db  # noqa: F401 - the fixtures

pytestmark = [pytest.mark.celery, pytest.mark.timeout(240)]


# In a child process with the deployment's environment: queue a k-member job (long on Adult's 30,162 rows), wait until
# a worker runs it, then delete it through services.erasure (what the Delete button and `erase job` call).
SUBMIT_LONG = r"""
import django

django.setup()
from anonymizer_app.models import Dataset
from anonymizer_app.services import jobs

dataset = Dataset.objects.get(name__startswith="Adult")
job = jobs.create_job(dataset, "kmember", 5, 0.0, sensitive="occupation")
jobs.submit_job(job)
print(job.pk)
"""
ERASE_WHEN_RUNNING = r"""
import sys
import time

import django

django.setup()
from anonymizer_app.models import Job
from anonymizer_app.services import erasure

deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    job = Job.objects.select_related("dataset").get(pk=sys.argv[1])
    if job.status == "running" and job.progress > 0:
        break
    time.sleep(0.05)
done = erasure.erase_job(job)
print(job.status, job.progress, done.summary(), done.notes, sep="|")
"""


def _python(d, script: str, *args: str, wait: bool = True):
    cmd = [sys.executable, "-c", script, *args]
    if not wait:
        return subprocess.Popen(cmd, cwd=REPO, env=d.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = subprocess.run(cmd, cwd=REPO, env=d.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def _wait(condition, what: str, d, timeout: float = 45) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    pytest.fail(f"{what} after {timeout} s\nworker log:\n{d.log_tail()}")


def test_a_running_job_deleted_stores_nothing_and_the_worker_goes_on(deployment):  # noqa: F811
    d = deployment(None)
    job_id = _python(d, SUBMIT_LONG)
    eraser = _python(d, ERASE_WHEN_RUNNING, job_id, wait=False)
    d.start_worker()
    out, err = eraser.communicate(timeout=90)
    assert eraser.returncode == 0, err
    status, progress, summary, notes = out.strip().splitlines()[-1].split("|")
    assert (status, summary, notes) == ("running", "1 job and 0 files",
                                        "['1 queued or running job was cancelled first']"), out
    assert 0 < float(progress) < 1
    started = time.monotonic()
    _wait(lambda: "'deleted'" in d.worker_log.read_text(errors="replace"), "the worker did not finish the task", d)
    assert time.monotonic() - started < 15  # stopped at its next progress report, long before its end
    assert d.db.execute("SELECT count(*) FROM anonymizer_app_job").fetchone() == (0,)
    assert d.db.execute("SELECT count(*) FROM anonymizer_app_result").fetchone() == (0,)
    results = d.folder / "media" / "results"
    assert (sorted(p.name for p in results.rglob("*")) if results.exists() else []) == []

    # the worker is free and well: the next job runs to its end
    next_id = d.submit("Adult", k=5, suppression=0.04)
    job, _ = d.wait_until_finished(next_id)
    assert job["status"] == "succeeded", f"{job}\n{d.log_tail()}"
    assert [p.name for p in results.iterdir()] == [f"job-{next_id[:8]}-{next_id[8:12]}-{next_id[12:16]}-"
                                                   f"{next_id[16:20]}-{next_id[20:]}.parquet"]
