"""Two solutions side by side in headless Chromium: from the lattice page a click on a node makes it solution B of
"Compare two nodes", the form opens the side-by-side page with both columns and the difference; from a result
page "Compare with…" lists the other runs and opens two runs side by side. axe-core finds no serious or critical
violation on the three pages."""

import re

import pytest
from anonymizer_helpers import make_dataset
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from test_browser_axe import violations_here

from anonymizer_app.engine.measure.figure_catalogue import format_figure
from anonymizer_app.models import Job
from anonymizer_app.services import jobs, results

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _sign_in(browser, live_server, client, user):
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})


def test_compare_two_nodes_and_two_runs(browser, live_server, client, user):
    ds = make_dataset(user)
    flash = jobs.run_job(jobs.create_job(ds, "flash", 2, 0.25, "disease", {"keep_lattice": "yes",
                                                                              "weights": "age=1,zip=0.2"}))
    datafly = jobs.run_job(jobs.create_job(ds, "datafly", 2, 0.25, "disease"))
    assert flash.status == datafly.status == Job.SUCCEEDED
    report = flash.result.report
    result_levels = results.transformation_key(report)
    wait = WebDriverWait(browser, 60)
    _sign_in(browser, live_server, client, user)

    browser.get(f"{live_server.url}/jobs/{flash.pk}/lattice/")
    wait.until(lambda b: "nodes, optimum" in b.find_element(By.ID, "lattice-summary").text)
    assert browser.find_element(By.ID, "lattice-weights").text == "attribute weights: age 1 · zip 0.2 · sex 0.5"
    assert browser.find_element(By.ID, "compare-a").get_attribute("value") == result_levels
    heights = browser.execute_script(
        "return fetch(JSON.parse(document.getElementById('lattice-urls').textContent).data)"
        ".then(r => r.json()).then(d => d.heights)")
    top = ",".join(str(h) for h in heights)
    browser.execute_script(  # plotly's click on the node `top`, as a click on its marker sends it
        """
        const chart = document.getElementById('lattice-chart');
        const trace = chart.data.find(t => (t.customdata || []).length);
        return fetch(arguments[1], {credentials: 'same-origin'}).then(r => r.json()).then(d => {
          chart.emit('plotly_click', {points: [{customdata: d.nodes.levels.indexOf(arguments[0]), curveNumber: 0,
                                                pointNumber: 0, data: trace}]});
        });
        """, top, browser.execute_script("return JSON.parse(document.getElementById('lattice-urls').textContent).data"))
    wait.until(lambda b: b.find_element(By.ID, "compare-b").get_attribute("value") == top)
    # the node card's "Compare two nodes" link: the run's result beside the clicked node
    link = browser.find_element(By.ID, "node-compare-link").get_attribute("href")
    assert link.endswith(f"/jobs/{flash.pk}/lattice/compare/?a={result_levels.replace(',', '%2C')}"
                         f"&b={top.replace(',', '%2C')}")
    # the node table has the run's weights as a column
    wait.until(lambda b: b.find_element(By.ID, "node-transformation").text.startswith("Quasi-identifier Weight"))
    browser.find_element(By.ID, "compare-nodes-button").click()
    wait.until(lambda b: b.find_elements(By.ID, "figures-table"))
    header = browser.find_element(By.CSS_SELECTOR, "#settings-table thead").text
    assert f"A: Transformation {result_levels}" in header and f"B: Transformation {top}" in header
    ncp = browser.find_element(By.ID, "figure-ncp").text
    assert ncp.startswith("NCP (information loss) " + format_figure("ncp", report["metrics"]["ncp"]))
    assert re.search(r" \+\d\.\d{3}$", ncp)  # the top loses more than the optimum: B - A above 0
    assert browser.find_elements(By.ID, "attributes-table")
    assert violations_here(browser) == []

    browser.get(f"{live_server.url}/jobs/{flash.pk}/result/")
    browser.find_element(By.ID, "compare-solutions-link").click()
    wait.until(lambda b: b.find_elements(By.ID, "other-runs-table"))
    assert violations_here(browser) == []
    browser.find_element(By.LINK_TEXT, "Side by side →").click()
    wait.until(lambda b: b.find_elements(By.ID, "figures-table"))
    assert browser.find_element(By.ID, "setting-algorithm").text == "Algorithm Flash Datafly"
    assert violations_here(browser) == []
