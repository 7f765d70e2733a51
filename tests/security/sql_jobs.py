"""The outcome of an SQL job the API accepted (202: an export job, or an import polled at
/api/v1/sql/imports/<id>/): run by the services if no worker took it (the tests' broker has none), then
polled through the API as a client would; its final message."""

from __future__ import annotations

from anonymizer_app.models import Job, SourceImport
from anonymizer_app.services import jobs, source_imports


def job_outcome(api, response) -> str:
    assert response.status_code == 202, response.content
    body = response.json()
    if "/sql/imports/" in body["poll"]:
        imp = SourceImport.objects.get(pk=body["id"])
        if not imp.is_finished:
            source_imports.run(imp)
        polled = api.get(body["poll"]).json()
        assert polled["finished_import"], polled
        return polled["message"] if polled["status"] != Job.SUCCEEDED else f"succeeded: dataset {polled['dataset']}"
    job = Job.objects.get(pk=body["id"])
    if not job.is_finished:
        jobs.run_job(job)
    polled = api.get(body["poll"]).json()
    assert polled["finished_job"], polled
    return polled["message"] if polled["status"] != Job.SUCCEEDED else f"succeeded: {polled['options']}"
