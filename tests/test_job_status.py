import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.models import Job
from anonymizer_app.services import jobs

pytestmark = pytest.mark.django_db


def url(job):
    return f"/jobs/{job.pk}/status/"


def test_it_reports_progress(client_alice, user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    Job.objects.filter(pk=job.pk).update(status=Job.RUNNING, progress=0.123456, phase="iteration 3")
    r = client_alice.get(url(job))
    assert r.status_code == 200
    assert r["Cache-Control"] == "no-store"
    assert r.json() == {"status": "running", "progress": 0.1235, "phase": "iteration 3", "message": "",
                        "finished": False, "result_url": None}


def test_it_gives_the_result_url_on_success(client_alice, user):
    job = finished_job(make_dataset(user))
    data = client_alice.get(url(job)).json()
    assert data["status"] == "succeeded" and data["finished"] is True and data["progress"] == 1.0
    assert data["result_url"] == f"/jobs/{job.pk}/result/"


def test_it_gives_the_failure_message(client_alice, user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    Job.objects.filter(pk=job.pk).update(status=Job.FAILED, message="hierarchy of 'zip' misses 99999")
    data = client_alice.get(url(job)).json()
    assert (data["status"], data["message"], data["result_url"]) == ("failed", "hierarchy of 'zip' misses 99999", None)


def test_other_user_gets_404(client, user, other_user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    client.force_login(other_user)
    assert client.get(url(job)).status_code == 404


def test_it_requires_login(client, user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    r = client.get(url(job))
    assert r.status_code == 302
    assert r["Location"].startswith("/accounts/login/?next=")
