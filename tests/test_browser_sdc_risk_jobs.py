"""SUDA2 on a worker in headless Chromium: above the in-request limit (made small) the risk page offers the button;
a click queues the job (run at once here), and the risk page then draws the stored contributions; axe-core finds no
serious or critical violation on either page."""

import pytest
from anonymizer_helpers import finished_submitted_job, make_dataset, run_jobs_synchronously
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from test_browser_axe import _report, violations_here
from test_sdc_risk_jobs import ROLES, TABLE

from anonymizer_app.models import Job
from anonymizer_app.services import sdc_risk

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_compute_suda2_on_a_worker_and_see_the_figures(browser, live_server, client, user, monkeypatch):
    monkeypatch.setattr(sdc_risk, "WEB_SUDA_ROWS", 5)
    submitted = run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user, TABLE, "suda.csv", roles=ROLES)
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    wait = WebDriverWait(browser, 30)
    page = f"{live_server.url}/datasets/{ds.pk}/risk/?qi=A&qi=B&qi=C&qi=D&population=none&threshold=0.2&combinations=1"
    browser.get(page)
    wait.until(lambda b: b.execute_script("return document.readyState") == "complete")
    found = {}
    if violations := violations_here(browser):
        found["offer"] = violations
    browser.find_element(By.ID, "sdc-suda-worker-button").click()
    job = finished_submitted_job(wait, submitted)
    assert job.kind == Job.SDC_RISK and job.status == Job.SUCCEEDED, job.message
    browser.get(f"{live_server.url}/jobs/{job.pk}/sdc-risk/")  # the job's result: the risk page it came from
    wait.until(lambda b: b.find_elements(By.ID, "sdc-suda-stored"))
    wait.until(lambda b: b.execute_script(
        "var e = document.getElementById('chart-sdc-contributions'); return !!(e && e.querySelector('svg'));"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#sdc-contributions tbody tr")
    assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows] == ["A", "B", "C", "D"]
    if violations := violations_here(browser):
        found["stored"] = violations
    assert not found, "\n" + _report(found)
