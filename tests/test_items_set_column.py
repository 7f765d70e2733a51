"""Marking a table's set-valued column (views.setvalued.set_column, offered on the columns page and the
items page): the delimiter checked on the column's cells, one set-valued column, owner only."""

from __future__ import annotations

import pytest
from anonymizer_helpers import make_dataset
from django.utils.html import escape
from setvalued_helpers import BASKETS, transaction_dataset

from anonymizer_app.models import Column

pytestmark = pytest.mark.django_db


def marked(ds) -> list[tuple[str, str, str]]:
    return [(c.name, c.item_delimiter, c.role) for c in Column.objects.filter(dataset=ds).exclude(item_delimiter="")]


def test_a_column_is_marked_set_valued_and_insensitive(client_alice, user):
    ds = make_dataset(user, BASKETS, "baskets.csv")
    Column.objects.filter(dataset=ds, name="basket").update(role="sensitive")
    r = client_alice.post(f"/datasets/{ds.pk}/set-column/", {"column": "basket", "item_delimiter": "pipe"})
    assert (r.status_code, r["Location"]) == (302, f"/datasets/{ds.pk}/items/")
    assert marked(ds) == [("basket", "|", "insensitive")]
    html = client_alice.get(r["Location"]).content.decode()
    assert "Column &#x27;basket&#x27; is set-valued (items separated by pipe)." in html
    assert 'id="set-column-name">basket<' in html
    # 12 rows; items a0..a2, b0, b1, c; 3 per row
    assert 'id="fig-items">6<' in html and 'id="fig-per-record">3 / 3.00 / 3<' in html


def test_the_columns_page_offers_the_marking(client_alice, user):
    ds = make_dataset(user, BASKETS, "baskets.csv")
    html = client_alice.get(f"/datasets/{ds.pk}/columns/").content.decode()
    assert 'id="set-column-form"' in html and f'action="/datasets/{ds.pk}/set-column/"' in html


def test_a_delimiter_that_splits_no_cell_is_refused(client_alice, user):
    ds = make_dataset(user, BASKETS, "baskets.csv")
    r = client_alice.post(f"/datasets/{ds.pk}/set-column/", {"column": "basket", "item_delimiter": "semicolon"})
    assert r.status_code == 400
    assert escape("baskets.csv, column 'basket': the item delimiter ';' splits no cell; choose the delimiter the "
                  "column uses") in r.content.decode()
    assert marked(ds) == []


def test_an_empty_cell_is_refused_naming_its_row(client_alice, user):
    ds = make_dataset(user, "id,basket\n1,a|b\n2,\n3,c\n", "b.csv")
    r = client_alice.post(f"/datasets/{ds.pk}/set-column/", {"column": "basket", "item_delimiter": "pipe"})
    assert r.status_code == 400
    assert escape("b.csv, column 'basket', row 2: the cell holds no items") in r.content.decode()
    assert marked(ds) == []


def test_one_set_valued_column_and_unmarking(client_alice, user):
    ds = make_dataset(user, "id,x,y\n1,a|b,c|d\n2,b,d\n", "two.csv")
    client_alice.post(f"/datasets/{ds.pk}/set-column/", {"column": "x", "item_delimiter": "pipe"})
    client_alice.post(f"/datasets/{ds.pk}/set-column/", {"column": "y", "item_delimiter": "pipe"})
    assert marked(ds) == [("y", "|", "insensitive")]
    client_alice.post(f"/datasets/{ds.pk}/set-column/", {"column": "", "item_delimiter": "pipe"})
    assert marked(ds) == []


def test_another_user_and_a_transaction_dataset_get_404(client, client_alice, other_user, user):
    ds = make_dataset(user, BASKETS, "baskets.csv")
    tx = transaction_dataset(user)
    assert client_alice.post(f"/datasets/{tx.pk}/set-column/", {"column": "", "item_delimiter": "pipe"}).status_code == 404
    client.force_login(other_user)
    assert client.post(f"/datasets/{ds.pk}/set-column/", {"column": "basket", "item_delimiter": "pipe"}).status_code == 404
    assert marked(ds) == []
