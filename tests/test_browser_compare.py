"""The comparison in headless Chromium (issue 29, item 4): the form starts from the run form's suppression limit
and shows a model's fields once it is ticked; the charts' log axes label whole powers of ten (never a lone
"5" or "2" beside "0.01"), and no figure title sits under the plotly toolbar. Screenshots go to
$ANONYMIZER_SCREENSHOTS when it is set."""

import os
from pathlib import Path

import pytest
from anonymizer_helpers import people_dataset, run_jobs_synchronously
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from anonymizer_app.services import comparison, jobs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _sign_in(browser, live_server, client, user):
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})


def _shot(browser, name: str) -> None:
    folder = os.environ.get("ANONYMIZER_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(folder) / name))


def test_the_compare_form_and_the_comparison_charts(browser, live_server, client, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user)
    job = jobs.run_job(comparison.create_comparison(ds, ["datafly", "flash", "mondrian"], [2, 5, 10, 50], 0.05,
                                                    "disease"))
    _sign_in(browser, live_server, client, user)
    browser.set_window_size(1280, 1000)

    browser.get(f"{live_server.url}/datasets/{ds.pk}/compare/")
    assert browser.find_element(By.ID, "id_suppression_percent").get_attribute("value") == "5"
    fields = browser.find_element(By.CSS_SELECTOR, "#model-l .model-fields")
    assert not fields.is_displayed()
    browser.find_element(By.ID, "id_model:l:enabled").click()
    assert fields.is_displayed()
    _shot(browser, "compare-form.png")

    browser.get(f"{live_server.url}/jobs/{job.pk}/comparison/")
    WebDriverWait(browser, 30).until(lambda b: b.execute_script(
        "return document.querySelectorAll('#chart-seconds .ytick text').length > 0"))
    seconds = job.result.report["comparison"]
    figures = comparison.comparison_figures(seconds)
    for key in ("ncp", "discernibility", "seconds"):
        axis = figures[key]["layout"]["yaxis"]
        shown = browser.execute_script(
            f"return Array.from(document.querySelectorAll('#chart-{key} .ytick text')).map(t => t.textContent)")
        assert shown, key
        if axis["type"] == "log":
            assert set(shown) <= set(axis["ticktext"]), (key, shown)
        # the figure's title is the card's heading: none is drawn inside the plot, under the toolbar
        assert browser.execute_script(f"return document.querySelectorAll('#chart-{key} .gtitle').length") == 0 \
            or browser.execute_script(f"return document.querySelector('#chart-{key} .gtitle').textContent") == ""
    _shot(browser, "comparison.png")
