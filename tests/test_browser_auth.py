"""Smoke test of the browser machinery: sign up and log in through the real pages in headless Chromium."""

import pytest
from django.contrib.auth import get_user_model
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct-Horse-battery-9"


def _submit(browser, **fields):
    """Fill the form and submit it, then wait until the browser has left the old page.

    A click only starts the navigation: reading page_source or current_url right after it
    races the server's answer, so wait for the submitted button to go stale."""
    for name, value in fields.items():
        box = browser.find_element(By.NAME, name)
        box.clear()
        box.send_keys(value)
    button = browser.find_element(By.CSS_SELECTOR, "form.form button[type=submit]")
    button.click()
    WebDriverWait(browser, 30).until(EC.staleness_of(button))
    WebDriverWait(browser, 30).until(lambda b: b.execute_script("return document.readyState") == "complete")


def test_signup_and_login_in_chromium(browser, live_server):
    browser.get(f"{live_server.url}/accounts/signup/")
    assert "Create an account" in browser.page_source
    # The stylesheet is served locally (no CDN) and applied.
    color = browser.execute_script("return getComputedStyle(document.querySelector('.topbar')).backgroundColor")
    assert color == "rgb(31, 78, 121)"

    _submit(browser, username="carol", password1=PASSWORD, password2=PASSWORD)
    assert browser.current_url == f"{live_server.url}/"
    assert get_user_model().objects.filter(username="carol").exists()
    assert browser.get_cookie("sessionid") is not None

    browser.delete_all_cookies()
    browser.get(f"{live_server.url}/accounts/login/")
    _submit(browser, username="carol", password="wrong-password")
    assert "Please enter a correct username and password." in browser.page_source

    _submit(browser, username="carol", password=PASSWORD)
    assert browser.current_url == f"{live_server.url}/"
    assert browser.get_cookie("sessionid") is not None
