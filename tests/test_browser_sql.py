"""In headless Chromium: a PostgreSQL table holding Adult imported from the datasets page as an import job (the
form sends the browser to the import's page, whose progress bar polls the status until the worker -- here the
test itself -- has stored the dataset, then goes to it; another import is cancelled from its page),
anonymized, and its published rows exported to a new PostgreSQL table from the result page as a job (run
eagerly in the request, as in test_browser_flow.py)."""

from __future__ import annotations

import browser_flow
import pytest
from browser_flow import fill
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from anonymizer_app.celery import app as celery_app
from anonymizer_app.engine import Role
from anonymizer_app.models import Dataset, Job, SourceImport
from anonymizer_app.services import exports, source_imports
from tests import sql_helpers
from tests.anonymizer_helpers import set_roles
from tests.sql_helpers import load_adult_pg, pg_rows

pg_url = sql_helpers.pg_url  # the fixture
eager_celery = browser_flow.eager_celery  # the fixture
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_import_run_export(browser, live_server, client, user, pg_url, demo_datasets, eager_celery):
    load_adult_pg(pg_url, demo_datasets)
    wait = WebDriverWait(browser, 90)
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})

    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=False)  # the import waits on its page for a worker: this test
    browser.get(f"{live_server.url}/")
    browser.find_element(By.ID, "import-sql-link").click()
    wait.until(lambda b: "/datasets/import-sql/" in b.current_url)
    fill(browser, url=pg_url, table="adult", name="Adult from PostgreSQL")
    browser.find_element(By.ID, "import-sql-submit").click()
    wait.until(lambda b: "/datasets/imports/" in b.current_url)
    imp = SourceImport.objects.get(owner=user)
    assert browser.find_element(By.ID, "progress-phase").text == "waiting for a worker"
    assert browser.find_element(By.ID, "job-status").text == "queued"
    source_imports.run(imp)  # the worker; the page polls and goes to the dataset when it is stored
    wait.until(lambda b: b.current_url.endswith(f"/datasets/{SourceImport.objects.get(pk=imp.pk).dataset_id}/"))
    ds = Dataset.objects.get(owner=user)
    assert (ds.name, ds.n_rows, ds.n_columns) == ("Adult from PostgreSQL", 30162, 10)
    wait.until(lambda b: "Married-civ-spouse" in b.page_source)  # the preview

    browser.get(f"{live_server.url}/datasets/import-sql/")  # another import, cancelled from its page
    fill(browser, url=pg_url, table="adult")
    browser.find_element(By.ID, "import-sql-submit").click()
    wait.until(lambda b: b.find_elements(By.ID, "import-cancel"))
    browser.find_element(By.ID, "import-cancel").click()
    wait.until(lambda b: b.find_elements(By.ID, "job-cancelled"))
    assert "cancelled before it started" in browser.find_element(By.ID, "job-cancelled").text
    assert Dataset.objects.filter(owner=user).count() == 1
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=True)

    set_roles(ds, {"id": Role.IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "age": Role.QUASI_IDENTIFYING,
                   "race": Role.QUASI_IDENTIFYING, "salary-class": Role.SENSITIVE})
    browser.get(f"{live_server.url}/datasets/{ds.pk}/run/")
    Select(browser.find_element(By.NAME, "algorithm")).select_by_value("datafly")
    fill(browser, k="5", suppression_percent="2")
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()
    wait.until(lambda b: "/result/" in b.current_url or b.find_elements(By.ID, "result-link"))
    job = Job.objects.get(owner=user, kind=Job.RUN)
    assert job.status == Job.SUCCEEDED, job.message
    browser.get(f"{live_server.url}/jobs/{job.pk}/result/")
    formats = [o.get_attribute("value") for o in Select(browser.find_element(By.ID, "dl-format")).options]
    assert formats == ["csv", "tsv", "parquet", "xlsx", "jsonl", "dta", "sav"]  # the export registry's, in order

    browser.find_element(By.ID, "export-sql-link").click()
    wait.until(lambda b: "/export-sql/" in b.current_url)
    fill(browser, url=pg_url, table="adult_released")
    browser.find_element(By.ID, "export-sql-submit").click()
    # a job: its page (here already finished, run in the request) links back to the run's result; the job is read
    # once its page shows (the click returns before the server has made it)
    wait.until(lambda b: "/export-sql/" not in b.current_url and b.find_elements(By.ID, "result-link"))
    export = Job.objects.get(owner=user, kind=Job.SQL_EXPORT)
    assert browser.current_url.endswith(f"/jobs/{export.pk}/")
    assert browser.find_element(By.ID, "job-status").text == "succeeded"
    assert export.options["rows"] == len(exports.result_frame(job.result))
    browser.find_element(By.ID, "result-link").click()
    wait.until(lambda b: b.current_url.endswith(f"/jobs/{job.pk}/result/") and b.find_elements(By.ID, "export-sql-link"))
    frame = exports.result_frame(job.result)
    names, rows = pg_rows(pg_url, "SELECT * FROM adult_released")
    assert names == list(frame.columns) and "id" not in names
    assert sorted(tuple(str(v) for v in r) for r in rows) == sorted(frame.itertuples(index=False))
