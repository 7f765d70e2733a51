"""Item hierarchies on the items page (views.setvalued.build_hierarchy, upload_hierarchy): built from the
items (grouping by frequency or alphabetically with a fanout, numeric intervals) or uploaded in any
supported format, into the library (whose tree editor opens them); an item missing from an upload is
named with its record; owner only."""

from __future__ import annotations

import re

import pytest
from anonymizer_helpers import make_dataset
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils.html import escape
from setvalued_helpers import BASKETS, FOOD, PAYMENTS, item_hierarchy, transaction_dataset

from anonymizer_app.services import setvalued
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db


def build(client, ds, **fields):
    return client.post(f"/datasets/{ds.pk}/item-hierarchy/build/", {"kind": "grouping", "order": "frequency",
                                                                    "fanout": "2", **fields})


def test_items_grouped_by_frequency_go_to_the_library(client_alice, user):
    ds = transaction_dataset(user)
    r = build(client_alice, ds)
    h = Hierarchy.objects.get()
    assert (r.status_code, r["Location"]) == (302, f"/hierarchies/{h.pk}/")
    assert (h.owner, h.name, h.leaves, h.height) == (user, "milk items (grouping)", 4, 2)
    assert h.to_engine().to_rows() == [["feta", "{feta, graviera}", "*"], ["graviera", "{feta, graviera}", "*"],
                                       ["whole milk", "{whole milk, chocolate milk}", "*"],
                                       ["chocolate milk", "{whole milk, chocolate milk}", "*"]]
    assert client_alice.get(f"/hierarchies/{h.pk}/edit/").status_code == 302  # the tree editor opens it


def test_numeric_items_as_intervals(client_alice, user):
    ds = transaction_dataset(user, PAYMENTS, "payments.txt", record_id=True)
    build(client_alice, ds, kind="intervals", width="20000", name="payments")
    h = Hierarchy.objects.get(name="payments")
    assert [row[:2] for row in h.to_engine().to_rows()] == [["11000", "[0-20000)"], ["20000", "[20000-40000)"],
                                                            ["30500", "[20000-40000)"], ["40000", "[40000-60000)"]]


def test_a_set_valued_column_s_items_alphabetically(client_alice, user):
    ds = make_dataset(user, BASKETS, "baskets.csv")
    setvalued.mark_set_column(ds, "basket", "|")
    build(client_alice, ds, order="alphabetical", fanout="3")
    assert [row[1] for row in Hierarchy.objects.get().to_engine().to_rows()] == [
        "{a0, a1, a2}", "{a0, a1, a2}", "{a0, a1, a2}", "{b0, b1, c}", "{b0, b1, c}", "{b0, b1, c}"]


def test_an_uploaded_hierarchy_covering_the_items(client_alice, user):
    ds = transaction_dataset(user)
    r = client_alice.post(f"/datasets/{ds.pk}/item-hierarchy/upload/",
                          {"file": SimpleUploadedFile("food.csv", FOOD.encode())})
    h = Hierarchy.objects.get()
    # back to the dataset's items page, the hierarchy bound: chosen on its run form
    assert (r.status_code, r["Location"], h.name, h.leaves) == (302, f"/datasets/{ds.pk}/items/#item-hierarchies",
                                                                "food", 4)
    page = client_alice.get(f"/datasets/{ds.pk}/items/").content.decode()
    assert 'id="bound-hierarchy"' in page and "<strong>food</strong>" in page
    form = client_alice.get(f"/datasets/{ds.pk}/run-items/").content.decode()
    assert re.search(rf'<option value="{h.pk}" selected>food</option>', form)


def test_the_run_form_offers_only_the_hierarchies_covering_the_items(client_alice, user):
    ds = transaction_dataset(user)
    food = item_hierarchy(user)
    item_hierarchy(user, "Bachelors;Higher;*\nHS-grad;Lower;*\n", "education")  # a relational one
    item_hierarchy(user, FOOD.replace("feta;cheese;*\n", ""), "food without feta")  # misses an item
    form = client_alice.get(f"/datasets/{ds.pk}/run-items/").content.decode()
    options = re.findall(r'<option value="(\d*)"[^>]*>([^<]*)</option>', form)
    assert [name for pk, name in options if pk] == ["food"] and (str(food.pk), "food") in options
    page = client_alice.get(f"/datasets/{ds.pk}/items/").content.decode()
    listed = page[page.index('id="item-library"'):]
    assert "food</a>" in listed and "education" not in listed and "without feta" not in listed
    other = transaction_dataset(user, "x,y\nx,y\n", "xy.txt")  # no hierarchy covers it
    form = client_alice.get(f"/datasets/{other.pk}/run-items/").content.decode()
    assert "None of your hierarchies covers this dataset" in form


@pytest.mark.parametrize("text,message", [
    (FOOD.replace("feta;cheese;*\n", ""), "item hierarchy 'food' has no item 'feta' (milk.txt, record 1)"),
    ("chocolate milk;milk;*\nwhole milk;milk\n", "food.csv"),
])
def test_a_bad_upload_is_refused_and_nothing_stored(client_alice, user, text, message):
    ds = transaction_dataset(user)
    r = client_alice.post(f"/datasets/{ds.pk}/item-hierarchy/upload/",
                          {"file": SimpleUploadedFile("food.csv", text.encode())})
    assert r.status_code == 400
    assert escape(message) in r.content.decode()
    assert Hierarchy.objects.count() == 0


def test_a_table_without_a_set_column_is_told_so(client_alice, user):
    ds = make_dataset(user)
    r = build(client_alice, ds)
    assert r.status_code == 400 and "no set-valued column: mark one first" in r.content.decode()
    assert Hierarchy.objects.count() == 0


def test_another_user_gets_404(client, other_user, user):
    ds = transaction_dataset(user)
    client.force_login(other_user)
    assert build(client, ds).status_code == 404
    assert client.post(f"/datasets/{ds.pk}/item-hierarchy/upload/",
                       {"file": SimpleUploadedFile("food.csv", FOOD.encode())}).status_code == 404
    assert Hierarchy.objects.count() == 0


def test_movie_ids_are_grouped_as_sets_by_frequency_never_as_ranges(client_alice, user):
    # ids: 7 in 4 records, 50 in 3, then 1000, 1023, 1032, 99 once each; fanout 2, then 2 again
    ds = transaction_dataset(user, "1023,7,50\n1032,7\n7,50,99\n7,50,1000\n", "liked.txt")
    assert build(client_alice, ds).status_code == 302  # the form's defaults: grouping by frequency, fanout 2
    rows = Hierarchy.objects.get().to_engine().to_rows()
    assert rows == [["7", "{7, 50}", "{7, 50, … +2}", "*"], ["50", "{7, 50}", "{7, 50, … +2}", "*"],
                    ["1000", "{1000, 1023}", "{7, 50, … +2}", "*"], ["1023", "{1000, 1023}", "{7, 50, … +2}", "*"],
                    ["1032", "{1032, 99}", "{1032, 99}", "*"], ["99", "{1032, 99}", "{1032, 99}", "*"]]
    assert not any(".." in label for row in rows for label in row)
