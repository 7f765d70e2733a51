import json

import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.models import Job
from anonymizer_app.services import jobs

pytestmark = pytest.mark.django_db


def url(job):
    return f"/jobs/{job.pk}/"


def status_data(html: str) -> dict:
    start = html.index('<script id="job-status-data" type="application/json">') + len(
        '<script id="job-status-data" type="application/json">')
    return json.loads(html[start:html.index("</script>", start)])


def test_a_queued_job_shows_progress_and_cancel(client_alice, user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.1, "disease")
    r = client_alice.get(url(job))
    assert r.status_code == 200
    html = r.content.decode()
    assert 'id="progress-bar" style="width: 0.0%"' in html
    assert "waiting for a worker" in html
    assert f'action="/jobs/{job.pk}/cancel/"' in html
    assert "/static/js/job.js" in html
    assert status_data(html) == {
        "status": "queued", "progress": 0.0, "phase": "", "message": "", "finished": False, "result_url": None,
        "status_url": f"/jobs/{job.pk}/status/",
    }
    assert "<dt>Suppression limit</dt><dd>10%</dd>" in html


def test_a_running_job_shows_its_phase(client_alice, user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    Job.objects.filter(pk=job.pk).update(status=Job.RUNNING, progress=0.42, phase="generalizing zip")
    html = client_alice.get(url(job)).content.decode()
    assert 'style="width: 42.0%"' in html
    assert '<span id="progress-phase">generalizing zip</span>' in html


def test_a_failed_job_shows_its_message(client_alice, user):
    job = jobs.create_job(make_dataset(user), "datafly", 8, 0.0)
    Job.objects.filter(pk=job.pk).update(status=Job.FAILED, message="k=8 <cannot> be reached")
    html = client_alice.get(url(job)).content.decode()
    assert '<span id="job-message-text">k=8 &lt;cannot&gt; be reached</span>' in html
    assert "cancel-form" not in html


def test_a_succeeded_job_links_to_its_result(client_alice, user):
    job = finished_job(make_dataset(user))
    html = client_alice.get(url(job)).content.decode()
    assert f'href="/jobs/{job.pk}/result/" id="result-link"' in html
    assert status_data(html)["result_url"] == f"/jobs/{job.pk}/result/"


def test_other_user_gets_404(client, user, other_user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    client.force_login(other_user)
    assert client.get(url(job)).status_code == 404


def test_it_requires_login(client, user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    r = client.get(url(job))
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next=/jobs/{job.pk}/"
