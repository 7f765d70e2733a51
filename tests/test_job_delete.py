"""/jobs/<id>/delete/: a job of any kind (run, comparison, experiment) and any state deleted with its result, its
lattice cache and its lattice evaluations; a queued or running job is cancelled first and its worker stores
nothing afterwards; another user's job is a 404."""

import pytest
from anonymizer_helpers import finished_job, make_dataset
from django.test import Client
from erasure_helpers import media

from anonymizer_app import engine
from anonymizer_app.models import Job, Result
from anonymizer_app.services import comparison, erasure, experiment, jobs, lattice, runs, storage
from anonymizer_app.tasks import run_job_task

pytestmark = pytest.mark.django_db


def url(job):
    return f"/jobs/{job.pk}/delete/"


@pytest.fixture
def dataset(user):
    return make_dataset(user, name="patients")


@pytest.fixture
def job(dataset):
    return finished_job(dataset)


def test_get_shows_what_will_be_deleted(client_alice, job):
    r = client_alice.get(url(job))
    assert r.status_code == 200
    html = r.content.decode()
    assert "<h1>Delete the job Datafly, k=2 on patients?</h1>" in html
    assert '<strong id="delete-summary">1 job, 1 result and 1 file</strong>' in html
    assert f'action="/jobs/{job.pk}/delete/"' in html and "csrfmiddlewaretoken" in html
    assert f'<a class="btn" href="/jobs/{job.pk}/">Cancel</a>' in html
    assert Job.objects.filter(pk=job.pk).exists()


def test_post_deletes_the_job_its_result_and_lattice_cache(client_alice, dataset, job,
                                                           django_capture_on_commit_callbacks):
    other = finished_job(dataset, k=3)
    lattice.write_cache(job, "lattice.json", {"version": 1})
    evaluation = Job.objects.create(owner=job.owner, dataset=dataset, kind=Job.LATTICE, algorithm="datafly", k=2,
                                    config=job.config, options={"source_job": str(job.pk)}, status=Job.SUCCEEDED)
    before = media()
    with django_capture_on_commit_callbacks(execute=True):
        r = client_alice.post(url(job))
    assert r.status_code == 302 and r["Location"] == "/jobs/"
    assert not Job.objects.filter(pk__in=[job.pk, evaluation.pk]).exists()
    assert not Result.objects.filter(job_id=job.pk).exists()
    gone = {storage.result_name(job), f"{storage.lattice_cache_name(job)}/", f"{storage.lattice_cache_name(job)}/lattice.json"}
    assert media() == before - gone
    assert storage.result_path(other).is_file()
    html = client_alice.get("/jobs/").content.decode()
    assert "Deleted Datafly, k=2 on patients: 2 jobs, 1 result and 2 files." in html


def test_a_comparison_and_an_experiment_are_deleted_too(client_alice, dataset, django_capture_on_commit_callbacks):
    compared = jobs.run_job(comparison.create_comparison(dataset, ["datafly"], [2]))
    tried = jobs.run_job(experiment.create_experiment(dataset, [4], 1, True, [2], "datafly", 0.0, "disease"))
    assert (compared.status, tried.status) == (Job.SUCCEEDED, Job.SUCCEEDED), (compared.message, tried.message)
    for page, job in ((f"/jobs/{compared.pk}/comparison/", compared), (f"/jobs/{tried.pk}/experiment/", tried)):
        assert f'href="{url(job)}"' in client_alice.get(page).content.decode()
        with django_capture_on_commit_callbacks(execute=True):
            assert client_alice.post(url(job)).status_code == 302
        assert not Job.objects.filter(pk=job.pk).exists() and not Result.objects.filter(job_id=job.pk).exists()


def test_a_queued_job_is_cancelled_and_its_worker_does_nothing(client_alice, dataset,
                                                               django_capture_on_commit_callbacks):
    queued = jobs.create_job(dataset, "datafly", 2, 0.0)
    html = client_alice.get(url(queued)).content.decode()
    assert "<li>1 queued or running job will be cancelled first</li>" in html
    with django_capture_on_commit_callbacks(execute=True):
        client_alice.post(url(queued))
    assert run_job_task(str(queued.pk)) == "deleted"  # the message still on the broker
    assert not Result.objects.exists() and not storage.result_path(queued).exists()


def test_a_job_deleted_while_it_runs_stores_nothing(dataset, django_capture_on_commit_callbacks):
    """The deletion lands after the worker's last progress report: the output is written, but the job is
    gone when the result is stored, so the files are removed and no Result is saved."""
    job = jobs.create_job(dataset, "anatomy", 2, 0.25, "disease",
                          models=[{"model": "distinct-l-diversity", "l": 2, "column": "disease"}])
    def progress(fraction, phase):
        if Job.objects.filter(pk=job.pk).exists():
            with django_capture_on_commit_callbacks(execute=True):
                erasure.erase_job(job)
        return True  # as if the deletion came after this check

    with pytest.raises(engine.Cancelled, match="the job was deleted while it ran"):
        runs.run_and_store(job, progress)
    assert not Result.objects.exists()
    assert [n for n in media() if n.startswith("results/") and n != "results/"] == []


def test_a_job_deleted_while_it_runs_is_stopped_by_its_progress(dataset, django_capture_on_commit_callbacks):
    job = jobs.create_job(dataset, "mondrian", 2, 0.0)
    Job.objects.filter(pk=job.pk).update(status=Job.RUNNING)
    with django_capture_on_commit_callbacks(execute=True):
        Job.objects.filter(pk=job.pk).delete()
    assert jobs.Progress(job)(0.5, "working") is False  # the algorithm raises Cancelled
    assert run_job_task(str(job.pk)) == "deleted"


def test_a_lattice_cache_written_for_a_deleted_run_is_removed(job, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        Job.objects.filter(pk=job.pk).delete()
    lattice.write_cache(job, "lattice.json", {"version": 1})  # an evaluation that ended after the deletion
    assert not storage.lattice_cache_dir(job).exists()


@pytest.mark.parametrize("method", ["get", "post"])
def test_another_user_gets_404(client, other_user, job, method):
    client.force_login(other_user)
    assert getattr(client, method)(url(job)).status_code == 404
    assert Job.objects.filter(pk=job.pk).exists() and storage.result_path(job).is_file()


def test_anonymous_is_sent_to_the_login(client, job):
    r = client.post(url(job))
    assert r.status_code == 302 and r["Location"] == f"/accounts/login/?next={url(job)}"
    assert Job.objects.filter(pk=job.pk).exists()


def test_the_post_needs_the_csrf_token(user, job):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post(url(job)).status_code == 403
    assert Job.objects.filter(pk=job.pk).exists()


def test_the_job_pages_and_the_list_link_to_it(client_alice, job):
    link = f'href="{url(job)}"'
    for page in (f"/jobs/{job.pk}/", f"/jobs/{job.pk}/result/", "/jobs/"):
        assert link in client_alice.get(page).content.decode(), page
