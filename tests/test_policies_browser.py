"""The policy pages in headless Chromium: axe-core finds no serious or critical accessibility violation (the
checker and its helpers of test_browser_axe.py), and the flow save -> apply -> extend works by clicking."""

from __future__ import annotations

import pytest
from anonymizer_helpers import SMALL_CSV, make_dataset, run_jobs_synchronously
from policies_helpers import small_job
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from test_browser_axe import _report, _violations

from anonymizer_app.models import Job
from policies.models import Policy

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _sign_in(browser, live_server, client, user) -> None:
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})


def _wait(browser, url_part: str = ""):
    """The next page loaded (its URL holding ``url_part``: a click's navigation has happened, not just the old
    page still complete)."""
    WebDriverWait(browser, 30).until(lambda b: url_part in b.current_url
                                     and b.execute_script("return document.readyState") == "complete")


def test_policy_pages_have_no_serious_violation_and_the_flow_works(browser, live_server, client, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    job = small_job(user)
    _sign_in(browser, live_server, client, user)
    # save from the result page's button
    browser.get(f"{live_server.url}/jobs/{job.pk}/result/")
    _wait(browser)
    browser.find_element(By.ID, "save-policy-link").click()
    _wait(browser, "/policies/save/")
    name = browser.find_element(By.ID, "id_name")
    name.clear()
    name.send_keys("monthly <extract>")
    browser.find_element(By.CSS_SELECTOR, "#save-policy-form button[type=submit]").click()
    WebDriverWait(browser, 30).until(lambda b: "/policies/save/" not in b.current_url)
    _wait(browser, "/policies/")
    policy = Policy.objects.get(name="monthly <extract>")
    version = policy.versions.get()
    batch = make_dataset(user, SMALL_CSV.replace("Gus,71,30001,M", "Gus,71,30001,X"), name="batch 2", roles={})
    # apply from the dataset page: choose, check, see the new value, extend and run
    browser.get(f"{live_server.url}/datasets/{batch.pk}/")
    _wait(browser)
    browser.find_element(By.ID, "apply-policy-link").click()
    _wait(browser, f"/policies/apply/{batch.pk}/")
    browser.find_element(By.CSS_SELECTOR, "#check-form button[type=submit]").click()
    _wait(browser, "version=")
    assert "1 value(s) in 1 record(s) not covered" in browser.find_element(By.ID, "schema-report").text
    found = {}
    for path in ("/policies/", f"/policies/{policy.pk}/", f"/policies/save/{job.pk}/",
                 f"/policies/apply/{batch.pk}/", f"/policies/apply/{batch.pk}/?version={version.pk}",
                 f"/policies/{policy.pk}/delete/"):
        violations = _violations(browser, live_server.url + path)
        if violations:
            found[path] = violations
    assert not found, "\n" + _report(found)
    browser.get(f"{live_server.url}/policies/apply/{batch.pk}/?version={version.pk}")
    _wait(browser)
    browser.find_element(By.ID, "extend-and-run").click()
    _wait(browser, "/jobs/")
    applied = Job.objects.get(dataset=batch)
    assert applied.status == Job.SUCCEEDED, applied.message
    assert browser.current_url.endswith(f"/jobs/{applied.pk}/")
