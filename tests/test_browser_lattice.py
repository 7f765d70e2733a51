"""The solution lattice page in headless Chromium: plot, click on a node, its table and metrics, keep it.

A Flash job on the small table of anonymizer_helpers (8 records, QIs age/zip/sex) is created and run
with the services; the browser signs in with the session cookie of a test client. The click is plotly's
own event, emitted on the chart with the point's customdata (the node's index in the lattice JSON), as
a click on a WebGL point would send it.
"""

import io

import pandas as pd
import pytest
from anonymizer_helpers import make_dataset, queue_without_running, run_jobs_synchronously
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from anonymizer_app.models import Job, Result
from anonymizer_app.services import jobs, results

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def flash_job(user):
    dataset = make_dataset(user)
    # an l-diverse run: the lattice, the node view and "keep" must honour distinct 2-diversity too
    job = jobs.run_job(jobs.create_job(dataset, "flash", 2, 0.25, "disease", models=[
        {"model": "distinct-l-diversity", "l": 2, "column": "disease"}]))
    assert job.status == Job.SUCCEEDED, job.message
    return job


def _sign_in(browser, live_server, client, user):
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})


def _click_node(browser, levels: str) -> None:
    """Emit plotly_click for the node with these levels, as plotly does for a click on its marker."""
    browser.execute_script(
        """
        const chart = document.getElementById('lattice-chart');
        const trace = chart.data.find(t => (t.customdata || []).length);
        return fetch(arguments[1], {credentials: 'same-origin'}).then(r => r.json()).then(d => {
          const i = d.nodes.levels.indexOf(arguments[0]);
          chart.emit('plotly_click', {points: [{customdata: i, curveNumber: 0, pointNumber: 0, data: trace}]});
        });
        """,
        levels, browser.execute_script("return JSON.parse(document.getElementById('lattice-urls').textContent).data"))


