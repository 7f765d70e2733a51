"""The result page of a transaction dataset's k^m run (views.setvalued.result_page, reached through
views.results.result): the seeds' worked examples exactly (cards, rules, records side by side with the
changed items highlighted, the frequent-itemset chart), owner only."""

from __future__ import annotations

import json
import re

import pytest
from django.utils.html import escape
from setvalued_helpers import FIGURE_22, PAYMENTS, TABLE_19, item_hierarchy, transaction_dataset

from anonymizer_app.models import Job
from anonymizer_app.services import jobs, setvalued

pytestmark = pytest.mark.django_db


def finished(ds, algorithm: str = "apriori", k: int = 2, m: int = 2, hierarchy=None) -> Job:
    return jobs.run_job(setvalued.create_set_job(ds, algorithm, k, m, True, hierarchy))


def card(html: str, card_id: str) -> str:
    match = re.search(rf'id="{card_id}">.*?class="stat-value">([^<]*)<', html, re.S)
    assert match, card_id
    return match.group(1).strip()


def chips(cell: str) -> list[tuple[str, bool]]:
    return [(text, "changed" in cls) for cls, text in re.findall(r'<span class="value-chip([^"]*)">([^<]*)</span>', cell)]


def records(html: str) -> list[tuple]:
    body = html[html.index('id="records"'):]
    body = body[:body.index("</table>")]
    out = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)[1:]:
        before = re.search(r'class="items-before">(.*?)</td>', row, re.S).group(1)
        after = re.search(r'class="items-after">(.*?)</td>', row, re.S).group(1)
        out.append((chips(before), chips(after)))
    return out


