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


# A k-Optimize job with a 600 s time budget: its set-enumeration search reports progress (and so sees a cancel or a
# deletion) every engine.algorithms.koptimize.REPORT_SECONDS, not only when its budget runs out.
SUBMIT_KOPTIMIZE = r"""
import django

django.setup()
from anonymizer_app.models import Dataset
from anonymizer_app.services import jobs

dataset = Dataset.objects.get(name__startswith="Adult")
job = jobs.create_job(dataset, "koptimize", 5, 0.0, sensitive="occupation", options={"time_budget": 600.0})
jobs.submit_job(job)
print(job.pk)
"""


def _searching(d, job_id: str) -> bool:
    row = d.db.execute("SELECT status, phase FROM anonymizer_app_job WHERE id = ?", (job_id,)).fetchone()
    return row is not None and row[0] == "running" and "nodes searched" in row[1]


def test_a_koptimize_search_stops_at_once_when_cancelled_or_deleted(deployment):  # noqa: F811
    d = deployment(None)
    d.start_worker()

    # cancel (what the Cancel button does: services' cancel request on the row)
    job_id = _python(d, SUBMIT_KOPTIMIZE).replace("-", "")
    _wait(lambda: _searching(d, job_id), "the search never reported", d)
    d.db.execute("UPDATE anonymizer_app_job SET cancel_requested = 1 WHERE id = ?", (job_id,))
    job, _ = d.wait_until_finished(job_id)  # fails after 45 s: the budget is 600 s
    assert (job["status"], job["message"]) == ("cancelled", "cancelled by the user"), d.log_tail()
    # the last progress written is the search's, a small share of its budget: it was stopped, not timed out
    running = [(p, ph) for s, p, ph, _ in d.history(job_id) if s == "running" and "nodes searched" in ph]
    assert running and running[-1][0] < 0.2, running
    assert d.result_report(job_id) is None

    # delete (services.erasure, what the Delete button calls) while the search runs
    job_id = _python(d, SUBMIT_KOPTIMIZE)
    _wait(lambda: _searching(d, job_id.replace("-", "")), "the search never reported", d)
    out = _python(d, ERASE_WHEN_RUNNING, job_id)
    assert out.split("|")[2] == "1 job and 0 files", out
    _wait(lambda: "'deleted'" in d.worker_log.read_text(errors="replace"), "the deleted search did not stop", d)
    assert d.db.execute("SELECT count(*) FROM anonymizer_app_job").fetchone() == (1,)  # the cancelled one
    assert d.db.execute("SELECT count(*) FROM anonymizer_app_result").fetchone() == (0,)
