"""The k^m run form of a transaction dataset (views.setvalued.run) and the set-valued part of the run form
of a table (views.jobs.run, mixed mode): algorithms from the engine's registry, hierarchies from the
owner's library, bad parameters refused at once naming the numbers, jobs run by the one handler."""

from __future__ import annotations

import re

import pytest
from anonymizer_helpers import make_dataset, queue_without_running, run_jobs_synchronously
from django.utils.html import escape
from setvalued_helpers import BASKETS, FOOD, item_hierarchy, transaction_dataset

from anonymizer_app.engine.setvalued import SET_ALGORITHMS
from anonymizer_app.models import Job
from anonymizer_app.services import setvalued

pytestmark = pytest.mark.django_db


def post(client, ds, **fields):
    return client.post(f"/datasets/{ds.pk}/run-items/", {"k": 2, "m": 2, "set_algorithm": "apriori",
                                                        "item_suppression": "on", **fields})


def test_the_form_offers_the_registry_s_algorithms_and_the_library(client_alice, user):
    ds = transaction_dataset(user)
    h = item_hierarchy(user)
    html = client_alice.get(f"/datasets/{ds.pk}/run-items/").content.decode()
    for name, algorithm in SET_ALGORITHMS.items():
        # Apriori chosen: a hierarchy of the library covers the items
        selected = " selected" if name == "apriori" else ""
        assert f'<option value="{name}"{selected}>{escape(algorithm.summary)}</option>' in html
        assert f"<dt>{escape(algorithm.label)}</dt><dd>{escape(algorithm.summary)}</dd>" in html
    assert f'<option value="{h.pk}">food</option>' in html


def test_a_run_is_queued_with_its_configuration(client_alice, user, monkeypatch):
    queued = queue_without_running(monkeypatch)
    ds = transaction_dataset(user)
    h = item_hierarchy(user)
    r = post(client_alice, ds, item_hierarchy=h.pk)
    job = Job.objects.get()
    assert (r.status_code, r["Location"], queued) == (302, f"/jobs/{job.pk}/", [job.pk])
    assert (job.kind, job.algorithm, job.k, job.options) == ("run", "apriori", 2, {"m": 2, "item_suppression": True})
    assert job.config["layout"] == "transactions" and job.config["item_delimiter"] == ","
    assert job.config["item_hierarchy"]["content"] == FOOD


