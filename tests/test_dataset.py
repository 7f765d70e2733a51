import pytest
from anonymizer_helpers import PEOPLE_CSV, SMALL_CSV, make_dataset
from django.utils.html import escape

from anonymizer_app.models import Column
from anonymizer_app.services import datasets

pytestmark = pytest.mark.django_db


def url(ds):
    return f"/datasets/{ds.pk}/"


def test_it_previews_first_20_rows(client_alice, user):
    ds = datasets.create_dataset(user, PEOPLE_CSV.read_bytes(), "db_100.csv")
    r = client_alice.get(url(ds))
    assert r.status_code == 200
    html = r.content.decode()
    assert "first 20 of 100 rows" in html
    assert "San Giovanni Del Dosso" in html  # row 1
    assert "Flagogna" in html  # row 20
    assert "Ripalimosani" not in html  # row 21
    assert html.count("<tr>") == 21  # header + 20 rows in the preview table


def test_it_shows_the_sniffed_format(client_alice, user):
    ds = make_dataset(user, SMALL_CSV.replace(",", ";"), "semi.csv")
    html = client_alice.get(url(ds)).content.decode()
    assert '<dd id="current-delimiter">semicolon</dd>' in html
    assert '<dd id="current-encoding">utf-8</dd>' in html
    assert '<option value="semicolon" selected>' in html
    assert 'name="header" id="id_header" checked' in html


def test_it_rereads_with_another_format(client_alice, user):
    ds = make_dataset(user)
    r = client_alice.post(url(ds), {"delimiter": "comma", "encoding": "utf-8"})  # header unchecked
    assert r.status_code == 302
    ds.refresh_from_db()
    assert ds.has_header is False
    assert (ds.n_rows, ds.n_columns) == (9, 6)
    assert [c.name for c in ds.columns.all()][:2] == ["column_1", "column_2"]
    assert datasets.load_frame(ds).iloc[0, 0] == "name"
    with ds.original.open("rb") as fh:
        assert fh.read() == SMALL_CSV.encode()  # the original is never modified


def test_it_shows_reformat_errors_and_keeps_the_dataset(client_alice, user):
    ds = datasets.create_dataset(user, b"x,x\n1,2\n3,4\n", "dup.csv", header=False)  # chosen at upload
    assert ds.has_header is False
    r = client_alice.post(url(ds), {"delimiter": "comma", "encoding": "utf-8", "header": "on"})
    assert r.status_code == 200
    html = r.content.decode()
    assert escape("dup.csv, line 1: the column name 'x' appears twice in the header (columns 1 and 2); rename them, "
                  "or read the first line as data (no header row)") in html
    ds.refresh_from_db()
    assert (ds.has_header, ds.n_rows, ds.n_columns) == (False, 3, 2)
    assert Column.objects.filter(dataset=ds).count() == 2


def test_it_shows_decoding_errors(client_alice, user):
    ds = datasets.create_dataset(user, b"a,b\n1,2\n", "tiny.csv")
    r = client_alice.post(url(ds), {"delimiter": "comma", "encoding": "utf-16", "header": "on"})
    assert r.status_code == 200
    assert escape("tiny.csv: no data rows") in r.content.decode()
    ds.refresh_from_db()
    assert (ds.encoding, ds.n_rows, ds.n_columns) == ("utf-8", 1, 2)


def test_it_rejects_an_unknown_delimiter(client_alice, user):
    ds = make_dataset(user)
    r = client_alice.post(url(ds), {"delimiter": "colon", "encoding": "utf-8", "header": "on"})
    assert r.status_code == 200
    assert "colon is not a delimiter; choose comma, semicolon, tab, pipe" in r.content.decode()
    ds.refresh_from_db()
    assert ds.delimiter == ","


def test_it_escapes_cells(client_alice, user):
    ds = make_dataset(user, 'name,age\n<b>x</b>,"<script>alert(1)</script>"\ny,2\n', "xss.csv", roles={})
    html = client_alice.get(url(ds)).content.decode()
    assert "<script>alert(1)</script>" not in html and "<b>x</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_other_user_gets_404(client, user, other_user):
    ds = make_dataset(user)
    client.force_login(other_user)
    assert client.get(url(ds)).status_code == 404
    assert client.post(url(ds), {"delimiter": "semicolon", "encoding": "utf-8"}).status_code == 404
    ds.refresh_from_db()
    assert (ds.delimiter, ds.has_header) == (",", True)


def test_it_requires_login(client, user):
    ds = make_dataset(user)
    r = client.get(url(ds))
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next=/datasets/{ds.pk}/"
