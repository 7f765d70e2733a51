"""Person id in headless Chromium (issue 28): a table of lab tests with a repeating patient id and first/last name
columns. The columns page pre-selects "person id" for the patient id and "identifying" for the names and says why;
with the names switched to insensitive on the page, the run page's pre-flight stops the run naming them; confirmed,
the run starts with the adversary chosen on the form. Screenshots go to $ANONYMIZER_SCREENSHOTS when it is set."""

from __future__ import annotations

import pytest
from anonymizer_helpers import queue_without_running
from person_helpers import patients_csv
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from test_browser_identifier_suggestions import _open, _shot

from anonymizer_app.models import Job
from anonymizer_app.services import datasets

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROLES = {"age": "quasi-identifying", "sex": "quasi-identifying", "zip": "quasi-identifying", "result": "sensitive",
         "first_name": "insensitive", "last_name": "insensitive"}


def _roles(browser) -> dict:
    return browser.execute_script(
        "return Object.fromEntries(Array.from(document.querySelectorAll('select.role-select'))"
        ".map(s => [s.getAttribute('aria-label').replace('role of ', ''), s.value]))")


def _suggestion(browser, column: str) -> str:
    return browser.execute_script(
        "const row = Array.from(document.querySelectorAll('#columns tr.column-row')).find("
        "r => r.querySelector('strong').textContent === arguments[0]);"
        "const s = row.querySelector('.identifier-suggestion'); return s ? s.textContent : '';", column)


def test_person_id_preselected_explained_and_names_held(browser, live_server, client, user, monkeypatch):
    queue_without_running(monkeypatch)
    text = patients_csv(names=True)
    ds = datasets.create_dataset(user, text.encode(), "lab_tests.csv", name="Lab tests")
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    browser.set_window_size(1400, 1000)

    _open(browser, f"{live_server.url}/datasets/{ds.pk}/columns/")
    assert _roles(browser) == {"patient_id": "person id", "first_name": "identifying", "last_name": "identifying",
                               "age": "insensitive", "sex": "insensitive", "zip": "insensitive",
                               "result": "insensitive"}
    ids = [line.split(",")[0] for line in text.splitlines()[1:]]
    why = " ".join(_suggestion(browser, "patient_id").split())
    assert "looks identifying" in why and "suggested as person id" in why
    assert f"repeats: {len(set(ids)):,} persons in {len(ids):,} rows" in why
    assert "first name column" in _suggestion(browser, "first_name")
    assert "surname column" in _suggestion(browser, "last_name")
    assert "patient_id is the person id" in " ".join(browser.find_element(By.ID, "person-column-notice").text.split())
    _shot(browser, "person-id-columns.png")

    # the names switched to insensitive on the page (and the QIs chosen), saved
    for column, role in ROLES.items():
        select = browser.find_element(By.CSS_SELECTOR, f"select[aria-label='role of {column}']")
        Select(select).select_by_value(role)
    browser.find_element(By.CSS_SELECTOR, "#columns-form button[type=submit].btn-primary").click()
    saved = {"patient_id": "person id", **ROLES}
    WebDriverWait(browser, 30).until(lambda b: {c.name: c.role for c in ds.columns.all()} == saved)
    WebDriverWait(browser, 30).until(lambda b: b.execute_script("return document.readyState") == "complete")

    _open(browser, f"{live_server.url}/datasets/{ds.pk}/run/")
    persons = browser.find_element(By.ID, "person-level")
    assert "k counts persons, not records" in " ".join(persons.text.split())
    Select(browser.find_element(By.NAME, "person_adversary")).select_by_value("all-records")
    holds = browser.find_element(By.ID, "identifier-holds")
    assert "Publish column first_name as is" in holds.text and "Publish column last_name as is" in holds.text
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#identifier-holds .field-errors"))
    errors = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#identifier-holds .field-errors")]
    assert len(errors) == 2 and errors[0].startswith("Column 'first_name' looks like a direct identifier")
    assert "patient_id" not in " ".join(errors)  # the person id is a handled role: never held
    assert Job.objects.count() == 0
    _shot(browser, "person-id-held.png")

    Select(browser.find_element(By.NAME, "person_adversary")).select_by_value("all-records")
    for box in browser.find_elements(By.CSS_SELECTOR, "#identifier-holds input[name=publish_as_is]"):
        box.click()
    WebDriverWait(browser, 30).until(lambda b: "hidden" in b.find_element(By.ID, "preflight").get_attribute("class"))
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()
    WebDriverWait(browser, 30).until(lambda b: "/jobs/" in b.current_url)
    assert Job.objects.get().person_adversary == "all-records"