def test_the_job_runs_through_the_pipeline_with_progress(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = transaction_dataset(user)
    post(client_alice, ds, item_hierarchy=item_hierarchy(user).pk)
    job = Job.objects.get()
    assert (job.status, job.progress, job.phase) == ("succeeded", 1.0, "done")
    assert job.result.report["generalization_rules"] == {"milk": ["chocolate milk", "whole milk"]}
    for page in (f"/jobs/{job.pk}/", "/jobs/", f"/datasets/{ds.pk}/run-items/"):
        assert client_alice.get(page).status_code == 200
    config = client_alice.get(f"/jobs/{job.pk}/config.json").json()
    assert (config["algorithm"], config["k"], config["options"]) == ("apriori", 2, {"m": 2, "item_suppression": True})


@pytest.mark.parametrize("fields,message", [
    ({"m": 4, "set_algorithm": "dynamic"},
     "m=4 is larger than the longest record (3 distinct items): no itemset of 4 items can occur; choose m <= 3"),
    ({"k": 5, "set_algorithm": "dynamic"}, "k=5 is larger than the dataset's 4 records"),
    ({"k": 0, "set_algorithm": "dynamic"}, "k must be at least 1, got 0"),
    ({"m": 0, "set_algorithm": "dynamic"}, "m must be at least 1, got 0"),
    ({}, "Apriori needs an item hierarchy: choose one (or dynamic hierarchies)"),
    ({"hierarchy": FOOD.replace("feta;cheese;*\n", "")},
     "item hierarchy 'food' has no item 'feta' (milk.txt, record 1)"),
    ({"hierarchy": FOOD.replace(";milk;", ";milk, dairy;")},
     "item hierarchy 'food': the generalized item 'milk, dairy' contains the item delimiter ','; choose a hierarchy "
     "whose labels do not"),
])
def test_bad_parameters_are_refused_at_once(client_alice, user, fields, message):
    ds = transaction_dataset(user)
    if "hierarchy" in fields:
        fields["item_hierarchy"] = item_hierarchy(user, fields.pop("hierarchy")).pk
    r = post(client_alice, ds, **fields)
    assert r.status_code == 400
    assert escape(message) in r.content.decode()
    assert Job.objects.count() == 0


@pytest.mark.parametrize("k,m,status,message", [
    (2, 1, 400, "k=2 is larger than the dataset's 1 record"),
    (1, 3, 302, None),  # k=1: every itemset of the one record occurs once, which is enough
    (1, 4, 400, "m=4 is larger than the longest record (3 distinct items): no itemset of 4 items can occur; "
                "choose m <= 3"),
])
def test_a_single_record(client_alice, user, monkeypatch, k, m, status, message):
    run_jobs_synchronously(monkeypatch)
    ds = transaction_dataset(user, "a,b,c\n", "one.txt")
    r = post(client_alice, ds, k=k, m=m, set_algorithm="dynamic")
    assert r.status_code == status
    if message:
        assert escape(message) in r.content.decode() and Job.objects.count() == 0
    else:
        job = Job.objects.get()
        assert job.status == "succeeded", job.message
        assert job.result.report["generalization_rules"] == {}


@pytest.mark.parametrize("text,k,m,records,rules,numeric", [
    # identical records: already k^m-anonymous for k up to their number
    ("a,b\na,b\na,b\n", 3, 2, 3, {}, False),
    # decimals declared numbers: the rare ones become a range; undeclared, a set (items are nominal by default)
    ("1.5,2.25\n1.5,2.25\n4.75\n10.0\n", 2, 1, 4, {"[4.75-10.0]": ["10.0", "4.75"]}, True),
    ("1.5,2.25\n1.5,2.25\n4.75\n10.0\n", 2, 1, 4, {"{10.0; 4.75}": ["10.0", "4.75"]}, False),
    # movie ids: digits, not an order; never a range such as [1023-1032] ("; " joins a set beside ",")
    ("1023,7\n1032,7\n7,50\n7,50\n", 2, 1, 4, {"{1023; 1032}": ["1023", "1032"]}, False),
    # spaces, quotes and unicode are items like any other
    ('big "red" apple,café\nbig "red" apple,日本\ncafé,日本\n', 2, 2, 3,
     {'{big "red" apple; café}': ['big "red" apple', "café"]}, False),  # then {group, 日本} is in 2 records
])
def test_other_items_run_through(client_alice, user, monkeypatch, text, k, m, records, rules, numeric):
    run_jobs_synchronously(monkeypatch)
    ds = transaction_dataset(user, text, "other.txt")
    extra = {"numeric_items": "on"} if numeric else {}
    assert post(client_alice, ds, k=k, m=m, set_algorithm="dynamic", **extra).status_code == 302
    job = Job.objects.get()
    assert job.status == "succeeded", job.message
    report = job.result.report
    assert (report["records"], report["generalization_rules"]) == (records, rules)
    assert report["metrics"]["km_smallest_support"] >= k
    assert client_alice.get(f"/jobs/{job.pk}/result/").status_code == 200


def test_the_table_run_page_sends_a_transaction_dataset_to_its_form(client_alice, user):
    ds = transaction_dataset(user)
    r = client_alice.get(f"/datasets/{ds.pk}/run/")
    assert (r.status_code, r["Location"]) == (302, f"/datasets/{ds.pk}/run-items/")


def test_another_user_gets_404(client, other_user, user):
    ds = transaction_dataset(user)
    client.force_login(other_user)
    assert client.get(f"/datasets/{ds.pk}/run-items/").status_code == 404
    assert post(client, ds, set_algorithm="dynamic").status_code == 404
    assert Job.objects.count() == 0


# ---- a table with a set-valued column: the run form's mixed mode ------------------------------------------------
def baskets(user):
    ds = make_dataset(user, BASKETS, "baskets.csv", roles={"id": "identifying", "age": "quasi-identifying",
                                                           "sex": "quasi-identifying"})
    setvalued.mark_set_column(ds, "basket", "|")
    return ds


def test_the_run_form_of_a_table_with_a_set_column_offers_k_m(client_alice, user):
    ds = baskets(user)
    html = client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
    assert 'id="set-column-run"' in html and "Set-valued column basket" in html
    assert 'name="set-m"' in html and 'name="set-set_algorithm"' in html


def test_mixed_mode_runs_k_m_within_every_class(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = baskets(user)
    r = client_alice.post(f"/datasets/{ds.pk}/run/", {"algorithm": "datafly", "k": 2, "suppression_percent": 0,
                                                      "set-m": 2, "set-set_algorithm": "dynamic"})
    job = Job.objects.get()
    assert r.status_code == 302 and job.status == "succeeded", job.message
    assert job.config["set_column"] == {"column": "basket", "delimiter": "|", "m": 2, "algorithm": "dynamic",
                                        "item_hierarchy": None}
    report = job.result.report["set_column"]
    assert report["km_holds"] is True and report["km_smallest_support_in_classes"] >= 2
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert 'id="set-column-result"' in html and 'id="chart-set-itemsets"' in html
    assert '<dd id="set-algorithm">Dynamic hierarchies</dd>' in html
    # every basket holds c: the most frequent itemset before and after
    assert report["frequent_itemsets"]["before"][0] == {"items": ["c"], "support": 12}
    assert report["frequent_itemsets"]["after"][0] == {"items": ["c"], "support": 12}


MILK_TABLE = ("id,age,sex,basket\n1,30,M,chocolate milk|graviera|feta\n2,30,M,whole milk|graviera\n"
              "3,30,M,whole milk|graviera|feta\n4,30,M,chocolate milk|whole milk|feta\n5,40,F,feta|graviera\n"
              "6,40,F,graviera|feta\n")


def test_mixed_mode_shows_the_set_column_s_ncp_and_support_error(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user, MILK_TABLE, "milk-table.csv", roles={"id": "identifying", "age": "quasi-identifying",
                                                                  "sex": "quasi-identifying"})
    setvalued.mark_set_column(ds, "basket", "|")
    food = item_hierarchy(user)
    r = client_alice.post(f"/datasets/{ds.pk}/run/", {"algorithm": "datafly", "k": 2, "suppression_percent": 0,
                                                      "set-m": 2, "set-set_algorithm": "apriori",
                                                      "set-item_hierarchy": food.pk})
    job = Job.objects.get()
    assert r.status_code == 302 and job.status == "succeeded", job.message
    report = job.result.report["set_column"]
    assert report["generalization_rules"] == {"milk": ["chocolate milk", "whole milk"]}
    # classes (30, M) and (40, F): the 5 milk occurrences of 15 cost 2/4 each; of the 10 itemsets of at most
    # 2 items, whole milk (estimated 4 * 1/2 = 2 of 3), {chocolate milk, graviera} (3 * 1/2 of 1) and the
    # three other pairs with a milk (3 * 1/2 of 2) are off
    assert report["ncp"] == pytest.approx(2.5 / 15, abs=1e-12)
    assert report["support_error"] == pytest.approx((1 / 3 + 0.5 + 3 * 0.25) / 10, abs=1e-12)
    assert report["support_error_itemsets"] == 10
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    # the figure catalogue's ratios (three decimals), as on the set-valued result page and the command line
    assert re.search(r'<dd id="set-ncp"[^>]*>0.167</dd>', html)
    assert re.search(r'<dd id="set-support-error"[^>]*>0.158</dd>', html)
    assert "Itemset-support error (10 top itemsets)" in html


def test_mixed_mode_cuts_long_items_in_the_set_column_s_rules(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    long = "an <item> & " + "x" * 288  # 300 characters, once in its class: merged with another item
    rows = [f"{long}|b", "b|c", "c|d", "d|b"]
    ds = make_dataset(user, "id,age,basket\n" + "".join(f"{i},30,{r}\n" for i, r in enumerate(rows)), "long.csv",
                      roles={"id": "identifying", "age": "quasi-identifying"})
    setvalued.mark_set_column(ds, "basket", "|")
    client_alice.post(f"/datasets/{ds.pk}/run/", {"algorithm": "datafly", "k": 2, "suppression_percent": 0,
                                                  "set-m": 1, "set-set_algorithm": "dynamic"})
    job = Job.objects.get()
    assert job.status == "succeeded", job.message
    group = next(label for label, items in job.result.report["set_column"]["generalization_rules"].items()
                 if long in items)
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    table = html[html.index('id="set-rules"'):]
    table = table[:table.index("</table>")]
    assert (f'<span class="value-chip"><span class="cell-cut" title="300 characters; 100 shown">'
            f'{escape(long[:100])}…</span></span>') in table
    assert (f'<span class="value-chip changed"><span class="cell-cut" title="{len(group):,} characters; 100 shown">'
            f'{escape(group[:100])}…</span></span>') in table
    assert escape(long) not in table


def test_mixed_mode_refuses_m_above_the_longest_cell(client_alice, user):
    ds = baskets(user)
    r = client_alice.post(f"/datasets/{ds.pk}/run/", {"algorithm": "datafly", "k": 2, "suppression_percent": 0,
                                                      "set-m": 4, "set-set_algorithm": "dynamic"})
    assert r.status_code == 200
    assert escape("m=4 is larger than the longest record (3 distinct items): no itemset of 4 items can occur; "
                  "choose m <= 3") in r.content.decode()
    assert Job.objects.count() == 0


def test_numeric_items_are_refused_when_an_item_is_not_a_number(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = transaction_dataset(user)  # the milk example: names
    r = post(client_alice, ds, set_algorithm="dynamic", numeric_items="on")
    assert r.status_code == 400
    assert "item &#x27;chocolate milk&#x27; is not a number" in r.content.decode()
    assert not Job.objects.exists()
