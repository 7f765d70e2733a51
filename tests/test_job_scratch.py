"""A job's scratch files live in a folder of its own, <ANONYMIZER_JOB_TMP>/<job id>/ (0700): the engine gets it
(RunSpec.scratch) and never writes to the system temp folder; the folder goes when the job ends, whatever the
ending; the heartbeat touches it; the sweep removes what a dead worker left (its folder, its half-written outputs).
The real-process version (workers killed while a disk-clustering job writes) is tests/test_celery_worker.py."""

from __future__ import annotations

import os
import re
import stat
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from anonymizer_helpers import make_dataset, people_dataset, queue_without_running
from django.utils import timezone

from anonymizer_app import engine
from anonymizer_app.models import Job
from anonymizer_app.services import comparison, erasure, jobs, storage

pytestmark = pytest.mark.django_db


@pytest.fixture
def system_tmp(tmp_path, monkeypatch) -> Path:
    """The system temp folder of this test: whatever tempfile would put there shows up here."""
    folder = tmp_path / "system-tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def scratch_root(settings, tmp_path) -> Path:
    settings.ANONYMIZER_JOB_TMP = tmp_path / "job-tmp"
    return settings.ANONYMIZER_JOB_TMP


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


@pytest.fixture
def snapshots(monkeypatch) -> list[dict]:
    """At every progress report of a job: its scratch folder's mode and files (names with the random parts cut)."""
    seen: list[dict] = []
    report = jobs.Progress.__call__

    def recording(self, fraction, phase):
        folder = storage.job_scratch_path(self.job)
        seen.append({"phase": phase, "exists": folder.is_dir(),
                     "mode": stat.S_IMODE(folder.stat().st_mode) if folder.is_dir() else None,
                     "files": [_shape(name) for name in _files(folder)]})
        return report(self, fraction, phase)

    monkeypatch.setattr(jobs.Progress, "__call__", recording)
    return seen


def _shape(name: str) -> str:
    """out-of-core-x1y2/disk-clustering-z3/records.bin -> out-of-core-*/disk-clustering-*/records.bin"""
    return re.sub(r"(^|/)(out-of-core-|disk-clustering-)[^/]+", r"\1\2*", name)


def test_a_streamed_disk_clustering_job_writes_its_scratch_files_in_its_folder_only(
        user, scratch_root, system_tmp, snapshots, monkeypatch):
    queue_without_running(monkeypatch)
    job = jobs.create_job(people_dataset(user), "disk-clustering", 3, 0.0, sensitive="disease")
    done = jobs.run_job(job)
    assert done.status == Job.SUCCEEDED, done.message
    assert done.result.report["search"]["database"] == "files"
    during = {name for s in snapshots for name in s["files"]}
    # the disk hybrid's record files and the class counts before and after, all in the job's folder
    assert "out-of-core-*/disk-clustering-*/records.bin" in during
    assert "out-of-core-*/before/part-0000.bin" in during and "out-of-core-*/after/part-0000.bin" in during
    assert {s["mode"] for s in snapshots} == {0o700}
    assert not storage.job_scratch_path(job).exists() and _files(scratch_root) == []
    assert os.listdir(system_tmp) == []


def test_an_in_memory_disk_clustering_run_gets_the_folder_too(user, scratch_root, system_tmp, snapshots):
    """A comparison runs the disk hybrid through engine.anonymize (Problem.scratch)."""
    job = comparison.create_comparison(people_dataset(user), ["disk-clustering"], [3], sensitive="disease")
    done = jobs.run_job(job)
    assert done.status == Job.SUCCEEDED, done.message
    assert [r["verified"] for r in done.result.report["comparison"]] == [True]
    assert "disk-clustering-*/records.bin" in {name for s in snapshots for name in s["files"]}
    assert not storage.job_scratch_path(job).exists()
    assert os.listdir(system_tmp) == []


def _handler_that(ending: str):
    def handler(job: Job) -> None:
        (storage.job_scratch_path(job) / "work.bin").write_bytes(b"x" * 1000)
        if ending == "succeeds":
            return
        if ending == "fails":
            raise engine.InputError("bad input")
        if ending == "is cancelled":
            raise engine.Cancelled("cancelled")
        if ending == "is deleted":  # the owner deletes it; the worker sees it at its next progress report
            erasure.erase_job(Job.objects.select_related("dataset").get(pk=job.pk))
            if not jobs.Progress(job)(0.5, "working"):
                raise engine.Cancelled("deleted")
        raise RuntimeError("a bug")
    return handler


@pytest.mark.parametrize("ending, status", [("succeeds", Job.SUCCEEDED), ("fails", Job.FAILED),
                                            ("is cancelled", Job.CANCELLED), ("is deleted", None),
                                            ("crashes", Job.FAILED)])
