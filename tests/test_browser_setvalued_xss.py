"""Stored XSS on the set-valued pages in headless Chromium: items, dataset and file names that are script
payloads, on the items page (figures, item table, item-frequency chart hovered), the k^m run form, the
result page (rules, the hierarchy built, records side by side, frequent-itemset chart hovered) and a
mixed-mode result (the set column's rules and chart); no payload runs or becomes markup, each is shown
as text. The checks are those of test_browser_xss.py (window.__xss, the title, injected handlers)."""

from __future__ import annotations

import csv
import io

import pytest
import test_browser_xss as xss
from conftest import ALICE_PASSWORD
from selenium.webdriver.common.by import By

from anonymizer_app.engine import Format
from anonymizer_app.services import jobs, setvalued
from anonymizer_app.templatetags.cells import cut

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ITEMS = ["<script>window.__xss='i1'</script>", "<img src=x onerror=\"window.__xss='i2'\">",
         "<a href=\"javascript:window.__xss='i3'\">a</a>", "<b>bold</b>", "'-alert(1)-'"]
NAME = "<svg onload=\"window.__xss='name'\">"


def test_set_valued_payloads_stay_text(browser, live_server, user):
    # records of items separated by '|' (no payload holds one): each item in two records, pairs once
    records = [f"{ITEMS[i % 5]}|{ITEMS[(i + 1) % 5]}|plain" for i in range(10)]
    ds = setvalued.create_transaction_dataset(user, ("\n".join(records) + "\n").encode(), f"{NAME}.txt", "|", False,
                                              name=NAME)
    job = jobs.run_job(setvalued.create_set_job(ds, "dynamic", 3, 2, True, None))
    assert job.status == "succeeded", job.message
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([["id", "age", "basket"],
                                                    *([i, 30 + i % 2, records[i]] for i in range(10))])
    table = setvalued.datasets.create_dataset(user, buf.getvalue().encode(), "t.csv", name=NAME,
                                              fmt=Format("csv", ",", "utf-8", True))
    for column in table.columns.all():
        column.role = {"id": "identifying", "age": "quasi-identifying"}.get(column.name, "insensitive")
        column.save()
    setvalued.mark_set_column(table, "basket", "|")
    mixed = jobs.create_job(table, "datafly", 5, 0.0)
    mixed.config["set_column"] = setvalued.set_column_config(table, 5, 2, "dynamic")
    mixed.save()
    mixed = jobs.run_job(mixed)
    assert mixed.status == "succeeded", mixed.message
    # payloads inside generalized labels too
    assert any("<" in label for label in job.result.report["generalization_rules"])
    assert any("<" in label for label in mixed.result.report["set_column"]["generalization_rules"])

    pages = xss.Pages(browser, live_server.url)
    pages.get("/accounts/login/")
    xss._fill(browser, "username", "alice")
    xss._fill(browser, "password", ALICE_PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    pages.wait.until(lambda b: "/accounts/login/" not in b.current_url)

    pages.get("/")
    pages.check("datasets page", [NAME])
    pages.get(f"/datasets/{ds.pk}/items/")
    pages.check("items page", [NAME, *ITEMS])
    hovered = pages.hover("item chart", pages.plot("#chart-items"))
    assert all(item in hovered for item in ITEMS)
    pages.get(f"/datasets/{ds.pk}/run-items/")
    pages.check("run form", [NAME])
    pages.get(f"/jobs/{job.pk}/result/")
    text = pages.check("result page", ITEMS)
    assert all(cut(label)[0] in text for label in job.result.report["generalization_rules"])  # long ones cut
    pages.hover("itemset chart", pages.plot("#chart-itemsets"))
    pages.get(f"/datasets/{table.pk}/items/")
    pages.check("set column items page", ITEMS)
    pages.get(f"/datasets/{table.pk}/columns/")
    pages.check("columns page")
    pages.get(f"/jobs/{mixed.pk}/result/")
    pages.check("mixed result page", [cut(label)[0] for label in mixed.result.report["set_column"]["generalization_rules"]])
    pages.hover("set column chart", pages.plot("#chart-set-itemsets"))
    assert len(pages.visited) == 10 and pages.hovers > 0
