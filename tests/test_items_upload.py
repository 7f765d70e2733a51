"""The set-valued upload (views.setvalued.upload): the layout detected or chosen, stored as a transaction
dataset or as a table with its set-valued column marked; bad files refused naming file and line, nothing
stored."""

from __future__ import annotations

import io

import openpyxl
import pytest
from django.utils.html import escape
from setvalued_helpers import BASKETS, MILK, PAYMENTS, upload_items

from anonymizer_app.models import Dataset
from anonymizer_app.services import storage

pytestmark = pytest.mark.django_db


def stored_files() -> list[str]:
    return [name for name, _ in storage.media_files()]


def test_a_transaction_file_is_detected_and_stored_as_it_came(client_alice, user):
    r = upload_items(client_alice, "milk.txt", MILK)
    ds = Dataset.objects.get()
    assert (r.status_code, r["Location"]) == (302, f"/datasets/{ds.pk}/items/")
    assert (ds.owner, ds.layout, ds.item_delimiter, ds.record_id, ds.n_rows, ds.n_columns) == (
        user, "transactions", ",", False, 4, 1)
    assert ds.columns.count() == 0
    assert len([n for n in stored_files() if n.startswith(("datasets/", "tables/"))]) == 2  # original, records
    with ds.original.open("rb") as fh:
        assert fh.read() == MILK.encode()
    page = client_alice.get(r["Location"]).content.decode()
    assert "Uploaded milk as transactions: 4 records." in page


def test_record_ids_are_detected(client_alice):
    upload_items(client_alice, "payments.txt", PAYMENTS)
    ds = Dataset.objects.get()
    assert (ds.layout, ds.record_id, ds.n_rows, ds.n_columns) == ("transactions", True, 5, 2)


def test_a_table_with_a_set_valued_column_is_detected(client_alice):
    r = upload_items(client_alice, "baskets.csv", BASKETS)
    ds = Dataset.objects.get()
    assert r.status_code == 302
    assert (ds.layout, ds.n_rows, ds.n_columns) == ("table", 12, 4)
    assert [(c.name, c.item_delimiter, c.role) for c in ds.columns.exclude(item_delimiter="")] == [
        ("basket", "|", "insensitive")]


def test_a_workbook_with_a_set_valued_column(client_alice):
    wb = openpyxl.Workbook()
    for line in BASKETS.splitlines():
        wb.active.append(line.split(","))
    buf = io.BytesIO()
    wb.save(buf)
    r = upload_items(client_alice, "baskets.xlsx", buf.getvalue())
    ds = Dataset.objects.get()
    assert (r.status_code, ds.layout, ds.kind, ds.n_rows) == (302, "table", "xlsx", 12)
    assert [(c.name, c.item_delimiter) for c in ds.columns.exclude(item_delimiter="")] == [("basket", "|")]


def test_a_workbook_is_not_read_as_transactions(client_alice):
    wb = openpyxl.Workbook()
    wb.active.append(["a", "b"])
    buf = io.BytesIO()
    wb.save(buf)
    r = upload_items(client_alice, "w.xlsx", buf.getvalue(), layout="transactions")
    assert r.status_code == 400
    assert escape("w.xlsx: an .xlsx workbook holds a table; upload transactions as a text file (one record per "
                  "line) or choose the table layout") in r.content.decode()
    assert Dataset.objects.count() == 0 and stored_files() == []


def test_items_with_spaces_and_one_item_records(client_alice):
    upload_items(client_alice, "shop.txt", "whole milk,feta\nwhole milk\nblue cheese,feta,olive oil\n")
    ds = Dataset.objects.get()
    assert (ds.layout, ds.item_delimiter, ds.record_id, ds.n_rows) == ("transactions", ",", False, 3)


def test_the_layout_can_be_chosen(client_alice):
    upload_items(client_alice, "payments.txt", PAYMENTS, record_id="no")
    ds = Dataset.objects.get()
    assert (ds.record_id, ds.n_columns) == (False, 1)


@pytest.mark.parametrize("filename,data,fields,message", [
    ("milk.txt", MILK, {"layout": "transactions", "item_delimiter": "semicolon"},
     "milk.txt: the item delimiter ';' splits no line: every record would hold one item; choose the delimiter the "
     "file uses"),
    ("t.txt", "t1,a\nt2\n", {"record_id": "yes"}, "t.txt, line 2: the record has no items"),
    ("blob.txt", b"a,b\nc,d,e\n\x00\x01\x02", {}, "blob.txt, line 3: a NUL byte: this is a binary file, not text "
                                                   "with one record per line"),
    ("latin.txt", "a,b\nc,d,e\ncaf\xe9,x\n".encode("latin-1"), {},
     "latin.txt, line 3: not UTF-8 text (byte 13); save the file as UTF-8"),
    ("empty.txt", b"", {}, "empty.txt: the file is empty"),
    ("ids.txt", "r1,a,b\nr1,b,c\nr2,a\n", {"record_id": "yes"}, "ids.txt: record id 'r1' is used twice"),
    ("x.pdf", "a,b\n", {}, "x.pdf: unsupported file type .pdf; upload a .csv, .tsv, .txt, .xlsx, .dat file"),
])
def test_bad_files_are_refused_naming_file_and_line_and_nothing_is_stored(client_alice, filename, data, fields,
                                                                          message):
    r = upload_items(client_alice, filename, data, **fields)
    assert r.status_code == 400
    assert escape(message) in r.content.decode()
    assert Dataset.objects.count() == 0
    assert [n for n in stored_files() if n.startswith(("datasets/", "tables/"))] == []


def test_signed_out_users_are_sent_to_the_login(client):
    r = upload_items(client, "milk.txt", MILK)
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")
    assert Dataset.objects.count() == 0
