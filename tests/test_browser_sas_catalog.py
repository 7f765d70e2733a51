"""The upload form's SAS catalog field in headless Chromium: a .sas7bdat chosen with its .sas7bcat (the field
under "SAS value labels") lands on the preview with the catalog's labels and the notice naming them; the form,
the field open, has no serious accessibility violation (axe-core)."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from test_browser_axe import violations_here

from anonymizer_app.models import Dataset
from anonymizer_app.services import storage

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIXTURES = Path(__file__).resolve().parent / "engine" / "statfiles"


def test_upload_with_the_catalog_in_chromium(browser, live_server, client, user):
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    browser.get(f"{live_server.url}/")
    browser.find_element(By.CSS_SELECTOR, "#catalog-field summary").click()
    assert violations_here(browser) == []
    browser.find_element(By.ID, "id_file").send_keys(str(FIXTURES / "hadley.sas7bdat"))
    browser.find_element(By.ID, "id_catalog").send_keys(str(FIXTURES / "formats.sas7bcat"))
    browser.find_element(By.CSS_SELECTOR, "#upload-form button[type=submit]").click()
    WebDriverWait(browser, 30).until(lambda b: "/datasets/" in b.current_url)
    page = browser.find_element(By.TAG_NAME, "body").text
    assert "Value labels from formats.sas7bcat: 2 variables (gender, workshop)." in page
    ds = Dataset.objects.get(owner=user)
    stored = storage.read_frame(storage.table_path(ds)).astype(str)
    assert stored["workshop"].tolist() == ["R", "SAS"] * 4  # haven's WORKSHOP format: 1 = R, 2 = SAS
