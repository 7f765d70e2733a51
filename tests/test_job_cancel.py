import pytest
from anonymizer_helpers import finished_job, make_dataset
from django.contrib.messages import get_messages

from anonymizer_app.models import Job
from anonymizer_app.services import jobs

pytestmark = pytest.mark.django_db


def url(job):
    return f"/jobs/{job.pk}/cancel/"


def queued(user):
    return jobs.create_job(make_dataset(user), "datafly", 2, 0.0)


def test_a_queued_job_is_cancelled_at_once(client_alice, user):
    job = queued(user)
    r = client_alice.post(url(job))
    assert r.status_code == 302
    assert r["Location"] == f"/jobs/{job.pk}/"
    job.refresh_from_db()
    assert (job.status, job.cancel_requested, job.message) == ("cancelled", True, "cancelled before it started")
    assert job.finished is not None
    assert [str(m) for m in get_messages(r.wsgi_request)] == ["Job cancelled."]
    # a worker picking it up later leaves it alone
    jobs.run_job(job)
    job.refresh_from_db()
    assert job.status == Job.CANCELLED and not hasattr(job, "result")


def test_a_running_job_is_asked_to_stop(client_alice, user):
    job = queued(user)
    Job.objects.filter(pk=job.pk).update(status=Job.RUNNING)
    r = client_alice.post(url(job))
    job.refresh_from_db()
    assert (job.status, job.cancel_requested, job.finished) == ("running", True, None)
    assert [str(m) for m in get_messages(r.wsgi_request)] == [
        "Cancelling: the worker stops at its next progress report."]
    html = client_alice.get(f"/jobs/{job.pk}/").content.decode()
    assert "Cancelling…" in html


def test_a_finished_job_is_left_alone(client_alice, user):
    job = finished_job(make_dataset(user))
    r = client_alice.post(url(job))
    job.refresh_from_db()
    assert (job.status, job.cancel_requested) == ("succeeded", False)
    assert [str(m) for m in get_messages(r.wsgi_request)] == ["This job has already succeeded."]


def test_it_refuses_get(client_alice, user):
    job = queued(user)
    assert client_alice.get(url(job)).status_code == 405
    job.refresh_from_db()
    assert job.status == Job.QUEUED


def test_other_user_gets_404(client, user, other_user):
    job = queued(user)
    client.force_login(other_user)
    assert client.post(url(job)).status_code == 404
    job.refresh_from_db()
    assert (job.status, job.cancel_requested) == ("queued", False)


def test_it_requires_login(client, user):
    job = queued(user)
    r = client.post(url(job))
    assert r.status_code == 302
    assert r["Location"].startswith("/accounts/login/?next=")
    job.refresh_from_db()
    assert (job.status, job.cancel_requested) == ("queued", False)
