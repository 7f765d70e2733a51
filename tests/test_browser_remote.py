"""Zenodo in headless Chromium against pytest-django's live server and the local repository server: store a
connection (the token typed once, never shown again), import a record's file (choosing among two; the
download runs as a job whose page links the dataset), set the
roles, run Datafly k=2, deposit the result as a draft and follow the draft's link. Jobs run through Celery in
eager mode, as in test_browser_flow.py."""

from __future__ import annotations

import browser_flow
import pytest
from browser_flow import fill
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from anonymizer_app.models import Column, Dataset, Job, SourceImport
from anonymizer_app.services import exports
from tests import remote_helpers
from tests.remote_helpers import ZENODO_TOKEN

repo_server = remote_helpers.repo_server  # the fixture
eager_celery = browser_flow.eager_celery  # the fixture
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _axe(browser) -> list[dict]:
    """Serious or critical axe-core violations of the page as it is now (test_browser_axe's script)."""
    from tests.test_browser_axe import AXE, RUN_AXE

    browser.execute_script(AXE)
    browser.set_script_timeout(60)
    return browser.execute_async_script(RUN_AXE)


def test_import_anonymize_deposit(browser, live_server, eager_celery, user, repo_server):
    from conftest import ALICE_PASSWORD

    base, repo = repo_server
    site = live_server.url
    wait = WebDriverWait(browser, 60)
    browser.get(f"{site}/accounts/login/")
    fill(browser, username="alice", password=ALICE_PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    wait.until(lambda b: "/accounts/login/" not in b.current_url)

    # a connection: the token typed once, shown back as its last four characters
    browser.get(f"{site}/connections/")
    fill(browser, name="Local Zenodo", token=ZENODO_TOKEN)
    Select(browser.find_element(By.NAME, "service")).select_by_value("zenodo")
    Select(browser.find_element(By.NAME, "base_url")).select_by_value(base)
    browser.find_element(By.ID, "connection-submit").click()
    wait.until(lambda b: b.find_elements(By.ID, "connection-list"))
    assert _axe(browser) == []
    assert "SECRET" not in browser.page_source and f"…{ZENODO_TOKEN[-4:]}" in browser.page_source

    # import: record 102 holds two table files, the page offers the choice
    browser.get(f"{site}/")
    browser.find_element(By.ID, "import-remote-link").click()
    wait.until(lambda b: b.current_url.endswith("/datasets/import-remote/"))
    Select(browser.find_element(By.NAME, "service")).select_by_value("zenodo")
    Select(browser.find_element(By.NAME, "base_url")).select_by_value(base)
    fill(browser, identifier="10.5281/zenodo.102")
    browser.find_element(By.ID, "import-remote-submit").click()
    wait.until(lambda b: b.find_elements(By.ID, "remote-file-choice"))
    assert _axe(browser) == []
    browser.find_element(By.CSS_SELECTOR, "#remote-file-choice input[value='b.csv']").click()
    browser.find_element(By.ID, "import-remote-submit").click()
    # the import's page (the download ran as a job: eagerly here), then its dataset
    wait.until(lambda b: "/datasets/imports/" in b.current_url and b.find_elements(By.ID, "import-dataset-link"))
    imp = SourceImport.objects.get(owner=user)
    assert (imp.source, imp.status, imp.table, imp.rows, imp.total) == (
        "zenodo", "succeeded", "b.csv", len(remote_helpers.VISITS_CSV), len(remote_helpers.VISITS_CSV))
    heading = browser.find_element(By.TAG_NAME, "h1").text
    assert heading.startswith("Importing b.csv from Zenodo") and "succeeded" in heading
    assert browser.find_element(By.ID, "progress-percent").text == "100.0%"
    assert _axe(browser) == []
    browser.find_element(By.ID, "import-dataset-link").click()
    wait.until(lambda b: b.current_url.endswith(f"/datasets/{imp.dataset_id}/"))
    dataset = Dataset.objects.get(owner=user)
    assert (dataset.original_name, dataset.n_rows, dataset.n_columns) == ("b.csv", 6, 4)

    roles = {"name": "identifying", "age": "quasi-identifying", "zip": "quasi-identifying", "disease": "sensitive"}
    browser.get(f"{site}/datasets/{dataset.pk}/columns/")
    for column in Column.objects.filter(dataset=dataset):
        Select(browser.find_element(By.ID, f"col-{column.position}-role")).select_by_value(roles[column.name])
    browser.find_element(By.CSS_SELECTOR, "#columns-form button[type=submit]").click()
    wait.until(lambda b: Column.objects.filter(dataset=dataset, role="quasi-identifying").count() == 2)

    browser.get(f"{site}/datasets/{dataset.pk}/run/")
    Select(browser.find_element(By.NAME, "algorithm")).select_by_value("datafly")
    fill(browser, k="2")
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()
    wait.until(lambda b: "/result/" in b.current_url or b.find_elements(By.ID, "result-link"))
    if "/result/" not in browser.current_url:
        browser.find_element(By.ID, "result-link").click()
        wait.until(lambda b: "/result/" in b.current_url)
    job = Job.objects.get(dataset=dataset, kind="run")
    assert job.status == "succeeded", job.message

    # deposit the result as a draft
    browser.find_element(By.ID, "deposit-remote-link").click()
    wait.until(lambda b: b.find_elements(By.ID, "deposit-form"))
    fill(browser, creators="Doe, Jane")
    browser.find_element(By.ID, "deposit-submit").click()
    # the deposit's job page (the uploads ran as a job: eagerly here), then back to the deposit page
    wait.until(lambda b: "/jobs/" in b.current_url and b.find_elements(By.ID, "result-link"))
    deposit = Job.objects.get(kind="repository-deposit")
    assert deposit.status == "succeeded", deposit.message
    browser.find_element(By.ID, "result-link").click()
    wait.until(lambda b: b.find_elements(By.ID, "deposit-done"))
    assert _axe(browser) == []
    (dep_id, draft), = repo.drafts.items()
    link = browser.find_element(By.ID, "draft-link")
    assert link.get_attribute("href") == f"{base}/deposit/{dep_id}"
    assert draft["metadata"]["title"] == "b, anonymized" and draft["metadata"]["creators"] == [{"name": "Doe, Jane"}]
    assert draft["files"]["b-datafly-k2-anonymized.csv"] == exports.export_result(job.result, "csv")
    assert "b-release-report.html" in draft["files"]
    assert not any("publish" in r["path"] for r in repo.requests)
    for page in ("/connections/", "/datasets/import-remote/", f"/jobs/{job.pk}/result/deposit/"):
        browser.get(site + page)
        assert _axe(browser) == [], page
