"""Work limits: every job runs under a soft and a hard Celery time limit of its kind (settings
ANONYMIZER_JOB_TIME_LIMIT_SECONDS, ..._<KIND>_SECONDS, ..._GRACE_SECONDS). A job that reaches its limit ends
failed with "stopped after N s: the time limit for <kind> jobs (setting ...)", nothing of its output stored,
and is never queued again by the sweep (it would only hit the limit again).

The limits are signals of Celery's prefork pool, so the last tests run a REAL prefork worker (the fixtures of
tests/test_celery_worker.py) on handlers that this test's worker registers for two kinds: one that runs
Python for ever (stopped by the soft limit: SoftTimeLimitExceeded inside the task) and one stuck in a C call
that never checks for signals (only the hard limit, which kills the process, stops it; the worker's main
process then settles the job, tasks.JobRequest)."""

from __future__ import annotations

import subprocess
import sys
import uuid
from datetime import timedelta

import pytest
import test_celery_worker
from anonymizer_helpers import make_dataset, queue_without_running
from billiard.exceptions import SoftTimeLimitExceeded
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from anonymizer_app import settings as project_settings
from anonymizer_app.engine import EngineError
from anonymizer_app.models import Job, Result
from anonymizer_app.services import jobs, storage

REPO, Deployment = test_celery_worker.REPO, test_celery_worker.Deployment
deployment, template_db = test_celery_worker.deployment, test_celery_worker.template_db  # the worker fixtures


def _message(seconds: str, kind: str, setting: str) -> str:
    return (f"stopped after {seconds} s: the time limit for {kind} jobs (setting {setting}); its partial outputs "
            f"were discarded")


# ---- the settings ---------------------------------------------------------------------------------------------
def test_defaults_and_per_kind_overrides_from_the_environment(monkeypatch):
    for name in [n for n in __import__("os").environ if n.startswith("ANONYMIZER_JOB_TIME_LIMIT_")]:
        monkeypatch.delenv(name)
    assert project_settings._job_time_limits() == (3600.0, 60.0, {})
    monkeypatch.setenv("ANONYMIZER_JOB_TIME_LIMIT_SECONDS", "600")
    monkeypatch.setenv("ANONYMIZER_JOB_TIME_LIMIT_GRACE_SECONDS", "30")
    monkeypatch.setenv("ANONYMIZER_JOB_TIME_LIMIT_LATTICE_KEEP_SECONDS", "90.5")
    monkeypatch.setenv("ANONYMIZER_JOB_TIME_LIMIT_RUN_SECONDS", "7200")
    assert project_settings._job_time_limits() == (600.0, 30.0, {"lattice-keep": 90.5, "run": 7200.0})
    for value in ("abc", "0", "-5", "nan", "", "1e9"):
        monkeypatch.setenv("ANONYMIZER_JOB_TIME_LIMIT_RUN_SECONDS", value)
        with pytest.raises(ImproperlyConfigured) as caught:
            project_settings._job_time_limits()
        assert str(caught.value) == f"ANONYMIZER_JOB_TIME_LIMIT_RUN_SECONDS={value!r}: give a number of seconds above 0 and below 10,000,000"


def test_every_registered_kind_has_limits_and_the_setting_that_sets_them(settings):
    settings.ANONYMIZER_JOB_TIME_LIMIT_SECONDS = 3600
    settings.ANONYMIZER_JOB_TIME_LIMIT_GRACE_SECONDS = 60
    settings.ANONYMIZER_JOB_TIME_LIMITS = {"lattice-keep": 120}
    assert {"run", "comparison", "experiment", "lattice", "lattice-keep"} <= set(jobs.JOB_HANDLERS)
    for kind in jobs.JOB_HANDLERS:
        expected = ((120.0, 180.0, "ANONYMIZER_JOB_TIME_LIMIT_LATTICE_KEEP_SECONDS") if kind == "lattice-keep"
                    else (3600.0, 3660.0, "ANONYMIZER_JOB_TIME_LIMIT_SECONDS"))
        assert jobs.time_limit(kind) == expected


