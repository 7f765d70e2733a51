"""Every page under the Content-Security-Policy in headless Chromium: no violation, and each page's own
scripts still run (plotly charts drawn, the lattice on WebGL, the editor's sunburst, the upload zone).

The policy is the one the server sends (django-csp, settings.CONTENT_SECURITY_POLICY); a listener installed
before any page script records every `securitypolicyviolation` event. Jobs run synchronously with the
services, as in test_browser_lattice.py; the browser signs in with the session cookie of a test client.
"""

import pytest
from anonymizer_helpers import make_dataset, people_dataset, run_jobs_synchronously
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from anonymizer_app.models import Job
from anonymizer_app.services import comparison, experiment, jobs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CSP_LISTENER = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(
  {directive: e.violatedDirective, blocked: e.blockedURI, source: e.sourceFile, line: e.lineNumber}));
"""
PLOTS = "return document.querySelectorAll('.js-plotly-plot .main-svg').length"


@pytest.fixture
def pages(user, monkeypatch) -> list[tuple[str, str]]:
    """(path, what shows that the page's scripts ran) for every kind of page."""
    run_jobs_synchronously(monkeypatch)  # the lattice page asks a worker to evaluate the lattice
    small = make_dataset(user)
    people = people_dataset(user)
    datafly = jobs.run_job(jobs.create_job(small, "datafly", 2, 0.25, "disease"))
    flash = jobs.run_job(jobs.create_job(small, "flash", 2, 0.25, "disease"))
    compared = jobs.run_job(comparison.create_comparison(small, ["datafly", "mondrian"], [2, 3]))
    tried = jobs.run_job(experiment.create_experiment(small, [50], 0, False, [2], "datafly"))
    for job in (datafly, flash, compared, tried):
        assert job.status == Job.SUCCEEDED, job.message
    city = people.columns.get(name="city_birth")
    age = small.columns.get(name="age")
    return [
        ("/", "return !!document.getElementById('dropzone')"),
        (f"/datasets/{small.pk}/", "return true"),
        (f"/datasets/{small.pk}/columns/", "return true"),
        (f"/datasets/{small.pk}/run/", "return true"),
        (f"/datasets/{small.pk}/compare/", "return true"),
        (f"/datasets/{small.pk}/experiment/", "return true"),
        ("/jobs/", "return true"),
        (f"/jobs/{datafly.pk}/", "return true"),
        (f"/jobs/{datafly.pk}/result/", PLOTS + " >= 1"),
        (f"/datasets/{small.pk}/risk/", PLOTS + " >= 1"),  # the risk bands, drawn by static/js/risk.js
        (f"/jobs/{datafly.pk}/result/risk/", PLOTS + " >= 1"),
        (f"/jobs/{flash.pk}/lattice/",
         "return document.getElementById('lattice-summary').textContent.includes('nodes, optimum') && "
         # the nodes: SVG markers (WebGL's canvas only above 3,000 visible nodes, static/js/lattice.js)
         "document.querySelectorAll('#lattice-chart .scatterlayer .point, #lattice-chart .gl-canvas').length >= 1"),
        (f"/jobs/{compared.pk}/comparison/", PLOTS + " >= 1"),
        (f"/jobs/{tried.pk}/experiment/", PLOTS + " >= 1"),
        ("/hierarchies/", "return true"),
        (f"/hierarchies/{city.hierarchy_id}/", "return true"),
        (f"/hierarchies/dataset/{people.pk}/column/{city.pk}/", "return true"),
        (f"/hierarchies/dataset/{small.pk}/column/{age.pk}/build/", "return true"),
        # the editor: its tree and the sunburst (plotly)
        (f"/hierarchies/{city.hierarchy_id}/edit/", PLOTS + " >= 1"),
        ("/accounts/account/", "return true"),
        ("/no/such/page/", "return document.querySelector('h1').textContent === 'Not found'"),
    ]


def test_every_page_runs_under_the_policy_without_a_violation(browser, live_server, client, user, pages):
    client.force_login(user)
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CSP_LISTENER})
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    wait = WebDriverWait(browser, 30)
    for path, ready in pages:
        browser.get(live_server.url + path)
        wait.until(lambda b: b.execute_script("return document.readyState") == "complete")
        try:
            wait.until(lambda b, ready=ready: b.execute_script(ready))
        except Exception as exc:
            raise AssertionError(f"{path}: its scripts did not finish ({ready}); CSP violations: "
                                 f"{browser.execute_script('return window.__csp')}") from exc
        assert browser.find_elements(By.CSS_SELECTOR, "main h1, main h2"), path
        violations = browser.execute_script("return window.__csp")
        assert violations == [], (path, violations)
