import io

import openpyxl
import pytest
from anonymizer_helpers import SMALL_CSV
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils.html import escape

from anonymizer_app.models import Dataset

pytestmark = pytest.mark.django_db

URL = "/datasets/upload/"


def upload(client, filename: str, raw: bytes, **extra):
    return client.post(URL, {"file": SimpleUploadedFile(filename, raw), **extra})


def assert_refused(r, message: str, status: int = 200):
    assert r.status_code == status
    html = r.content.decode()
    assert 'id="upload-errors"' in html
    assert escape(message) in html
    assert Dataset.objects.count() == 0


def test_it_uploads_csv(client_alice, user):
    r = upload(client_alice, "small.csv", SMALL_CSV.encode(), name="My survey")
    ds = Dataset.objects.get()
    assert r.status_code == 302
    assert r["Location"] == f"/datasets/{ds.pk}/"
    assert ds.owner == user
    assert ds.name == "My survey"
    assert (ds.n_rows, ds.n_columns, ds.delimiter) == (8, 6, ",")
    assert [c.name for c in ds.columns.all()] == ["name", "age", "zip", "sex", "note", "disease"]
    with ds.original.open("rb") as fh:
        assert fh.read() == SMALL_CSV.encode()
    page = client_alice.get(r["Location"]).content.decode()
    assert "Uploaded My survey: 8 rows, 6 columns." in page


def test_it_names_dataset_after_file(client_alice):
    upload(client_alice, "survey-2024.csv", SMALL_CSV.encode())
    assert Dataset.objects.get().name == "survey-2024"


def test_it_uploads_tsv(client_alice):
    r = upload(client_alice, "small.tsv", SMALL_CSV.replace(",", "\t").encode())
    assert r.status_code == 302
    ds = Dataset.objects.get()
    assert (ds.delimiter, ds.n_rows, ds.n_columns) == ("\t", 8, 6)


def test_it_uploads_xlsx(client_alice):
    wb = openpyxl.Workbook()
    for line in SMALL_CSV.strip().splitlines():
        wb.active.append(line.split(","))
    for row in wb.active.iter_rows():
        for cell in row:
            cell.data_type = "s"  # "=cmd" is text here, not a formula (a formula never computed is refused)
    buf = io.BytesIO()
    wb.save(buf)
    r = upload(client_alice, "small.xlsx", buf.getvalue())
    assert r.status_code == 302
    ds = Dataset.objects.get()
    assert (ds.kind, ds.n_rows, ds.n_columns) == ("xlsx", 8, 6)


def test_it_refuses_empty_file(client_alice):
    assert_refused(upload(client_alice, "empty.csv", b""), "empty.csv: the file is empty")


def test_it_refuses_binary_file(client_alice):
    r = upload(client_alice, "blob.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
    assert_refused(r, "blob.csv: not a text table (a NUL byte on line 3); upload a CSV/TSV/TXT text file (UTF-8, "
                      "UTF-16, Windows-1252 or Latin-1) or an .xlsx workbook")


def test_it_refuses_broken_xlsx(client_alice):
    r = upload(client_alice, "bad.xlsx", b"PK\x03\x04 not really a workbook")
    assert_refused(r, "bad.xlsx: not a readable .xlsx workbook (a damaged zip archive: File is not a zip file)")


def test_it_refuses_ragged_csv_with_a_long_row(client_alice):
    r = upload(client_alice, "ragged.csv", b"a,b,c\n1,2,3\n4,5,6,7\n")
    assert_refused(r, "ragged.csv, line 3: 4 field(s) where the first line has 3")


def test_it_refuses_ragged_csv_with_a_short_row(client_alice):
    r = upload(client_alice, "short.csv", b"a,b,c\n1,2,3\n4,5\n")
    assert_refused(r, "short.csv, line 3: 2 field(s) where the first line has 3")


def test_it_refuses_unsupported_extension(client_alice):
    r = upload(client_alice, "report.pdf", b"%PDF-1.4")
    assert_refused(r, "report.pdf: unsupported file type .pdf; upload a .csv, .tsv, .txt or .xlsx table, or a Stata .dta, SPSS .sav or SAS .sas7bdat file (or a .zip of a .sas7bdat and its .sas7bcat format catalog)")


def test_it_enforces_size_limit(client_alice, settings):
    settings.ANONYMIZER_MAX_UPLOAD_MB = 1
    raw = b"a,b\n" + b"1,2\n" * 264_000  # 1.0 MB + 8 KB: within the room for the form's fields
    assert_refused(upload(client_alice, "big.csv", raw), "big.csv: 1.0 MB, more than the limit of 1 MB")


def test_a_body_above_the_limit_is_cut_off_before_the_file(client_alice, settings, tmp_path):
    """The declared length decides: the file is never stored, the page says why (413)."""
    settings.ANONYMIZER_MAX_UPLOAD_MB = 1
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    raw = b"a,b\n" + b"1,2\n" * 600_000  # 2.3 MB
    r = upload(client_alice, "big.csv", raw)
    assert_refused(r, "the upload is 2.3 MB, more than the limit of 1 MB; nothing was stored", status=413)
    assert list(tmp_path.iterdir()) == []


def test_it_enforces_row_limit(client_alice, settings):
    settings.ANONYMIZER_MAX_ROWS = 5
    assert_refused(upload(client_alice, "small.csv", SMALL_CSV.encode()), "small.csv: 8 rows, more than the limit of 5")


def test_it_requires_a_file(client_alice):
    r = client_alice.post(URL, {"name": "nothing"})
    assert_refused(r, "Choose a file to upload.")


def test_get_redirects_to_index(client_alice):
    r = client_alice.get(URL)
    assert r.status_code == 302
    assert r["Location"] == "/"


def test_it_requires_login(client):
    r = upload(client, "small.csv", SMALL_CSV.encode())
    assert r.status_code == 302
    assert r["Location"].startswith("/accounts/login/?next=")
    assert Dataset.objects.count() == 0
