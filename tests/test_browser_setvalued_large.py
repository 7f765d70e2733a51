"""The set-valued result page of a liked-movies-shaped file (671 records over about 6,000 item ids) in headless
Chromium: bounded (DOM elements, height), its figures explained, the itemset chart drawn with both bars per
original itemset, and axe-core finds no serious or critical violation on it, the items page, the run form
or its release report."""

from __future__ import annotations

import os

import pytest
import test_browser_axe as axe
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from setvalued_helpers import transaction_dataset
from test_items_result_large import liked_movies

from anonymizer_app.services import jobs, setvalued

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_large_set_valued_result_in_chromium(browser, live_server, client, user, tmp_path):
    ds = transaction_dataset(user, liked_movies(), "liked.txt", ",", record_id=True)
    job = jobs.run_job(setvalued.create_set_job(ds, "dynamic", 2, 2, True, None))
    assert job.status == "succeeded", job.message
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    browser.set_window_size(1280, 900)
    browser.get(f"{live_server.url}/jobs/{job.pk}/result/")
    WebDriverWait(browser, 60).until(
        lambda b: b.execute_script("return document.querySelectorAll('#chart-itemsets .js-plotly-plot, "
                                   "#chart-itemsets.js-plotly-plot').length") == 1)
    elements = browser.execute_script("return document.getElementsByTagName('*').length")
    height = browser.execute_script("return document.documentElement.scrollHeight")
    shot = os.environ.get("SETVALUED_SCREENSHOT") or str(tmp_path / "result.png")
    browser.set_window_size(1280, min(height, 8000))
    browser.save_screenshot(shot)
    print(f"elements {elements}, height {height} px, screenshot {shot}")
    assert elements < 8000  # plotly's SVG included
    assert height < 9000
    bars = browser.execute_script("return document.querySelectorAll('#chart-itemsets g.trace.bars').length")
    assert bars == 2  # true and estimated supports of the same itemsets
    explained = browser.find_element(By.ID, "set-metrics").text
    assert "not comparable with an Apriori run" in explained and "Itemset-support error" in explained
    labels = job.result.report["generalization_rules"]
    assert labels and all(label.startswith("{") for label in labels)  # ids are nominal: sets, never ranges
    found = {}
    for path in (f"/jobs/{job.pk}/result/", f"/datasets/{ds.pk}/items/", f"/datasets/{ds.pk}/run-items/",
                 f"/jobs/{job.pk}/result/items-release-report/"):
        violations = axe._violations(browser, live_server.url + path)
        if violations:
            found[path] = violations
    assert not found, "\n" + axe._report(found)
