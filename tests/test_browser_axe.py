"""axe-core on every page in headless Chromium: no serious or critical accessibility violation.

axe-core 4.14.1 is vendored in tests/vendor/axe-core (from the npm registry; nothing is fetched at run time)
and injected through the DevTools protocol, so the Content-Security-Policy the pages send is untouched.
Jobs run synchronously with the services; the browser signs in with the session cookie of a test client.
"""

from pathlib import Path

import pytest
from anonymizer_helpers import make_dataset, people_dataset, run_jobs_synchronously
from selenium.webdriver.support.ui import WebDriverWait
from setvalued_helpers import item_hierarchy, transaction_dataset

from anonymizer_app.models import Job
from anonymizer_app.services import comparison, experiment, jobs, setvalued

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = (Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js").read_text(encoding="utf-8")
RUN_AXE = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations']}).then(
  (r) => done(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ') + ' :: ' + (n.failureSummary || '').slice(0, 300))}))),
  (e) => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));
"""


@pytest.fixture
def pages(user, monkeypatch) -> list[str]:
    run_jobs_synchronously(monkeypatch)
    small = make_dataset(user)
    people = people_dataset(user)
    datafly = jobs.run_job(jobs.create_job(small, "datafly", 2, 0.25, "disease"))
    flash = jobs.run_job(jobs.create_job(small, "flash", 2, 0.25, "disease", {"keep_lattice": "yes"}))
    compared = jobs.run_job(comparison.create_comparison(small, ["datafly", "mondrian"], [2, 3]))
    tried = jobs.run_job(experiment.create_experiment(small, [50], 0, False, [2], "datafly"))
    queued = jobs.create_job(small, "datafly", 3, 0.0, "disease")
    milk = transaction_dataset(user)
    apriori = jobs.run_job(setvalued.create_set_job(milk, "apriori", 2, 2, True, item_hierarchy(user)))
    for job in (datafly, flash, compared, tried, apriori):
        assert job.status == Job.SUCCEEDED, job.message
    city = people.columns.get(name="city_birth")
    age = small.columns.get(name="age")
    return [
        "/",
        f"/datasets/{small.pk}/",
        f"/datasets/{small.pk}/columns/",
        f"/datasets/{small.pk}/run/",
        f"/datasets/{small.pk}/run/?from={datafly.pk}",
        f"/datasets/{small.pk}/compare/",
        f"/datasets/{small.pk}/experiment/",
        f"/datasets/{small.pk}/risk/",
        f"/datasets/{small.pk}/dp/",
        "/jobs/",
        f"/jobs/{queued.pk}/",
        f"/jobs/{datafly.pk}/",
        f"/jobs/{datafly.pk}/result/",
        f"/jobs/{flash.pk}/result/",
        f"/jobs/{datafly.pk}/result/risk/",
        f"/jobs/{datafly.pk}/result/release-report/",
        f"/jobs/{flash.pk}/lattice/",
        f"/jobs/{compared.pk}/comparison/",
        f"/jobs/{tried.pk}/experiment/",
        f"/datasets/{milk.pk}/items/",
        f"/datasets/{milk.pk}/run-items/",
        f"/jobs/{apriori.pk}/result/",
        "/hierarchies/",
        "/hierarchies/upload/",
        f"/hierarchies/{city.hierarchy_id}/",
        f"/hierarchies/dataset/{people.pk}/column/{city.pk}/",
        f"/hierarchies/dataset/{small.pk}/column/{age.pk}/build/",
        f"/hierarchies/dataset/{small.pk}/column/{age.pk}/",  # a default hierarchy: its help, "Edit the tree"
        f"/hierarchies/{city.hierarchy_id}/edit/",
        "/accounts/account/",
        "/definitions/",
        "/no/such/page/",
    ]


def _violations(browser, url: str) -> list[dict]:
    browser.get(url)
    WebDriverWait(browser, 30).until(lambda b: b.execute_script("return document.readyState") == "complete")
    return violations_here(browser)


def violations_here(browser) -> list[dict]:
    """axe-core's serious and critical violations on the page the browser shows now (after clicks and waits)."""
    browser.execute_script(AXE)
    browser.set_script_timeout(60)
    return browser.execute_async_script(RUN_AXE)


def _report(found: dict) -> str:
    lines = []
    for path, violations in found.items():
        for v in violations:
            lines.append(f"{path}: {v['impact']} {v['id']}: {v['help']}")
            lines += [f"    {n}" for n in v["nodes"]]
    return "\n".join(lines)


def test_every_signed_in_page_has_no_serious_violation(browser, live_server, client, user, pages):
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    found = {}
    for path in pages:
        violations = _violations(browser, live_server.url + path)
        if violations:
            found[path] = violations
    assert not found, "\n" + _report(found)


def test_the_signed_out_pages_have_no_serious_violation(browser, live_server):
    found = {}
    for path in ("/accounts/login/", "/accounts/signup/"):
        violations = _violations(browser, live_server.url + path)
        if violations:
            found[path] = violations
    assert not found, "\n" + _report(found)
