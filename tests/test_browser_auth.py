"""Smoke test of the browser machinery: sign up and log in through the real pages in headless Chromium."""

import pytest
from django.contrib.auth import get_user_model
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct-Horse-battery-9"


def _submit(browser, **fields):
    for name, value in fields.items():
        box = browser.find_element(By.NAME, name)
        box.clear()
        box.send_keys(value)
    browser.find_element(By.CSS_SELECTOR, "form.form button[type=submit]").click()


def _wait(browser, condition):
    """A click only starts the navigation: wait for the server's answer instead of racing it."""
    WebDriverWait(browser, 30, ignored_exceptions=(WebDriverException,)).until(condition)


def test_signup_and_login_in_chromium(browser, live_server):
    browser.get(f"{live_server.url}/accounts/signup/")
    assert "Create an account" in browser.page_source
    # The stylesheet is served locally (no CDN) and applied.
    color = browser.execute_script("return getComputedStyle(document.querySelector('.topbar')).backgroundColor")
    assert color == "rgb(31, 78, 121)"

    _submit(browser, username="carol", password1=PASSWORD, password2=PASSWORD)
    _wait(browser, lambda b: b.current_url == f"{live_server.url}/")
    assert get_user_model().objects.filter(username="carol").exists()
    assert browser.get_cookie("sessionid") is not None

    browser.delete_all_cookies()
    browser.get(f"{live_server.url}/accounts/login/")
    _submit(browser, username="carol", password="wrong-password")
    _wait(browser, lambda b: "Please enter a correct username and password." in b.page_source)

    _submit(browser, username="carol", password=PASSWORD)
    _wait(browser, lambda b: b.current_url == f"{live_server.url}/")
    assert browser.get_cookie("sessionid") is not None