@pytest.mark.django_db
def test_submit_puts_the_kinds_limits_on_the_message(user, settings, monkeypatch):
    from anonymizer_app import tasks

    settings.ANONYMIZER_JOB_TIME_LIMIT_SECONDS = 3600
    settings.ANONYMIZER_JOB_TIME_LIMIT_GRACE_SECONDS = 60
    settings.ANONYMIZER_JOB_TIME_LIMITS = {"comparison": 300}
    sent = []

    class Sent:
        id = "celery-id"

    monkeypatch.setattr(tasks.run_job_task, "apply_async", lambda args, **options: sent.append((args, options)) or Sent)
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.25, "disease")
    jobs.submit_job(job)
    Job.objects.filter(pk=job.pk).update(kind=Job.COMPARISON)
    job.refresh_from_db()
    jobs.submit_job(job)
    assert sent == [((str(job.pk),), {"soft_time_limit": 3600.0, "time_limit": 3660.0}),
                    ((str(job.pk),), {"soft_time_limit": 300.0, "time_limit": 360.0})]


# ---- the soft limit's exception, in-process --------------------------------------------------------------------
def _write_outputs(job: Job) -> list:
    """What a run has written when its limit strikes: a stored output with its Result row, a half-written
    output beside it and a scratch file."""
    media = storage.media_root()
    stored = media / storage.result_name(job)
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_bytes(b"stored")
    partial = stored.parent / f".{stored.name}.4242.tmp"
    partial.write_bytes(b"half")
    scratch = storage.job_scratch_path(job) / "classes.db"
    scratch.write_bytes(b"scratch")
    Result.objects.create(job=job, output=storage.result_name(job), report={})
    return [stored, partial, scratch]


@pytest.mark.django_db
@pytest.mark.parametrize("how", ["raised", "turned into an engine error"])
def test_a_job_stopped_by_its_soft_limit_fails_with_the_limit_named_and_nothing_stored(user, settings, monkeypatch,
                                                                                      how):
    queue_without_running(monkeypatch)
    settings.ANONYMIZER_JOB_TIME_LIMITS = {"experiment": 2}
    written = []

    def handler(job):
        written.extend(_write_outputs(job))
        try:
            raise SoftTimeLimitExceeded()
        except SoftTimeLimitExceeded as exc:
            if how == "raised":
                raise
            raise EngineError("the search could not finish") from exc

    monkeypatch.setitem(jobs.JOB_HANDLERS, "experiment", handler)
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.25, "disease")
    Job.objects.filter(pk=job.pk).update(kind=Job.EXPERIMENT)
    done = jobs.run_job(job)
    assert (done.status, done.message) == (
        Job.FAILED, _message("2", "experiment", "ANONYMIZER_JOB_TIME_LIMIT_EXPERIMENT_SECONDS"))
    assert written and not any(path.exists() for path in written)
    assert not Result.objects.filter(job_id=job.pk).exists()
    assert jobs.sweep_stale_jobs()["requeued"] == []


# ---- the sweep and a redelivery do not run a job again that ran into its limit -----------------------------------
@pytest.fixture
def killed_at_its_limit(user, settings, monkeypatch):
    """A running job whose worker stopped beating after it had run 3 s, with a 3 s limit for its kind (the hard
    limit's kill, or a worker that died right then); its outputs are on disk."""
    queue_without_running(monkeypatch)
    settings.ANONYMIZER_JOB_TIME_LIMITS = {"run": 3}
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.25, "disease")
    last_beat = timezone.now() - timedelta(minutes=5)
    Job.objects.filter(pk=job.pk).update(status=Job.RUNNING, started=last_beat - timedelta(seconds=3),
                                         heartbeat=last_beat, attempts=1)
    storage.make_folder(storage.job_scratch_path(job))
    job.refresh_from_db()
    return job, _write_outputs(job)


