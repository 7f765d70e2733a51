"""The items preview (views.setvalued.items): the detected layout, records, distinct items, items per
record, repeated items and the item-frequency chart; the layout override; owner only."""

from __future__ import annotations

import json
import re

import pytest
from django.utils.html import escape
from setvalued_helpers import PAYMENTS, transaction_dataset

from anonymizer_app.models import Dataset

pytestmark = pytest.mark.django_db


def text_of(html: str, element_id: str) -> str:
    match = re.search(rf'id="{element_id}"[^>]*>(.*?)</', html, re.S)
    assert match, element_id
    return re.sub(r"\s+", " ", match.group(1)).strip()


def test_the_milk_example_s_figures(client_alice, user):
    ds = transaction_dataset(user)
    r = client_alice.get(f"/datasets/{ds.pk}/items/")
    html = r.content.decode()
    assert r.status_code == 200
    assert text_of(html, "layout") == "transactions: one record of items per line"
    assert (text_of(html, "item-delimiter"), text_of(html, "record-id")) == ("comma", "none")
    assert [text_of(html, f) for f in ("fig-records", "fig-items", "fig-per-record", "fig-repeated")] == [
        "4", "4", "2 / 2.75 / 3", "0"]
    rows = re.findall(r"<tr><td>([^<]*)</td><td class=\"num\">(\d+)</td></tr>", html)
    assert rows == [("feta", "3"), ("graviera", "3"), ("whole milk", "3"), ("chocolate milk", "2")]
    charts = json.loads(text_of(html.replace("</script>", "</x>"), "chart-data").replace("&quot;", '"'))
    assert charts["items"]["data"][0]["x"] == ["feta", "graviera", "whole milk", "chocolate milk"]
    assert charts["items"]["data"][0]["y"] == [3, 3, 3, 2]


def test_repeated_items_are_counted_and_the_rule_is_said(client_alice, user):
    ds = transaction_dataset(user, PAYMENTS, "payments.txt", record_id=True)
    html = client_alice.get(f"/datasets/{ds.pk}/items/").content.decode()
    assert text_of(html, "record-id") == "the first field of each line"
    assert [text_of(html, f) for f in ("fig-records", "fig-items", "fig-per-record", "fig-repeated")] == [
        "5", "4", "1 / 2.00 / 3", "2"]
    assert ("Repeated items (multisets): a record is anonymized and published as the set of its items: an item "
            "repeated in a record counts once (k^m-anonymity counts sets).") in html


def test_the_layout_can_be_overridden(client_alice, user):
    ds = transaction_dataset(user, PAYMENTS, "payments.txt", record_id=True)
    r = client_alice.post(f"/datasets/{ds.pk}/items/", {"layout": "transactions", "item_delimiter": "comma"})
    assert (r.status_code, r["Location"]) == (302, f"/datasets/{ds.pk}/items/")
    ds.refresh_from_db()
    assert (ds.record_id, ds.n_columns, ds.n_rows) == (False, 1, 5)
    html = client_alice.get(r["Location"]).content.decode()
    assert [text_of(html, f) for f in ("fig-items", "fig-per-record")] == ["9", "2 / 3.00 / 4"]  # the names are items now


def test_a_refused_override_changes_nothing(client_alice, user):
    ds = transaction_dataset(user)
    r = client_alice.post(f"/datasets/{ds.pk}/items/", {"layout": "transactions", "item_delimiter": "comma",
                                                        "record_id": "on"})
    assert r.status_code == 400
    assert escape("milk.txt: record id 'whole milk' is used twice") in r.content.decode()
    ds.refresh_from_db()
    assert (ds.record_id, ds.n_columns, ds.layout) == (False, 1, "transactions")


def test_item_labels_are_escaped(client_alice, user):
    ds = transaction_dataset(user, "<script>alert(1)</script>,b\n<script>alert(1)</script>,c,d\n", "x.txt")
    html = client_alice.get(f"/datasets/{ds.pk}/items/").content.decode()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_dataset_pages_of_a_transaction_dataset_lead_to_its_items(client_alice, user):
    ds = transaction_dataset(user)
    for page in ("", "columns/"):
        r = client_alice.get(f"/datasets/{ds.pk}/{page}")
        assert (r.status_code, r["Location"]) == (302, f"/datasets/{ds.pk}/items/")


def test_another_user_gets_404(client, other_user, user):
    ds = transaction_dataset(user)
    client.force_login(other_user)
    assert client.get(f"/datasets/{ds.pk}/items/").status_code == 404
    assert client.post(f"/datasets/{ds.pk}/items/", {"layout": "table", "item_delimiter": "comma"}).status_code == 404
    assert Dataset.objects.get().layout == "transactions"


def test_long_items_are_cut_in_the_tables(client_alice, user):
    long = 'a "quoted" <item> ' + "x" * 282  # 300 characters
    ds = transaction_dataset(user, f"{long},b\n{long},c\n", "long.txt")
    html = client_alice.get(f"/datasets/{ds.pk}/items/").content.decode()
    cut = f'<span class="cell-cut" title="300 characters; 100 shown">{escape(long[:100])}…</span>'
    top = html[html.index('id="top-items"'):]
    top = top[:top.index("</table>")]
    assert f"<td>{cut}</td>" in top and escape(long) not in top
    preview = html[html.index('id="items-preview"'):]
    preview = preview[:preview.index("</table>")]
    assert escape(long) not in preview
    assert preview.count('<span class="cell-cut" title="') == 2  # each record's cell, cut at 100
