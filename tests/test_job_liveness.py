"""No job stays "running" after its worker dies: the heartbeat, the re-run of a redelivered job, the sweep
that queues stale jobs again (or fails them after the attempts), cancel of a stuck job, a deleted job."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from anonymizer_helpers import make_dataset, queue_without_running
from django.utils import timezone

from anonymizer_app.models import Job, Result
from anonymizer_app.services import jobs

pytestmark = pytest.mark.django_db


@pytest.fixture
def dead_job(user, monkeypatch):
    """A job its worker took and then died on: running, heartbeat two minutes old."""
    queue_without_running(monkeypatch)
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.25, "disease")
    old = timezone.now() - timedelta(minutes=2)
    Job.objects.filter(pk=job.pk).update(status=Job.RUNNING, started=old, heartbeat=old, attempts=1, progress=0.21,
                                         phase="Datafly: generalizing age")
    job.refresh_from_db()
    return job


def test_the_sweep_queues_a_stale_job_again_and_a_worker_finishes_it(dead_job, monkeypatch):
    submitted = queue_without_running(monkeypatch)
    assert jobs.sweep_stale_jobs() == {"requeued": [str(dead_job.pk)], "failed": [], "cancelled": [],
                                       "scratch_removed": []}
    dead_job.refresh_from_db()
    assert (dead_job.status, dead_job.progress, submitted) == (Job.QUEUED, 0.0, [dead_job.pk])
    assert dead_job.phase == "queued again: the worker running it stopped (attempt 2 next)"
    done = jobs.run_job(dead_job)
    assert (done.status, done.attempts) == (Job.SUCCEEDED, 2)
    assert jobs.sweep_stale_jobs() == {"requeued": [], "failed": [], "cancelled": [], "scratch_removed": []}


def test_after_the_attempts_the_job_fails_with_the_cause(dead_job, settings):
    Job.objects.filter(pk=dead_job.pk).update(attempts=settings.ANONYMIZER_JOB_MAX_ATTEMPTS)
    assert jobs.sweep_stale_jobs()["failed"] == [str(dead_job.pk)]
    dead_job.refresh_from_db()
    assert dead_job.status == Job.FAILED
    assert dead_job.message == ("the worker running it stopped 3 time(s) (killed, out of memory or shut down); "
                                "not retried again")


def test_a_fresh_heartbeat_is_left_alone(dead_job):
    Job.objects.filter(pk=dead_job.pk).update(heartbeat=timezone.now())
    assert jobs.sweep_stale_jobs()["requeued"] == []
    # a duplicate delivery of a job a live worker runs does not run it twice
    assert jobs.run_job(dead_job).status == Job.RUNNING


def test_a_redelivered_job_of_a_dead_worker_runs_again_from_scratch(dead_job):
    # what the dead worker left: a result row without its job having finished
    Result.objects.create(job=dead_job, output="results/partial.parquet", report={})
    done = jobs.run_job(dead_job)
    assert (done.status, done.attempts) == (Job.SUCCEEDED, 2), done.message
    assert Result.objects.get(job=done).report["verified"] is True


def test_cancel_ends_a_stuck_job_at_once(client_alice, dead_job):
    r = client_alice.post(f"/jobs/{dead_job.pk}/cancel/")
    assert r.status_code == 302
    dead_job.refresh_from_db()
    assert (dead_job.status, dead_job.message) == (Job.CANCELLED, "cancelled (its worker had stopped)")


def test_progress_stops_a_job_that_was_deleted(dead_job):
    progress = jobs.Progress(dead_job)
    assert progress(0.5, "working") is True
    Job.objects.filter(pk=dead_job.pk).delete()
    progress.last = 0.0
    assert progress(0.6, "working") is False


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_beats_while_the_job_runs(user, settings, monkeypatch):
    settings.ANONYMIZER_HEARTBEAT_SECONDS = 0.05
    queue_without_running(monkeypatch)
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.25, "disease")
    beats = []

    def slow(j):
        for _ in range(8):
            time.sleep(0.05)
            beats.append(Job.objects.get(pk=j.pk).heartbeat)

    monkeypatch.setitem(jobs.JOB_HANDLERS, Job.RUN, slow)
    assert jobs.run_job(job).status == Job.SUCCEEDED
    assert len({b for b in beats if b is not None}) >= 3  # touched again and again while it ran
