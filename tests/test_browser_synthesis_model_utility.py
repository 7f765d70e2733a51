"""Models trained on a synthetic set in headless Chromium: the synthetic set's page links "Models trained on the
release"; the form has no split; submitting it starts the job (run at once here, as a worker would), and its page
draws the bar chart of the original rows read, the synthetic rows and the baseline, with the table beside it.
axe-core finds no serious or critical violation on the form and the figures page."""

import pytest
from anonymizer_helpers import finished_submitted_job, people_dataset, run_jobs_synchronously
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from test_browser_axe import violations_here

from anonymizer_app.models import Job
from anonymizer_app.services import jobs, synthesis

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_train_on_a_synthetic_set_and_see_the_chart(browser, live_server, client, user, monkeypatch):
    source = jobs.run_job(synthesis.create_synthesis_job(people_dataset(user, hierarchies=False), user, {
        "method": "cart", "seed": 2, "holdout": 0.3, "columns": ["age", "city_birth", "disease"]}))
    assert source.status == Job.SUCCEEDED, source.message
    submitted = run_jobs_synchronously(monkeypatch)
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    wait = WebDriverWait(browser, 120)

    browser.get(f"{live_server.url}/jobs/{source.pk}/synthesis/")
    browser.find_element(By.ID, "model-utility-link").click()
    wait.until(lambda b: b.find_elements(By.ID, "utility-form"))
    assert not browser.find_elements(By.NAME, "split")
    assert "30 original rows" in browser.find_element(By.ID, "utility-synthetic-help").text
    assert violations_here(browser) == []
    Select(browser.find_element(By.ID, "id_target")).select_by_value("disease")
    for box in browser.find_elements(By.CSS_SELECTOR, "input[name=models]"):
        if box.get_attribute("value") != "logistic" and box.is_selected():
            box.click()  # one model keeps the test short
    browser.find_element(By.ID, "utility-start").click()
    job = finished_submitted_job(wait, submitted)
    assert job.kind == Job.MODEL_UTILITY and job.status == Job.SUCCEEDED, job.message

    browser.get(f"{live_server.url}/jobs/{job.pk}/models/")
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#chart-utility .main-svg"))
    legend = browser.execute_script("return document.getElementById('chart-utility').data.map(t => t.name)")
    assert legend == ["original rows the synthesizer read", "synthetic rows", "baseline"]
    rows = browser.find_elements(By.CSS_SELECTOR, "#utility-table tbody tr")
    assert [r.get_attribute("data-way") for r in rows] == ["original", "synthetic", "baseline"]
    assert "30 original rows held out of the synthesis" in browser.find_element(By.ID, "utility-facts").text
    assert violations_here(browser) == []