def test_the_milk_example_at_k_2_m_2(client_alice, user):
    ds = transaction_dataset(user)
    job = finished(ds, hierarchy=item_hierarchy(user))
    r = client_alice.get(f"/jobs/{job.pk}/result/")
    html = r.content.decode()
    assert r.status_code == 200
    assert [card(html, c) for c in ("card-k", "card-m", "card-km", "card-generalized", "card-suppressed")] == [
        "2", "2", "2", "2", "0"]
    assert "<h1>Result: Apriori (AA), k=2, m=2</h1>" in html  # the registry's short label
    rules = html[html.index('id="rules"'):html.index("</table>", html.index('id="rules"'))]
    assert re.findall(r'<span class="value-chip[^"]*">([^<]*)</span>', rules) == ["chocolate milk", "whole milk", "milk"]
    m, c, w = ("milk", True), ("chocolate milk", True), ("whole milk", True)
    g, f = ("graviera", False), ("feta", False)
    assert records(html) == [([c, g, f], [m, g, f]), ([w, g], [m, g]), ([w, g, f], [m, g, f]), ([c, w, f], [m, f])]
    data = json.loads(re.search(r'id="chart-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    # like with like: each original itemset's true support beside its estimate from the release, where
    # {milk} (4 records) covers 2 items, so {whole milk} and {chocolate milk} are estimated 4 x 1/2 = 2
    true, estimated = data["itemsets"]["data"]
    assert true["x"] == estimated["x"]
    pairs = {x: (t, e) for x, t, e in zip(true["x"], true["y"], estimated["y"])}
    assert pairs["{feta}"] == (3, 3.0) and pairs["{graviera}"] == (3, 3.0)
    assert pairs["{whole milk}"] == (3, 2.0) and pairs["{chocolate milk}"] == (2, 2.0)
    assert pairs["{feta, graviera}"] == (2, 2.0)  # neither item generalized
    assert pairs["{chocolate milk, whole milk}"] == (1, 4 * 0.5 * 0.5)  # both map to {milk}: 4 x 1/2 x 1/2
    assert card(html, "card-changed") == "45.5%"  # milk replaced 5 of the 11 item occurrences (2 + 3)
    assert "NCP against the item hierarchy" in html
    assert re.search(r'id="figure-support-error">.*?Itemset-support error.*?what frequent-pattern mining', html,
                     re.S | re.I)


def test_the_charts_are_valid_plotly_figures(client_alice, user):
    """Written as plain dicts (views/items_charts.py); plotly's validation gives each back unchanged."""
    import plotly.graph_objects as go

    ds = transaction_dataset(user)
    job = finished(ds, hierarchy=item_hierarchy(user))
    pages = [client_alice.get(f"/jobs/{job.pk}/result/"), client_alice.get(f"/datasets/{ds.pk}/items/")]
    figures = [json.loads(re.search(r'id="chart-data" type="application/json">(.*?)</script>', r.content.decode(),
                                    re.S).group(1)) for r in pages]
    for figure in (figures[0]["itemsets"], figures[1]["items"]):
        assert json.loads(go.Figure(figure).to_json()) == figure


def test_seed_003_table_19_becomes_table_20_with_its_ids(client_alice, user):
    ds = transaction_dataset(user, TABLE_19, "t19.txt", record_id=True)
    job = finished(ds, hierarchy=item_hierarchy(user, FIGURE_22, "figure 22"))
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert [[x for x, _ in after] for _, after in records(html)] == [["A", "b1", "b2"], ["A", "b1"], ["A", "b1", "b2"],
                                                                    ["A", "b2"]]
    assert re.findall(r"<td>(t\d)</td>", html) == ["t1", "t2", "t3", "t4"]


def test_seed_003_table_16_with_a_dynamic_hierarchy_becomes_table_18(client_alice, user):
    ds = transaction_dataset(user, PAYMENTS, "payments.txt", record_id=True)
    job = jobs.run_job(setvalued.create_set_job(ds, "dynamic", 2, 2, True, None, numeric_items=True))
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert [[x for x, _ in after] for _, after in records(html)] == [
        ["11000", "[20000-30500]", "40000"], ["11000", "[20000-30500]", "40000"], ["11000", "40000"], ["11000"],
        ["[20000-30500]"]]
    assert 'id="hierarchy-built"' in html and "<td>30500</td><td>[20000-30500]</td><td>*</td>" in html
    assert "2 record(s) repeated an item" in html
    # its NCP is labelled as the groups' and said not comparable with Apriori's; the comparable figure:
    # records as sets hold 3 + 3 + 2 + 1 + 1 = 10 occurrences; 20000 (John, Mark) and 30500 (Mary) became
    # [20000-30500]: 3 of 10
    assert "NCP of the groups built (dynamic hierarchies)" in html and "NCP against the item hierarchy" not in html
    assert "not comparable with an Apriori run" in html
    assert card(html, "card-changed") == "30%"


def test_item_labels_are_escaped_on_the_result_page(client_alice, user):
    ds = transaction_dataset(user, "<b>x</b>,y\n<b>x</b>,y,z\n", "x.txt")
    job = finished(ds, "dynamic", m=1)
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert "<b>x</b>" not in html.replace('id="chart-data"', "")
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    data = json.loads(re.search(r'id="chart-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert "{&lt;b&gt;x&lt;/b&gt;}" in data["itemsets"]["data"][0]["x"]  # plotly draws it as text


def test_another_user_gets_404(client, other_user, user):
    job = finished(transaction_dataset(user), "dynamic")
    client.force_login(other_user)
    assert client.get(f"/jobs/{job.pk}/result/").status_code == 404


def test_long_items_are_cut_in_the_rules_and_the_records(client_alice, user):
    long = 'a "quoted" <item> ' + "x" * 282  # 300 characters, once in the data: merged with another item
    ds = transaction_dataset(user, f"{long},b\nb,c\nc,d\nd,b\n", "long.txt")
    job = finished(ds, "dynamic", m=1)
    rules = job.result.report["generalization_rules"]
    group = next(label for label, items in rules.items() if long in items)
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    cut_item = f'<span class="cell-cut" title="300 characters; 100 shown">{escape(long[:100])}…</span>'
    cut_group = (f'<span class="cell-cut" title="{len(group):,} characters; 100 shown">{escape(group[:100])}…'
                 f'</span>')
    table = html[html.index('id="rules"'):]
    table = table[:table.index("</table>")]
    assert f'<span class="value-chip">{cut_item}</span>' in table
    assert f'<span class="value-chip changed">{cut_group}</span>' in table
    assert escape(long) not in table
    body = html[html.index('id="records"'):]
    body = body[:body.index("</table>")]
    assert f'<span class="value-chip changed">{cut_item}</span>' in body  # before: the item changed
    assert f'<span class="value-chip changed">{cut_group}</span>' in body  # after: its group
    assert escape(long) not in body


def test_the_release_report_of_a_set_valued_result(client_alice, client, other_user, user):
    ds = transaction_dataset(user)
    job = finished(ds, hierarchy=item_hierarchy(user))
    page = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert f'href="/jobs/{job.pk}/result/items-release-report/"' in page
    r = client_alice.get(f"/jobs/{job.pk}/result/items-release-report/")
    html = r.content.decode()
    assert r.status_code == 200
    assert "<h1>milk: Apriori (AA), k=2, m=2</h1>" in html and "✓ Verified." in html
    assert "<strong>m = 2</strong>" in html and "(smallest support found: <strong>2</strong>)" in html
    assert "food (from the library, kept with the run)" in html
    assert "1 group covering 2 items" in html
    assert re.search(r'id="report-figure-changed"><th scope="row">Item occurrences changed</th><td class="num">45.5%',
                     html)
    # the milk example's supports: {whole milk} 3 in the original, 4 x 1/2 = 2.0 estimated from {milk}
    assert "<tr><td>whole milk</td><td class=\"num\">3</td><td class=\"num\">2.0</td></tr>" in html
    client.force_login(other_user)
    assert client.get(f"/jobs/{job.pk}/result/items-release-report/").status_code == 404


def test_the_set_valued_release_report_as_pdf(client_alice, user):
    pytest.importorskip("weasyprint")
    job = finished(transaction_dataset(user), hierarchy=item_hierarchy(user))
    r = client_alice.get(f"/jobs/{job.pk}/result/items-release-report.pdf")
    assert r.status_code == 200 and r.content.startswith(b"%PDF")
    assert "milk-apriori-k2-m2-release-report.pdf" in r["Content-Disposition"]
