"""Issue 28 in headless Chromium: the columns page of a table with a repeating patient id and name columns
pre-selects the names as identifying and the patient id as the person id, and says why; with the names set back to insensitive, the run page's
pre-flight stops the run naming them, and ticking "Publish column X as is" for each lets it start.
Screenshots go to $ANONYMIZER_SCREENSHOTS when it is set."""

import os
from pathlib import Path

import pytest
from anonymizer_helpers import queue_without_running, set_roles
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from test_identifier_suggestions import clinical_csv

from anonymizer_app.engine import Role
from anonymizer_app.models import Job
from anonymizer_app.services import datasets

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _open(browser, url: str) -> None:
    browser.get(url)
    WebDriverWait(browser, 30).until(lambda b: b.execute_script("return document.readyState") == "complete")


def _shot(browser, name: str) -> None:
    folder = os.environ.get("ANONYMIZER_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(folder) / name))


def test_preselected_explained_and_held_until_confirmed(browser, live_server, client, user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = datasets.create_dataset(user, clinical_csv(), "covid_tests.csv", name="Lab tests")
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    browser.set_window_size(1400, 1000)

    _open(browser, f"{live_server.url}/datasets/{ds.pk}/columns/")
    chosen = browser.execute_script(
        "return Object.fromEntries(Array.from(document.querySelectorAll('select.role-select'))"
        ".map(s => [s.getAttribute('aria-label').replace('role of ', ''), s.value]))")
    assert chosen == {"subject_id": "person id", "fake_first_name": "identifying", "fake_last_name": "identifying",
                      "gender": "insensitive", "age": "insensitive", "clinic_name": "insensitive",
                      "result": "insensitive", "notes": "insensitive"}
    why = browser.find_element(By.ID, "suggestion-0").text
    assert "looks identifying" in why and "repeats across records" in why and "suggested as person id" in why
    assert "surname column; 12 distinct values" in browser.find_element(By.ID, "suggestion-2").text
    assert "with an e-mail address" in browser.find_element(By.ID, "free-text-7").text
    _shot(browser, "identifier-columns.png")

    set_roles(ds, {"subject_id": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "gender": Role.QUASI_IDENTIFYING,
                   "result": Role.SENSITIVE})  # the names back to insensitive: they would be published
    _open(browser, f"{live_server.url}/datasets/{ds.pk}/run/")
    holds = browser.find_element(By.ID, "identifier-holds")
    assert "Publish column fake_first_name as is" in holds.text and "first name column" in holds.text
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#identifier-holds .field-errors"))
    errors = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#identifier-holds .field-errors")]
    assert len(errors) == 2 and errors[0].startswith("Column 'fake_first_name' looks like a direct identifier")
    assert Job.objects.count() == 0
    _shot(browser, "identifier-held.png")

    for box in browser.find_elements(By.CSS_SELECTOR, "#identifier-holds input[name=publish_as_is]"):
        box.click()
    # the live pre-flight asks again: nothing left to hold the run
    WebDriverWait(browser, 30).until(lambda b: "hidden" in b.find_element(By.ID, "preflight").get_attribute("class"))
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()
    WebDriverWait(browser, 30).until(lambda b: "/jobs/" in b.current_url)
    assert Job.objects.count() == 1