def test_lattice_plot_click_node_and_keep(browser, live_server, client, user, flash_job, monkeypatch):
    run_jobs_synchronously(monkeypatch)  # "keep" queues a job; the live server's thread runs it at once here
    wait = WebDriverWait(browser, 60)
    _sign_in(browser, live_server, client, user)
    browser.get(f"{live_server.url}/jobs/{flash_job.pk}/lattice/")

    # The plot renders, with the lattice's summary (node count, optimum).
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#lattice-chart.js-plotly-plot .main-svg"))
    wait.until(lambda b: "nodes, optimum" in b.find_element(By.ID, "lattice-summary").text)
    optimum = browser.find_element(By.ID, "lattice-summary").text.rsplit(" ", 1)[-1]
    result_levels = results.transformation_key(Result.objects.get(job=flash_job).report)
    assert optimum == result_levels
    assert "Showing" in browser.find_element(By.ID, "lattice-status").text
    heights = [int(v) for v in browser.execute_script(
        "return fetch(JSON.parse(document.getElementById('lattice-urls').textContent).data)"
        ".then(r => r.json()).then(d => d.heights)")]
    assert len(heights) == 3

    # Click a node that is not the optimum: the top of the lattice (always anonymous).
    top = ",".join(str(h) for h in heights)
    assert top != optimum
    _click_node(browser, top)
    wait.until(lambda b: b.find_element(By.ID, "lattice-node").is_displayed())
    assert browser.find_element(By.ID, "node-levels").text == top
    wait.until(lambda b: b.find_element(By.ID, "node-compare").is_displayed())
    metrics = browser.find_element(By.ID, "node-metrics").text
    assert "Discernibility" in metrics and "Equivalence classes" in metrics
    levels_table = browser.find_element(By.ID, "node-transformation").text
    assert all(q in levels_table for q in ("age", "zip", "sex"))
    anonymized = browser.find_element(By.ID, "node-anonymized")
    rows = anonymized.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == 8
    assert "Ann" not in anonymized.text  # the identifying column is removed
    assert "Ann" in browser.find_element(By.ID, "node-original").text
    # the top generalizes every QI to its root: the age cell of the first row changed
    assert anonymized.find_elements(By.CSS_SELECTOR, "tbody td.changed")
    # each generalized cell carries a mark as well as its colour
    changed = anonymized.find_elements(By.CSS_SELECTOR, "tbody td.changed")
    assert all(td.find_elements(By.CSS_SELECTOR, "span.gen-mark[aria-hidden=true]") for td in changed)
    # the clicked node is marked on the plot
    assert browser.execute_script(
        "return document.getElementById('lattice-chart').data.some(t => t.name === 'clicked')")

    # Keep it: a new succeeded full-domain job with that transformation, and its result page.
    keep = browser.find_element(By.ID, "keep-button")
    assert keep.is_enabled()
    before = set(Job.objects.values_list("pk", flat=True))
    keep.click()
    wait.until(lambda b: set(Job.objects.values_list("pk", flat=True)) - before)
    new = Job.objects.exclude(pk__in=before).get()
    wait.until(lambda b: f"/jobs/{new.pk}/" in b.current_url)
    new.refresh_from_db()
    assert new.status == Job.SUCCEEDED, new.message
    assert new.algorithm == "full-domain" and new.models == flash_job.models
    assert new.options["levels"] == top
    assert results.transformation_key(Result.objects.get(job=new).report) == top
    # the kept node's CSV, recounted: every class 2-anonymous and distinct 2-diverse
    client.force_login(user)
    csv_text = client.get(f"/jobs/{new.pk}/result/anonymized.csv").content.decode()
    rows = pd.read_csv(io.StringIO(csv_text), dtype=str, keep_default_na=False)
    groups = rows.groupby([c for c in Result.objects.get(job=new).report["quasi_identifiers"]])["disease"]
    assert groups.size().min() >= 2 and groups.nunique().min() >= 2

    # Back on the lattice, the kept node links to its result.
    browser.get(f"{live_server.url}/jobs/{flash_job.pk}/lattice/")
    wait.until(lambda b: "nodes, optimum" in b.find_element(By.ID, "lattice-summary").text)
    _click_node(browser, top)
    link = browser.find_element(By.ID, "node-kept-link")
    wait.until(lambda b: link.is_displayed())
    assert link.get_attribute("href").rstrip("/").endswith(f"/jobs/{new.pk}/result")


def test_the_first_evaluation_shows_progress_then_the_lattice(browser, live_server, client, user, flash_job,
                                                              monkeypatch):
    """No stored lattice: the page draws the nodes the run's own search left tagged at once and shows a worker's
    progress (polling), then draws the whole lattice once the evaluation job (run here by the test, as a worker
    would) has written it."""
    queued = queue_without_running(monkeypatch)
    wait = WebDriverWait(browser, 60)
    _sign_in(browser, live_server, client, user)
    browser.get(f"{live_server.url}/jobs/{flash_job.pk}/lattice/")
    wait.until(lambda b: b.find_element(By.ID, "lattice-pending").is_displayed())
    assert browser.find_element(By.ID, "lattice-progress-phase").text == "waiting for a worker"
    wait.until(lambda b: "the run's search" in b.find_element(By.ID, "lattice-summary").text)  # the first view
    assert "as the run's search left it" in browser.find_element(By.ID, "lattice-status").text
    wait.until(lambda b: queued)
    evaluation = Job.objects.get(pk=queued[0])
    assert evaluation.kind == Job.LATTICE
    Job.objects.filter(pk=evaluation.pk).update(status=Job.RUNNING, progress=0.5, phase="evaluating the nodes")
    wait.until(lambda b: b.find_element(By.ID, "lattice-progress-percent").text == "50%")
    Job.objects.filter(pk=evaluation.pk).update(status=Job.QUEUED, progress=0.0)
    assert jobs.run_job(evaluation).status == Job.SUCCEEDED
    wait.until(lambda b: "the run's search" not in b.find_element(By.ID, "lattice-summary").text)
    assert "nodes, optimum" in browser.find_element(By.ID, "lattice-summary").text
    assert not browser.find_element(By.ID, "lattice-pending").is_displayed()
    assert len(queued) == 1
