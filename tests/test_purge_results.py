"""Retention: ANONYMIZER_RESULT_RETENTION_DAYS and `manage.py purge_results` delete the finished jobs of every
kind that ended more than N days ago, with their results and files; the workers' periodic check does the same."""

from datetime import timedelta
from io import StringIO

import pytest
from anonymizer_helpers import finished_job, make_dataset
from django.core.management import CommandError, call_command
from django.utils import timezone
from erasure_helpers import media

from anonymizer_app.models import Job, Result
from anonymizer_app.services import comparison, erasure, jobs, lattice, storage

pytestmark = pytest.mark.django_db


def ended(job: Job, days_ago: float) -> Job:
    Job.objects.filter(pk=job.pk).update(finished=timezone.now() - timedelta(days=days_ago))
    job.refresh_from_db()
    return job


@pytest.fixture
def history(user):
    dataset = make_dataset(user)
    old = ended(finished_job(dataset), 40)
    lattice.write_cache(old, "lattice.json", {"version": 1})
    old_comparison = ended(jobs.run_job(comparison.create_comparison(dataset, ["datafly"], [2])), 31)
    recent = ended(finished_job(dataset, k=3), 29)
    running = Job.objects.create(owner=user, dataset=dataset, algorithm="datafly", k=2, config={"columns": []},
                                 status=Job.RUNNING)
    Job.objects.filter(pk=running.pk).update(created=timezone.now() - timedelta(days=60))
    return {"dataset": dataset, "old": old, "old_comparison": old_comparison, "recent": recent, "running": running}


def test_retention_is_off_by_default(history, settings):
    assert settings.ANONYMIZER_RESULT_RETENTION_DAYS == 0
    assert erasure.purge_expired_results() is None
    assert Job.objects.count() == 4


def test_results_older_than_the_retention_are_purged(history, settings, django_capture_on_commit_callbacks):
    settings.ANONYMIZER_RESULT_RETENTION_DAYS = 30
    old = history["old"]
    with django_capture_on_commit_callbacks(execute=True):
        done = erasure.purge_expired_results()
    assert done.summary() == "2 jobs, 2 results and 2 files"
    assert set(Job.objects.values_list("pk", flat=True)) == {history["recent"].pk, history["running"].pk}
    assert not Result.objects.filter(job_id=old.pk).exists()
    assert not storage.result_path(old).exists() and not storage.lattice_cache_dir(old).exists()
    assert storage.result_path(history["recent"]).is_file()
    assert storage.table_path(history["dataset"]).is_file()  # datasets are not results


def test_the_command_purges_and_prints_what_it_removed(history, settings, django_capture_on_commit_callbacks):
    settings.ANONYMIZER_RESULT_RETENTION_DAYS = 30
    old = history["old"]
    out = StringIO()
    call_command("purge_results", "--dry-run", stdout=out)
    assert out.getvalue() == (f"Would purge results older than 30 days: 2 jobs, 2 results and 2 files\n"
                              f"  would remove {storage.lattice_cache_name(old)}/lattice.json\n"
                              f"  would remove {storage.result_name(old)}\n")
    assert Job.objects.count() == 4
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("purge_results", "--days", "35", stdout=out)
    assert out.getvalue() == (f"Purged results older than 35 days: 1 job, 1 result and 2 files\n"
                              f"  removed {storage.lattice_cache_name(old)}/lattice.json\n"
                              f"  removed {storage.result_name(old)}\n")
    assert not Job.objects.filter(pk=old.pk).exists() and Job.objects.count() == 3


def test_the_command_refuses_when_retention_is_off(history):
    with pytest.raises(CommandError, match=r"^retention is off \(ANONYMIZER_RESULT_RETENTION_DAYS is 0\): set it, "
                                           r"or pass --days N$"):
        call_command("purge_results")
    assert Job.objects.count() == 4


@pytest.mark.parametrize("days, message", [("0", "--days must be at least 1, got 0"),
                                           ("week", "--days must be a whole number of days, got 'week'")])
def test_the_command_refuses_bad_days(days, message):
    with pytest.raises(CommandError, match=f"^{message}$"):
        call_command("purge_results", "--days", days)


@pytest.mark.django_db(transaction=True)  # as on a worker: the purge's files go when its transaction commits
def test_the_workers_periodic_check_purges_and_sweeps(history, settings):
    settings.ANONYMIZER_RESULT_RETENTION_DAYS = 30
    settings.ANONYMIZER_ORPHAN_GRACE_SECONDS = 0
    orphan = storage.media_root() / "results" / "job-00000000-0000-0000-0000-000000000000.parquet"
    orphan.write_bytes(b"left by a crash")
    purged, swept = erasure.retention_check()
    assert purged.summary() == "2 jobs, 2 results and 2 files"
    assert swept == ["results/job-00000000-0000-0000-0000-000000000000.parquet"]
    assert not orphan.exists()
    assert storage.result_name(history["recent"]) in media()