def test_the_folder_goes_whatever_the_ending(user, scratch_root, monkeypatch, ending, status):
    queue_without_running(monkeypatch)
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.25, "disease")
    monkeypatch.setitem(jobs.JOB_HANDLERS, Job.RUN, _handler_that(ending))
    if ending == "crashes":
        with pytest.raises(RuntimeError, match="a bug"):
            jobs.run_job(job)
    elif ending == "is deleted":  # the task (tasks.run_job_task) reports "deleted"
        with pytest.raises(Job.DoesNotExist):
            jobs.run_job(job)
    else:
        jobs.run_job(job)
    assert Job.objects.filter(pk=job.pk).values_list("status", flat=True).first() == status
    assert not storage.job_scratch_path(job).exists() and _files(scratch_root) == []


def test_a_second_attempt_starts_from_an_empty_folder(user, scratch_root, monkeypatch):
    queue_without_running(monkeypatch)
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.25, "disease")
    left = storage.job_scratch_path(job)
    left.mkdir(parents=True)
    (left / "from-the-dead-worker.bin").write_bytes(b"x")
    seen = []
    monkeypatch.setitem(jobs.JOB_HANDLERS, Job.RUN, lambda j: seen.append(_files(storage.job_scratch_path(j))))
    assert jobs.run_job(job).status == Job.SUCCEEDED
    assert seen == [[]]


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_touches_the_folder(user, settings, scratch_root, monkeypatch):
    settings.ANONYMIZER_HEARTBEAT_SECONDS = 0.05
    queue_without_running(monkeypatch)
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.25, "disease")
    times = []

    def slow(j):
        folder = storage.job_scratch_path(j)
        os.utime(folder, (1_000_000, 1_000_000))  # as if untouched since 1970
        time.sleep(0.4)
        times.append(folder.stat().st_mtime)

    monkeypatch.setitem(jobs.JOB_HANDLERS, Job.RUN, slow)
    assert jobs.run_job(job).status == Job.SUCCEEDED
    assert times[0] > time.time() - 60


def test_the_sweep_removes_what_a_dead_worker_left(user, settings, scratch_root, monkeypatch):
    queue_without_running(monkeypatch)
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.25, "disease")
    old = timezone.now() - timedelta(minutes=2)
    Job.objects.filter(pk=job.pk).update(status=Job.RUNNING, started=old, heartbeat=old, attempts=1)
    # its scratch folder, and the half-written output and sensitive table beside where they would be stored
    folder = storage.job_scratch_path(job)
    (folder / "out-of-core-x").mkdir(parents=True)
    (folder / "out-of-core-x" / "records.sqlite").write_bytes(b"x" * 4096)
    results = Path(settings.MEDIA_ROOT) / "results"
    results.mkdir(parents=True)
    partials = [results / f".job-{job.pk}.parquet.4242.tmp", results / f".job-{job.pk}-st.parquet.4242.tmp"]
    other_job = uuid.uuid4()
    kept = [results / f".job-{other_job}.parquet.77.tmp", results / f"job-{other_job}.parquet"]
    for path in partials + kept:
        path.write_bytes(b"PAR1")
    # a folder of a job deleted after its worker died (untouched for 2 minutes) and one of a live worker
    orphan, live = scratch_root / str(uuid.uuid4()), scratch_root / str(uuid.uuid4())
    for f in (orphan, live):
        f.mkdir()
        (f / "records.sqlite").write_bytes(b"x")
    stale = time.time() - 120
    os.utime(orphan, (stale, stale))

    # half-written outputs untouched for 2 minutes: of a job deleted after its worker died (removed), and of a
    # job whose live worker still writes it (kept)
    live_job = jobs.create_job(make_dataset(user), "datafly", 2, 0.25, "disease")
    Job.objects.filter(pk=live_job.pk).update(status=Job.RUNNING, started=timezone.now(), heartbeat=timezone.now())
    deleted_partial = results / f".job-{uuid.uuid4()}.parquet.99.tmp"
    live_partial = results / f".job-{live_job.pk}.parquet.98.tmp"
    for path in (deleted_partial, live_partial):
        path.write_bytes(b"PAR1")
        os.utime(path, (stale, stale))

    done = jobs.sweep_stale_jobs()
    assert done == {"requeued": [str(job.pk)], "failed": [], "cancelled": [], "scratch_removed": [orphan.name]}
    assert not folder.exists() and not orphan.exists() and _files(live) == ["records.sqlite"]
    assert [p.exists() for p in partials] == [False, False]
    # another job's stored file and its fresh partial (a worker writing it now) are not leftovers
    assert [p.exists() for p in kept] == [True, True]
    assert (deleted_partial.exists(), live_partial.exists()) == (False, True)
