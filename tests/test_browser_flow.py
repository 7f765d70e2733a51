"""The whole path in headless Chromium: sign up, upload Adult, set roles, bind a hierarchy, run, result.

The job is queued through Celery in eager mode (the task runs inside the request), because the live
server's test database is not visible to a separate worker process; real workers over Redis and the
filesystem broker are covered by test_celery_worker.py. The final page is saved as a screenshot
(var/screenshots/result.png; with UPDATE_SCREENSHOT=1 also docs/screenshot.png for the README).
"""

import os
import shutil
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from anonymizer_app.celery import app as celery_app
from anonymizer_app.models import Dataset, Job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "anonymizer_app" / "demo_data" / "adult"
PASSWORD = "correct-Horse-battery-9"
QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


@pytest.fixture
def eager_celery():
    # The app reads Django settings with the CELERY_ namespace: the key must carry the prefix.
    before = celery_app.conf.task_always_eager
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=True)
    assert celery_app.conf.task_always_eager
    yield
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=before)


def _fill(browser, **fields):
    for name, value in fields.items():
        box = browser.find_element(By.NAME, name)
        box.clear()
        box.send_keys(value)


def test_signup_upload_roles_run_result(browser, live_server, eager_celery):
    wait = WebDriverWait(browser, 60)
    browser.get(f"{live_server.url}/accounts/signup/")
    _fill(browser, username="steward", password1=PASSWORD, password2=PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "form.form button[type=submit]").click()
    wait.until(lambda b: b.current_url == f"{live_server.url}/")

    # Upload through the file picker of the drop zone.
    browser.find_element(By.CSS_SELECTOR, "input[type=file][name=file]").send_keys(str(ADULT / "adult.csv"))
    browser.find_element(By.CSS_SELECTOR, "form[enctype='multipart/form-data'] button[type=submit]").click()
    wait.until(lambda b: "/datasets/" in b.current_url and "upload" not in b.current_url)
    dataset = Dataset.objects.get(owner__username="steward")
    assert (dataset.n_rows, dataset.n_columns, dataset.delimiter) == (30162, 9, ";")
    assert "Married-civ-spouse" in browser.page_source  # the preview

    # Roles: 8 quasi-identifiers, occupation sensitive.
    browser.get(f"{live_server.url}/datasets/{dataset.pk}/columns/")
    for column in dataset.columns.all():
        role = "sensitive" if column.name == "occupation" else "quasi-identifying"
        Select(browser.find_element(By.ID, f"col-{column.position}-role")).select_by_value(role)
    browser.find_element(By.CSS_SELECTOR, "#columns-form button[type=submit]").click()
    wait.until(lambda b: dataset.columns.filter(role="quasi-identifying").count() == 8)

    # The ARX hierarchy for age, uploaded on the column's hierarchy page; the other QIs keep defaults.
    age = dataset.columns.get(name="age")
    browser.get(f"{live_server.url}/hierarchies/dataset/{dataset.pk}/column/{age.pk}/")
    browser.find_element(By.CSS_SELECTOR, "form.upload-form input[type=file]").send_keys(
        str(ADULT / "adult_hierarchy_age.csv"))
    browser.find_element(By.CSS_SELECTOR, "form.upload-form button[type=submit]").click()
    wait.until(lambda b: dataset.columns.get(name="age").hierarchy_id is not None)

    # Run Datafly with k=10.
    browser.get(f"{live_server.url}/datasets/{dataset.pk}/run/")
    Select(browser.find_element(By.NAME, "algorithm")).select_by_value("datafly")
    _fill(browser, k="10", suppression_percent="2")
    Select(browser.find_element(By.NAME, "sensitive")).select_by_value("occupation")
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()

    # The job page follows a running job to its result page; a job already done shows a link.
    wait.until(lambda b: "/result/" in b.current_url or b.find_elements(By.ID, "result-link"))
    if "/result/" not in browser.current_url:
        browser.find_element(By.ID, "result-link").click()
        wait.until(lambda b: "/result/" in b.current_url)
    job = Job.objects.get(owner__username="steward")
    assert job.status == Job.SUCCEEDED, job.message
    report = job.result.report
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

    shots = ROOT / "var" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    browser.set_window_size(1400, 2000)  # summary, transformation, charts and the side-by-side tables
    browser.save_screenshot(str(shots / "result.png"))
    if os.environ.get("UPDATE_SCREENSHOT") == "1":
        shutil.copy(shots / "result.png", ROOT / "docs" / "screenshot.png")
