"""In headless Chromium: a PostgreSQL table holding Adult imported from the datasets page, anonymized, and its
published rows exported to a new PostgreSQL table from the result page (the job runs eagerly in the request,
as in test_browser_flow.py)."""

from __future__ import annotations

import browser_flow
import pytest
from browser_flow import fill
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from anonymizer_app.engine import Role
from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import exports
from tests import sql_helpers
from tests.anonymizer_helpers import set_roles
from tests.sql_helpers import load_adult_pg, pg_rows

pg_url = sql_helpers.pg_url  # the fixture
eager_celery = browser_flow.eager_celery  # the fixture
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_import_run_export(browser, live_server, client, user, pg_url, shared_datasets, eager_celery):
    load_adult_pg(pg_url, shared_datasets)
    wait = WebDriverWait(browser, 90)
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})

    browser.get(f"{live_server.url}/")
    browser.find_element(By.ID, "import-sql-link").click()
    wait.until(lambda b: "/datasets/import-sql/" in b.current_url)
    fill(browser, url=pg_url, table="adult", name="Adult from PostgreSQL")
    browser.find_element(By.ID, "import-sql-submit").click()
    wait.until(lambda b: Dataset.objects.filter(owner=user).exists() and "/import-sql/" not in b.current_url)
    ds = Dataset.objects.get(owner=user)
    assert (ds.name, ds.n_rows, ds.n_columns) == ("Adult from PostgreSQL", 30162, 10)
    assert "Married-civ-spouse" in browser.page_source  # the preview

    set_roles(ds, {"id": Role.IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "age": Role.QUASI_IDENTIFYING,
                   "race": Role.QUASI_IDENTIFYING, "salary-class": Role.SENSITIVE})
    browser.get(f"{live_server.url}/datasets/{ds.pk}/run/")
    Select(browser.find_element(By.NAME, "algorithm")).select_by_value("datafly")
    fill(browser, k="5", suppression_percent="2")
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()
    wait.until(lambda b: "/result/" in b.current_url or b.find_elements(By.ID, "result-link"))
    job = Job.objects.get(owner=user)
    assert job.status == Job.SUCCEEDED, job.message
    browser.get(f"{live_server.url}/jobs/{job.pk}/result/")
    formats = [o.get_attribute("value") for o in Select(browser.find_element(By.ID, "dl-format")).options]
    assert formats == ["csv", "tsv", "parquet", "xlsx", "jsonl"]

    browser.find_element(By.ID, "export-sql-link").click()
    wait.until(lambda b: "/export-sql/" in b.current_url)
    fill(browser, url=pg_url, table="adult_released")
    browser.find_element(By.ID, "export-sql-submit").click()
    # more rows than one batch: the page streams the rows written, says so, then goes back to the result
    wait.until(lambda b: b.find_elements(By.ID, "sql-done"))
    assert "rows to the table adult_released" in browser.find_element(By.ID, "sql-done").text
    assert "wrote 5,000 of" in browser.find_element(By.ID, "sql-progress-lines").text
    wait.until(lambda b: b.current_url.endswith(f"/jobs/{job.pk}/result/") and b.find_elements(By.ID, "export-sql-link"))
    frame = exports.result_frame(job.result)
    names, rows = pg_rows(pg_url, "SELECT * FROM adult_released")
    assert names == list(frame.columns) and "id" not in names
    assert sorted(tuple(str(v) for v in r) for r in rows) == sorted(frame.itertuples(index=False))
