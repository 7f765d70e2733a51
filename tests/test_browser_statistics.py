"""The statistics page in headless Chromium: its charts drawn (plotly), a numeric column's bars in value order
on one axis, the pair form submitted by choosing two columns, and axe-core finding no serious or critical
accessibility violation (the page with and without a pair)."""

from __future__ import annotations

import pytest
from anonymizer_helpers import make_dataset
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from test_browser_axe import _report, _violations

from anonymizer_app.services import jobs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_statistics_page_charts_pair_form_and_axe(browser, live_server, client, user):
    job = jobs.run_job(jobs.create_job(make_dataset(user), "mondrian", 2, 0.0, "disease"))
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    url = f"{live_server.url}/jobs/{job.pk}/result/statistics/"
    found = {}
    violations = _violations(browser, url)
    if violations:
        found[url] = violations
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, ".statistics-chart .main-svg"))
    charts = browser.find_elements(By.CSS_SELECTOR, ".statistics-chart")
    assert charts and all(c.find_elements(By.CSS_SELECTOR, ".main-svg") for c in charts)
    # age (numeric): the x axis in value order, both traces on the one y axis
    ticks = browser.execute_script(
        "const el = document.querySelector('.statistics-chart');"
        "return [el.data.map(t => t.yaxis || 'y'), el.data[0].x];")
    assert ticks[0] == ["y", "y"]
    starts = [float(t.split(" – ")[0]) for t in ticks[1]]
    assert starts == sorted(starts)
    Select(browser.find_element(By.ID, "pair-a")).select_by_value("age")
    Select(browser.find_element(By.ID, "pair-b")).select_by_value("disease")
    browser.find_element(By.CSS_SELECTOR, "#pair-form button[type=submit]").click()
    WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.ID, "contingency-after"))
    assert browser.find_element(By.ID, "pair-cramers_v").text.startswith("Cramér's V")
    violations = _violations(browser, browser.current_url)
    if violations:
        found[browser.current_url] = violations
    assert not found, "\n" + _report(found)
