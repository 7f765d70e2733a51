"""The differential privacy page in headless Chromium under the Content-Security-Policy: the form is filled
and submitted, static/js/dp.js draws the true and released histogram with plotly, and no violation is
recorded. The data holds markup-like values, shown as text (the table and plotly's labels)."""

import pytest
from anonymizer_helpers import make_dataset
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CSP_LISTENER = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(
  {directive: e.violatedDirective, blocked: e.blockedURI, source: e.sourceFile, line: e.lineNumber}));
"""
CSV = "sex,job\nF,<b>bold</b>\nM,b\nM,b\nF,<img src=x onerror=alert(1)>\n"


def test_release_drawn_under_the_policy(browser, live_server, client, user):
    ds = make_dataset(user, CSV, "markup.csv", roles={})
    client.force_login(user)
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CSP_LISTENER})
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    wait = WebDriverWait(browser, 30)
    browser.get(f"{live_server.url}/datasets/{ds.pk}/dp/")
    browser.find_element(By.CSS_SELECTOR, "#dp-form input[name=columns][value=job]").click()
    browser.find_element(By.CSS_SELECTOR, "#dp-form button[value=show]").click()
    wait.until(lambda b: b.execute_script(
        "return document.querySelectorAll('#chart-dp .js-plotly-plot .main-svg, #chart-dp .main-svg').length >= 1"))
    ticks = browser.execute_script(
        "return Array.from(document.querySelectorAll('#chart-dp .xtick text')).map(t => t.textContent)")
    assert "<b>bold</b>" in ticks and "<img src=x onerror=alert(1)>" in ticks
    cells = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#dp-table tbody td:first-child")]
    assert cells == ["<b>bold</b>", "<img src=x onerror=alert(1)>", "b", "(other)"]
    assert browser.execute_script("return window.__csp") == []