@pytest.mark.django_db
def test_the_sweep_fails_a_job_stopped_by_its_limit_instead_of_queueing_it_again(killed_at_its_limit, monkeypatch):
    job, written = killed_at_its_limit
    submitted = queue_without_running(monkeypatch)
    out = jobs.sweep_stale_jobs()
    assert (out["requeued"], out["failed"], submitted) == ([], [str(job.pk)], [])
    job.refresh_from_db()
    assert (job.status, job.message) == (Job.FAILED, _message("3", "run", "ANONYMIZER_JOB_TIME_LIMIT_RUN_SECONDS"))
    assert not any(path.exists() for path in written) and not Result.objects.filter(job_id=job.pk).exists()


@pytest.mark.django_db
def test_a_redelivered_message_of_such_a_job_does_not_run_it(killed_at_its_limit, monkeypatch):
    job, written = killed_at_its_limit
    ran = []
    monkeypatch.setitem(jobs.JOB_HANDLERS, "run", ran.append)
    jobs.run_job(job)
    done = Job.objects.get(pk=job.pk)
    assert (done.status, done.message, done.attempts, ran) == (
        Job.FAILED, _message("3", "run", "ANONYMIZER_JOB_TIME_LIMIT_RUN_SECONDS"), 1, [])
    assert not any(path.exists() for path in written) and not Result.objects.filter(job_id=job.pk).exists()


@pytest.mark.django_db
def test_a_job_that_died_well_within_its_limit_is_still_queued_again(killed_at_its_limit, settings, monkeypatch):
    job, _ = killed_at_its_limit
    settings.ANONYMIZER_JOB_TIME_LIMITS = {"run": 3.5}  # it beat for 3 s
    settings.ANONYMIZER_JOB_TIME_LIMIT_GRACE_SECONDS = 3600  # and started 5 min ago, within the hard limit
    submitted = queue_without_running(monkeypatch)
    assert jobs.sweep_stale_jobs()["requeued"] == [str(job.pk)] and submitted == [job.pk]


# ---- a real prefork worker ---------------------------------------------------------------------------------------
HANDLERS = r'''
"""Handlers registered only in this test's worker (CELERY_IMPORTS): they write outputs, then never end."""
from anonymizer_app.models import Result
from anonymizer_app.services import jobs, storage


def _outputs(job):
    stored = storage.media_root() / storage.result_name(job)
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_bytes(b"stored")
    (stored.parent / f".{stored.name}.4242.tmp").write_bytes(b"half")
    (storage.job_scratch_path(job) / "classes.db").write_bytes(b"scratch")
    Result.objects.create(job=job, output=storage.result_name(job), report={})


def python_forever(job):  # the soft limit's exception stops it at the next bytecode
    _outputs(job)
    n = 0
    while True:
        n = (n + 1) % 1000


def stuck_in_c(job):  # one C call that never checks for signals (sum over a range): only a kill stops it
    _outputs(job)
    sum(range(10**15))


jobs.register("comparison", python_forever)
jobs.register("lattice", stuck_in_c)
'''

SUBMIT = r'''
import sys

import django

django.setup()

from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import jobs

dataset = Dataset.objects.get(name__startswith="Adult")
job = Job.objects.create(owner=dataset.owner, dataset=dataset, kind=sys.argv[1], algorithm="test", k=2, config={})
jobs.submit_job(job)
print(job.pk)
'''


