"""The whole path in headless Chromium: sign up, upload Adult, set roles, bind a hierarchy, run, result.

One flow, run by two tests: test_browser_flow.py against pytest-django's live server (the job runs
eagerly inside the request) and test_browser_production.py against `make serve` (gunicorn, DEBUG off,
a Celery worker over Redis, PostgreSQL). The flow reads the database through a ``FlowStore``: the ORM
in the first, SQL on the server's own database in the second.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from anonymizer_app.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "anonymizer_app" / "demo_data" / "adult"
USERNAME = "steward"
PASSWORD = "correct-Horse-battery-9"
QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


class FlowStore(Protocol):
    def dataset(self, username: str) -> dict | None:
        """The user's dataset: {"id", "n_rows", "n_columns", "delimiter"}, or None before the upload."""

    def columns(self, dataset_id: int) -> list[dict]:
        """Its columns in order: {"id", "position", "name", "role", "hierarchy_id"}."""

    def job(self, username: str) -> dict:
        """The user's only job: {"status", "message", "report"} (report: {} until it succeeded)."""


@pytest.fixture
def eager_celery():
    """Jobs run inside the request that queues them: the live server's test database is not visible to a
    separate worker process (the browser tests of the SQL, remote, set-valued and DICOM pages use it)."""
    before = celery_app.conf.task_always_eager
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=True)
    yield
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=before)


def fill(browser, **fields) -> None:
    """Types ``fields`` (name=value) into the form's boxes, each cleared first."""
    for name, value in fields.items():
        box = browser.find_element(By.NAME, name)
        box.clear()
        box.send_keys(value)


def run_flow(browser, base_url: str, store: FlowStore, timeout: float = 60) -> dict:
    """Drive the flow to the result page (left open in ``browser``); returns the job's report."""
    wait = WebDriverWait(browser, timeout)
    browser.get(f"{base_url}/accounts/signup/")
    fill(browser, username=USERNAME, password1=PASSWORD, password2=PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "form.form button[type=submit]").click()
    wait.until(lambda b: b.current_url == f"{base_url}/")

    # Upload through the file picker of the drop zone.
    browser.find_element(By.CSS_SELECTOR, "input[type=file][name=file]").send_keys(str(ADULT / "adult.csv"))
    browser.find_element(By.CSS_SELECTOR, "form[enctype='multipart/form-data'] button[type=submit]").click()
    wait.until(lambda b: "/datasets/" in b.current_url and "upload" not in b.current_url)
    dataset = store.dataset(USERNAME)
    assert dataset is not None
    assert (dataset["n_rows"], dataset["n_columns"], dataset["delimiter"]) == (30162, 9, ";")
    assert "Married-civ-spouse" in browser.page_source  # the preview

    # Roles: 8 quasi-identifiers, occupation sensitive.
    browser.get(f"{base_url}/datasets/{dataset['id']}/columns/")
    for column in store.columns(dataset["id"]):
        role = "sensitive" if column["name"] == "occupation" else "quasi-identifying"
        Select(browser.find_element(By.ID, f"col-{column['position']}-role")).select_by_value(role)
    browser.find_element(By.CSS_SELECTOR, "#columns-form button[type=submit]").click()
    wait.until(lambda b: sum(c["role"] == "quasi-identifying" for c in store.columns(dataset["id"])) == 8)

    # The ARX hierarchy for age, uploaded on the column's hierarchy page; the other QIs keep defaults.
    age = next(c for c in store.columns(dataset["id"]) if c["name"] == "age")
    browser.get(f"{base_url}/hierarchies/dataset/{dataset['id']}/column/{age['id']}/")
    browser.find_element(By.CSS_SELECTOR, "form.upload-form input[type=file]").send_keys(
        str(ADULT / "adult_hierarchy_age.csv"))
    browser.find_element(By.CSS_SELECTOR, "form.upload-form button[type=submit]").click()
    wait.until(lambda b: next(c for c in store.columns(dataset["id"]) if c["name"] == "age")["hierarchy_id"])

    # Run Datafly with k=10.
    browser.get(f"{base_url}/datasets/{dataset['id']}/run/")
    Select(browser.find_element(By.NAME, "algorithm")).select_by_value("datafly")
    fill(browser, k="10", suppression_percent="2")
    Select(browser.find_element(By.NAME, "sensitive")).select_by_value("occupation")
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()

    # The job page follows a running job to its result page; a job already done shows a link.
    wait.until(lambda b: "/result/" in b.current_url or b.find_elements(By.ID, "result-link"))
    if "/result/" not in browser.current_url:
        browser.find_element(By.ID, "result-link").click()
        wait.until(lambda b: "/result/" in b.current_url)
    job = store.job(USERNAME)
    assert job["status"] == "succeeded", job["message"]
    report = job["report"]
    assert report["k_achieved"] >= 10 and report["verified"] is True
    assert report["suppressed"] <= int(0.02 * 30162)

    page = browser.page_source
    assert f"{report['equivalence_classes']:,}" in page or str(report["equivalence_classes"]) in page
    assert "12,458" in page  # equivalence classes before anonymization (definitions.md)
    tables = browser.find_elements(By.CSS_SELECTOR, "table")
    assert len(tables) >= 2
    changed = browser.find_elements(By.CSS_SELECTOR, "td.changed")
    assert changed, "generalized cells are highlighted"
    for qi in QIS:
        assert qi in page
    wait.until(lambda b: b.execute_script("return document.querySelectorAll('.js-plotly-plot').length") >= 1)
    return report
