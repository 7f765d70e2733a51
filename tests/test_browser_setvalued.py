"""Set-valued data in headless Chromium against pytest-django's live server: upload a transaction file
(seed 002's milk example) and a table with a set-valued column, run both (the transaction file by Apriori
with an item hierarchy, the table by Datafly with k^m on the set column), review both results: rules
shown, changed items highlighted, charts drawn, downloads served.

As in test_browser_flow.py, jobs go through Celery in eager mode (the task runs inside the request: the
same task, handler and pipeline a worker runs), because the live server's test database is not visible
to a separate worker process.
"""

from __future__ import annotations

import browser_flow
import pytest
from browser_flow import fill
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from setvalued_helpers import BASKETS, MILK, item_hierarchy

from anonymizer_app.models import Column, Dataset, Job

eager_celery = browser_flow.eager_celery  # the fixture
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _fetch(browser, url: str) -> tuple[int, str]:
    """A download as the signed-in browser gets it (same origin, its session cookie)."""
    return tuple(browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch(arguments[0], {credentials: 'same-origin'}).then(r => r.text().then(t => done([r.status, t])));", url))


def _upload_items(browser, wait, path) -> None:
    form = browser.find_element(By.ID, "upload-items-form")
    form.find_element(By.CSS_SELECTOR, "input[type=file]").send_keys(str(path))
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait.until(lambda b: b.current_url.endswith("/items/"))


def _to_result(browser, wait) -> None:
    wait.until(lambda b: "/result/" in b.current_url or b.find_elements(By.ID, "result-link"))
    if "/result/" not in browser.current_url:
        browser.find_element(By.ID, "result-link").click()
        wait.until(lambda b: "/result/" in b.current_url)


def _plots(browser) -> int:
    return browser.execute_script("return document.querySelectorAll('.js-plotly-plot').length")


def test_transactions_and_a_set_column_from_upload_to_result(browser, live_server, eager_celery, user, tmp_path):
    from conftest import ALICE_PASSWORD

    base = live_server.url
    wait = WebDriverWait(browser, 60)
    food = item_hierarchy(user)  # the item hierarchy in alice's library
    browser.get(f"{base}/accounts/login/")
    fill(browser, username="alice", password=ALICE_PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    wait.until(lambda b: "/accounts/login/" not in b.current_url)

    # 1. the transaction file: detected, previewed with its item chart
    (tmp_path / "milk.txt").write_text(MILK)
    browser.get(f"{base}/")
    _upload_items(browser, wait, tmp_path / "milk.txt")
    assert browser.find_element(By.ID, "layout").text == "transactions: one record of items per line"
    assert browser.find_element(By.ID, "fig-records").text == "4"
    assert browser.find_element(By.ID, "fig-per-record").text == "2 / 2.75 / 3"
    wait.until(lambda b: _plots(b) == 1)
    milk = Dataset.objects.get(owner=user, layout="transactions")

    # its k^m run: Apriori with the food hierarchy, k=2, m=2
    browser.get(f"{base}/datasets/{milk.pk}/run-items/")
    fill(browser, k="2", m="2")
    Select(browser.find_element(By.NAME, "set_algorithm")).select_by_value("apriori")
    Select(browser.find_element(By.NAME, "item_hierarchy")).select_by_value(str(food.pk))
    browser.find_element(By.CSS_SELECTOR, "#run-items-form button[type=submit]").click()
    _to_result(browser, wait)
    job = Job.objects.get(dataset=milk)
    assert job.status == "succeeded", job.message
    rules = browser.find_element(By.ID, "rules").text
    assert "chocolate milk" in rules and "whole milk" in rules and "milk" in rules
    changed = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".items-after .value-chip.changed")]
    assert changed == ["milk", "milk", "milk", "milk"]
    assert browser.find_element(By.ID, "card-km").find_element(By.CLASS_NAME, "stat-value").text == "2"
    wait.until(lambda b: _plots(b) == 1)  # the frequent-itemset chart
    assert _fetch(browser, f"{base}/jobs/{job.pk}/result/records.txt") == (
        200, "milk,graviera,feta\nmilk,graviera\nmilk,graviera,feta\nmilk,feta\n")
    assert _fetch(browser, f"{base}/jobs/{job.pk}/result/item-rules.csv") == (200, "chocolate milk;milk\nwhole milk;milk\n")

    # 2. the table with a set-valued column: detected, roles set, Datafly k=3 with 3^2 on the baskets
    (tmp_path / "baskets.csv").write_text(BASKETS)
    browser.get(f"{base}/")
    _upload_items(browser, wait, tmp_path / "baskets.csv")
    assert browser.find_element(By.ID, "set-column-name").text == "basket"
    table = Dataset.objects.get(owner=user, layout="table")
    browser.get(f"{base}/datasets/{table.pk}/columns/")
    roles = {"id": "identifying", "age": "quasi-identifying", "sex": "quasi-identifying", "basket": "insensitive"}
    for column in Column.objects.filter(dataset=table):
        Select(browser.find_element(By.ID, f"col-{column.position}-role")).select_by_value(roles[column.name])
    browser.find_element(By.CSS_SELECTOR, "#columns-form button[type=submit]").click()
    wait.until(lambda b: Column.objects.filter(dataset=table, role="quasi-identifying").count() == 2)
    browser.get(f"{base}/datasets/{table.pk}/run/")
    Select(browser.find_element(By.NAME, "algorithm")).select_by_value("datafly")
    fill(browser, k="3", **{"set-m": "2"})
    Select(browser.find_element(By.NAME, "set-set_algorithm")).select_by_value("dynamic")
    browser.find_element(By.CSS_SELECTOR, "#run-form button[type=submit]").click()
    _to_result(browser, wait)
    job = Job.objects.get(dataset=table)
    assert job.status == "succeeded", job.message
    report = job.result.report["set_column"]
    section = browser.find_element(By.ID, "set-column-result").text
    assert "Set-valued column basket: 3^2-anonymous in every class" in section
    assert report["km_holds"] is True and report["generalization_rules"], report
    assert browser.find_element(By.ID, "set-km").text == str(report["km_smallest_support_in_classes"])
    shown = browser.find_element(By.ID, "set-rules").text
    assert all(label in shown for label in report["generalization_rules"])
    assert browser.find_elements(By.CSS_SELECTOR, "td.changed"), "generalized cells are highlighted"
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#chart-set-itemsets.js-plotly-plot"))
    status, text = _fetch(browser, f"{base}/jobs/{job.pk}/result/item-rules.csv")
    assert status == 200 and text.count("\n") == sum(len(v) for v in report["generalization_rules"].values())
    status, csv_text = _fetch(browser, f"{base}/jobs/{job.pk}/result/anonymized.csv")
    assert status == 200 and csv_text.splitlines()[0] == "age,sex,basket"
