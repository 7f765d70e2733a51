"""/datasets/<id>/delete/: GET shows what goes and asks for confirmation, POST deletes the dataset with its jobs,
results and every file behind them; another user's dataset is a 404."""

import pytest
from anonymizer_helpers import finished_job, make_dataset
from django.test import Client
from erasure_helpers import media

from anonymizer_app.models import Column, Dataset, Job, Result
from anonymizer_app.services import storage

pytestmark = pytest.mark.django_db


def url(dataset):
    return f"/datasets/{dataset.pk}/delete/"


@pytest.fixture
def dataset(user):
    dataset = make_dataset(user, name="patients")
    finished_job(dataset)
    finished_job(dataset, k=3)
    return dataset


def test_get_shows_what_will_be_deleted(client_alice, dataset):
    r = client_alice.get(url(dataset))
    assert r.status_code == 200
    html = r.content.decode()
    assert "<h1>Delete the dataset patients?</h1>" in html
    assert '<strong id="delete-summary">1 dataset, 2 jobs, 2 results and 4 files</strong>' in html
    assert f'action="/datasets/{dataset.pk}/delete/"' in html and "csrfmiddlewaretoken" in html
    assert f'<a class="btn" href="/datasets/{dataset.pk}/">Cancel</a>' in html
    assert Dataset.objects.filter(pk=dataset.pk).exists() and len(media()) == 7  # 4 files and their 3 folders


def test_post_deletes_everything_of_the_dataset(client_alice, user, dataset, django_capture_on_commit_callbacks):
    make_dataset(user, name="kept")
    before = media()
    files = {dataset.original.name, storage.table_name(dataset), *(storage.result_name(j) for j in dataset.jobs.all())}
    assert len(files) == 4 and files <= before
    with django_capture_on_commit_callbacks(execute=True):
        r = client_alice.post(url(dataset))
    assert r.status_code == 302 and r["Location"] == "/"
    assert not Dataset.objects.filter(pk=dataset.pk).exists()
    assert (Job.objects.count(), Result.objects.count(), Column.objects.filter(dataset_id=dataset.pk).count()) == (
        0, 0, 0)
    assert media() == before - files  # the other dataset keeps its files
    html = client_alice.get("/").content.decode()
    assert "Deleted dataset &#x27;patients&#x27;: 1 dataset, 2 jobs, 2 results and 4 files." in html


def test_a_running_job_of_the_dataset_is_cancelled_and_deleted(client_alice, dataset,
                                                              django_capture_on_commit_callbacks):
    running = Job.objects.create(owner=dataset.owner, dataset=dataset, algorithm="datafly", k=2,
                                 config={"columns": []}, status=Job.RUNNING)
    assert "<li>1 queued or running job will be cancelled first</li>" in client_alice.get(url(dataset)).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        client_alice.post(url(dataset))
    assert not Job.objects.filter(pk=running.pk).exists()
    html = client_alice.get("/").content.decode()
    assert "3 jobs, 2 results and 4 files; 1 queued or running job was cancelled first." in html


@pytest.mark.parametrize("method", ["get", "post"])
def test_another_user_gets_404(client, other_user, dataset, method):
    client.force_login(other_user)
    assert getattr(client, method)(url(dataset)).status_code == 404
    assert Dataset.objects.filter(pk=dataset.pk).exists() and Job.objects.count() == 2


def test_anonymous_is_sent_to_the_login(client, dataset):
    r = client.post(url(dataset))
    assert r.status_code == 302 and r["Location"] == f"/accounts/login/?next={url(dataset)}"
    assert Dataset.objects.filter(pk=dataset.pk).exists()


def test_the_post_needs_the_csrf_token(user, dataset):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post(url(dataset)).status_code == 403
    assert Dataset.objects.filter(pk=dataset.pk).exists()


def test_other_methods_are_refused(client_alice, dataset):
    assert client_alice.put(url(dataset)).status_code == 405


def test_the_list_and_the_dataset_pages_link_to_it(client_alice, dataset):
    link = f'href="/datasets/{dataset.pk}/delete/"'
    assert link in client_alice.get("/").content.decode()
    for page in ("", "columns/", "run/"):
        assert link in client_alice.get(f"/datasets/{dataset.pk}/{page}").content.decode()


# ---- a transaction dataset deleted while its k^m job runs -----------------------------------------------
def _set_job(user):
    from setvalued_helpers import PAYMENTS, transaction_dataset

    from anonymizer_app.services import setvalued

    ds = transaction_dataset(user, PAYMENTS, "payments.txt", record_id=True)
    return ds, setvalued.create_set_job(ds, "dynamic", 2, 2, False, None)


def test_a_transaction_dataset_deleted_while_its_job_runs_leaves_nothing(user, django_capture_on_commit_callbacks):
    """The deletion lands between two progress reports of the k^m search: the worker finishes, finds its job
    gone when it stores the result, removes its files and saves nothing."""
    from erasure_helpers import media

    from anonymizer_app import engine
    from anonymizer_app.services import erasure, runs

    ds, job = _set_job(user)

    def progress(fraction, phase):
        if Dataset.objects.filter(pk=ds.pk).exists():
            with django_capture_on_commit_callbacks(execute=True):
                erasure.erase_dataset(ds)
        return True  # as if the deletion came after this check

    with pytest.raises(engine.Cancelled, match="the job was deleted while it ran"):
        runs.run_and_store(job, progress)
    assert (Dataset.objects.count(), Job.objects.count(), Result.objects.count()) == (0, 0, 0)
    assert [n for n in media() if not n.endswith("/")] == []


def test_a_transaction_dataset_deleted_while_its_job_runs_stops_the_search(user, django_capture_on_commit_callbacks):
    from anonymizer_app.services import erasure
    from anonymizer_app.tasks import run_job_task

    ds, job = _set_job(user)
    Job.objects.filter(pk=job.pk).update(status=Job.RUNNING)
    with django_capture_on_commit_callbacks(execute=True):
        erasure.erase_dataset(ds)
    assert run_job_task(str(job.pk)) == "deleted"
    assert (Dataset.objects.count(), Job.objects.count(), Result.objects.count()) == (0, 0, 0)
