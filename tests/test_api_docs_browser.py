"""The API's docs page in headless Chromium under the site's Content-Security-Policy: Swagger UI (served from
drf-spectacular-sidecar, no CDN) draws every operation of the schema without a violation and fetches nothing
from another origin; and an API key created on the account page in the browser works against the API."""

from __future__ import annotations

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CSP_LISTENER = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(
  {directive: e.violatedDirective, blocked: e.blockedURI, source: e.sourceFile, line: e.lineNumber}));
"""


def test_docs_page_draws_the_operations_under_the_policy(browser, live_server):
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CSP_LISTENER})
    browser.get(f"{live_server.url}/api/v1/docs/")
    wait = WebDriverWait(browser, 60)
    wait.until(lambda b: b.execute_script("return document.querySelectorAll('.opblock').length") > 20)
    summaries = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")]
    assert "/api/v1/runs/" in " ".join(summaries) and "/api/v1/datasets/" in " ".join(summaries)
    assert browser.execute_script("return window.__csp") == []
    origins = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => new URL(e.name).origin)")
    assert set(origins) <= {live_server.url}, origins


def test_key_made_in_the_browser_works(browser, live_server, client, user):
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    browser.get(f"{live_server.url}/accounts/")
    browser.find_element(By.CSS_SELECTOR, "#api-key-form input[name=name]").send_keys("script")
    browser.find_element(By.CSS_SELECTOR, "#api-key-form button[type=submit]").click()
    wait = WebDriverWait(browser, 30)
    wait.until(lambda b: b.find_elements(By.ID, "new-api-key-value"))
    key = browser.find_element(By.ID, "new-api-key-value").text
    r = requests.get(f"{live_server.url}/api/v1/datasets/", headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert (r.status_code, r.json()) == (200, [])
    # revoked on the page, refused by the API
    browser.get(f"{live_server.url}/accounts/")
    browser.find_element(By.CSS_SELECTOR, "#api-key-list button[type=submit]").click()
    wait.until(lambda b: b.execute_script(
        "const t = document.getElementById('api-key-list'); return !!t && t.textContent.includes('revoked')"))
    r = requests.get(f"{live_server.url}/api/v1/datasets/", headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert r.status_code == 401
