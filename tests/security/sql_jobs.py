"""The outcome of an SQL job the API accepted (202): run by the services if no worker took it (the tests'
broker has none), then polled through the API as a client would; its final message."""

from __future__ import annotations

from anonymizer_app.models import Job
from anonymizer_app.services import jobs


def job_outcome(api, response) -> str:
    assert response.status_code == 202, response.content
    body = response.json()
    job = Job.objects.get(pk=body["id"])
    if not job.is_finished:
        jobs.run_job(job)
    polled = api.get(body["poll"]).json()
    assert polled["finished_job"], polled
    return polled["message"] if polled["status"] != Job.SUCCEEDED else f"succeeded: {polled['options']}"
