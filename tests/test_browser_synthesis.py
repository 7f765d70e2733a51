"""Synthetic data in headless Chromium: the dataset's "Synthetic data" tab opens the form; choosing the CART
baseline and three columns and submitting starts the job (run at once here, as a worker would), and the synthetic
set's page states "No formal privacy guarantee" and shows the figures and the first rows. axe-core finds no
serious or critical violation on the form and the result page."""

import pytest
from anonymizer_helpers import finished_submitted_job, make_dataset, run_jobs_synchronously
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from test_browser_axe import violations_here

from anonymizer_app.models import Job

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_tab_to_a_synthetic_set(browser, live_server, client, user, monkeypatch):
    ds = make_dataset(user, name="Small <b>set</b>")
    submitted = run_jobs_synchronously(monkeypatch)
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    wait = WebDriverWait(browser, 120)

    browser.get(f"{live_server.url}/datasets/{ds.pk}/")
    browser.find_element(By.ID, "synthesis-tab").click()
    wait.until(lambda b: b.find_elements(By.ID, "synthesis-form"))
    assert violations_here(browser) == []
    Select(browser.find_element(By.ID, "id_method")).select_by_value("cart")
    for box in browser.find_elements(By.CSS_SELECTOR, "input[name=columns]"):
        if box.get_attribute("value") not in ("sex", "note", "disease") and box.is_selected():
            box.click()
    browser.find_element(By.ID, "synthesis-start").click()
    job = finished_submitted_job(wait, submitted)
    assert job.kind == Job.SYNTHESIS and job.status == Job.SUCCEEDED, job.message

    browser.get(f"{live_server.url}/jobs/{job.pk}/synthesis/")
    wait.until(lambda b: b.find_elements(By.ID, "guarantee-text"))
    assert browser.find_element(By.ID, "guarantee-text").text.startswith("No formal privacy guarantee")
    header = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#synthesis-preview thead th")]
    assert header == ["sex", "note", "disease"]
    shown = {r.get_attribute("data-figure") for r in browser.find_elements(By.CSS_SELECTOR, "#synthesis-figures tr[data-figure]")}
    assert {"tvd_1way_mean", "exact_copies", "rare_exact_copies", "membership_auc"} <= shown
    assert "Small <b>set</b>" in browser.find_element(By.CSS_SELECTOR, ".breadcrumbs").text
    assert violations_here(browser) == []

    browser.find_element(By.ID, "releases-link").click()
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#chart-releases .main-svg"))
    assert [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#releases-table thead th")][1:] == [
        "Synthetic (cart)"]
    assert violations_here(browser) == []
