"""The whole path in headless Chromium against pytest-django's live server (tests/browser_flow.py): sign up,
upload Adult, set roles, bind a hierarchy, run, result.

The job is queued through Celery in eager mode (the task runs inside the request), because the live
server's test database is not visible to a separate worker process; the same flow runs once against the
production server with a real worker over Redis in test_browser_production.py, and real workers over Redis
and the filesystem broker are covered by test_celery_worker.py. The final page is saved as a screenshot
(var/screenshots/result.png; with UPDATE_SCREENSHOT=1 also docs/screenshot.png for the README).
"""

import os
import shutil

import pytest
from browser_flow import ROOT, run_flow

from anonymizer_app.celery import app as celery_app
from anonymizer_app.models import Column, Dataset, Job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


class OrmStore:
    """The flow's view of the live server's database (the test database, shared through the ORM)."""

    def dataset(self, username: str) -> dict | None:
        d = Dataset.objects.filter(owner__username=username).first()
        return None if d is None else {"id": d.pk, "n_rows": d.n_rows, "n_columns": d.n_columns,
                                       "delimiter": d.delimiter}

    def columns(self, dataset_id: int) -> list[dict]:
        return list(Column.objects.filter(dataset_id=dataset_id).order_by("position")
                    .values("id", "position", "name", "role", "hierarchy_id"))

    def job(self, username: str) -> dict:
        job = Job.objects.get(owner__username=username)
        report = job.result.report if job.status == Job.SUCCEEDED else {}
        return {"status": job.status, "message": job.message, "report": report}


@pytest.fixture
def eager_celery():
    # The app reads Django settings with the CELERY_ namespace: the key must carry the prefix.
    before = celery_app.conf.task_always_eager
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=True)
    assert celery_app.conf.task_always_eager
    yield
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=before)


def test_signup_upload_roles_run_result(browser, live_server, eager_celery):
    run_flow(browser, live_server.url, OrmStore())

    shots = ROOT / "var" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    browser.set_window_size(1400, 2000)  # summary, transformation, charts and the side-by-side tables
    browser.save_screenshot(str(shots / "result.png"))
    if os.environ.get("UPDATE_SCREENSHOT") == "1":
        shutil.copy(shots / "result.png", ROOT / "docs" / "screenshot.png")