def _submit(d: Deployment, kind: str) -> str:
    proc = subprocess.run([sys.executable, "-c", SUBMIT, kind], cwd=REPO, env=d.env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, f"job submission failed:\n{proc.stdout}\n{proc.stderr}"
    return uuid.UUID(proc.stdout.strip().splitlines()[-1]).hex


def _left(d: Deployment, job_id: str) -> list[str]:
    """Every file of the job still on disk (stored output, half-written output, scratch folder)."""
    name = str(uuid.UUID(job_id))
    found = sorted(p.name for p in (d.folder / "media" / "results").glob(f"*job-{name}*"))
    scratch = d.folder / "job-tmp" / name
    return found + ([f"scratch: {p.name}" for p in scratch.iterdir()] if scratch.exists() else [])


@pytest.mark.celery
@pytest.mark.timeout(240)
def test_a_real_prefork_worker_stops_jobs_at_their_soft_and_hard_limits(deployment):
    d = deployment(None)
    pkg = d.folder / "pysettings"
    (pkg / "time_limit_handlers.py").write_text(HANDLERS)
    with open(pkg / "worker_test_settings.py", "a") as fh:
        fh.write('CELERY_IMPORTS = ["time_limit_handlers"]\n')
    d.env.update(ANONYMIZER_JOB_TIME_LIMIT_COMPARISON_SECONDS="1", ANONYMIZER_JOB_TIME_LIMIT_LATTICE_SECONDS="1",
                 ANONYMIZER_JOB_TIME_LIMIT_GRACE_SECONDS="1",
                 # the sweep runs often and calls a job stale after 3 s: it must still not queue these again
                 ANONYMIZER_HEARTBEAT_SECONDS="0.3", ANONYMIZER_JOB_STALE_SECONDS="3", ANONYMIZER_SWEEP_SECONDS="0.5")
    soft_job = _submit(d, "comparison")
    hard_job = _submit(d, "lattice")
    d.start_worker(pool="prefork")

    job, _ = d.wait_until_finished(soft_job)
    context = f"\nhistory: {d.history(soft_job)}\nworker log:\n{d.log_tail()}"
    assert (job["status"], job["message"]) == (
        "failed", _message("1", "comparison", "ANONYMIZER_JOB_TIME_LIMIT_COMPARISON_SECONDS")), context
    assert d.result_report(soft_job) is None and _left(d, soft_job) == [], context

    job, _ = d.wait_until_finished(hard_job)
    context = f"\nhistory: {d.history(hard_job)}\nworker log:\n{d.log_tail(80)}"
    assert (job["status"], job["message"]) == (
        "failed", _message("2", "lattice", "ANONYMIZER_JOB_TIME_LIMIT_LATTICE_SECONDS")), context
    assert d.result_report(hard_job) is None and _left(d, hard_job) == [], context

    # several sweeps later (every 0.5 s; stale after 2 s) neither job was queued or run again
    proc = subprocess.run([sys.executable, "manage.py", "sweep_jobs"], cwd=REPO, env=d.env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for job_id in (soft_job, hard_job):
        history = d.history(job_id)
        assert test_celery_worker._statuses(history) == ["queued", "running", "failed"], history
    assert d.worker.poll() is None  # the worker survives both (the killed process is replaced)
    log = d.worker_log.read_text(errors="replace")
    # Celery logs the kill (with its own TimeLimitExceeded traceback); settling the job after it did not fail
    assert "Hard time limit (2.0s) exceeded" in log and "settling job" not in log, d.log_tail(80)


@pytest.mark.celery
@pytest.mark.timeout(240)
def test_a_real_run_past_its_limit_is_stopped_and_leaves_nothing(deployment):
    # the disk hybrid on 150,810 rows in small chunks runs for about a second on a quiet machine (it finished
    # within a 1 s limit there): the limit is well below that
    d = deployment(None)
    d.env.update(ANONYMIZER_JOB_TIME_LIMIT_RUN_SECONDS="0.2", ANONYMIZER_JOB_TIME_LIMIT_GRACE_SECONDS="30")
    job_id = d.submit("Five Adults", k=5, suppression=0.0, variant="disk")
    d.start_worker(pool="prefork")
    job, _ = d.wait_until_finished(job_id)
    context = f"\nhistory: {d.history(job_id)}\nworker log:\n{d.log_tail()}"
    assert (job["status"], job["message"]) == (
        "failed", _message("0.2", "run", "ANONYMIZER_JOB_TIME_LIMIT_RUN_SECONDS")), context
    assert d.result_report(job_id) is None and _left(d, job_id) == [], context
    assert test_celery_worker._statuses(d.history(job_id)) == ["queued", "running", "failed"], context
