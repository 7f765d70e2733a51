"""The run form in headless Chromium under the Content-Security-Policy: choosing SafePub and typing ε and δ
shows the derived β and k (static/js/safepub.js, from /safepub/parameters.json) with no violation; a bad ε
shows the engine's message."""

import pytest
from anonymizer_helpers import make_dataset
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from anonymizer_app.engine.model.table import Role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CSP_LISTENER = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(
  {directive: e.violatedDirective, blocked: e.blockedURI, source: e.sourceFile, line: e.lineNumber}));
"""


def test_derived_parameters_follow_epsilon_and_delta(browser, live_server, client, user):
    ds = make_dataset(user, "age,sex\n" + "\n".join(f"{20 + i % 50},{'MF'[i % 2]}" for i in range(200)) + "\n",
                      "people.csv", roles={"age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING})
    client.force_login(user)
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CSP_LISTENER})
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    wait = WebDriverWait(browser, 30)
    browser.get(f"{live_server.url}/datasets/{ds.pk}/run/")
    box = browser.find_element(By.ID, "safepub-derived")
    assert "hidden" in box.get_attribute("class")
    Select(browser.find_element(By.ID, "id_algorithm")).select_by_value("safepub")
    tick = browser.find_element(By.CSS_SELECTOR, "[name='model:dp:enabled']")
    if not tick.is_selected():
        tick.click()
    epsilon = browser.find_element(By.CSS_SELECTOR, "[name='model:dp:epsilon']")
    delta = browser.find_element(By.CSS_SELECTOR, "[name='model:dp:delta']")
    epsilon.clear()
    epsilon.send_keys("2")
    delta.clear()
    delta.send_keys("0.000001")
    text = browser.find_element(By.ID, "safepub-derived-text")
    wait.until(lambda b: "k = 117" in text.text)
    assert "β = 0.8347" in text.text and "hidden" not in box.get_attribute("class")
    epsilon.clear()
    epsilon.send_keys("0")
    wait.until(lambda b: "must be between 0.01 and 10" in text.text)
    assert "message-warning" in box.get_attribute("class")
    assert browser.execute_script("return window.__csp") == []
