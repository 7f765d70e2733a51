"""The bad-input catalogue, upload side (issue 10): the upload form, the preview's read options, the
column page, the downloads and the CLI's reading of its INPUT, each with a hostile or malformed input.

Every refusal asserts the status and the exact message a person reads (naming the file, line, column,
cell or value); every case asserts that nothing was half-written: the Dataset and Column rows and the
media tree are what they were before (or, for an accepted file, exactly one new dataset). Expected
figures (lines, lengths, sizes, ratios) are computed here from the input, not copied from the reader.
"""

from __future__ import annotations

import codecs
import io
import zipfile

import numpy as np
import pytest
from anonymizer_helpers import finished_job, make_dataset
from bad_input_files import xlsx, xlsx_bomb, xlsx_with_sheet, zip_of
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils.html import escape
from erasure_helpers import media

from anonymizer_app.engine import COLUMN_TYPES, Role
from anonymizer_app.models import Column, Dataset

pytestmark = pytest.mark.django_db

URL = "/datasets/upload/"
TEXT_HINT = "upload a CSV/TSV/TXT text file (UTF-8, UTF-16, Windows-1252 or Latin-1) or an .xlsx workbook"
NO_HEADER = "or read the first line as data (no header row)"
AS_CSV = "save the sheet as CSV and upload that"
PEOPLE = "name,city\nJosé,Forlì\nZoë,Cefalù\nÅsa,Malmö\n"
PEOPLE_ROWS = [["José", "Forlì"], ["Zoë", "Cefalù"], ["Åsa", "Malmö"]]


def state() -> tuple:
    """Row counts and the files under MEDIA_ROOT (folders made on the way may stay, empty)."""
    return Dataset.objects.count(), Column.objects.count(), {p for p in media() if not p.endswith("/")}


def page(r) -> str:
    html = r.content.decode()
    assert "Traceback" not in html
    return html


def upload(client, filename: str, raw: bytes, **fields):
    return client.post(URL, {"file": SimpleUploadedFile(filename, raw), "name": "", **fields})


def _random_bytes() -> bytes:
    return np.random.default_rng(7).bytes(4096)


def _random_without_nul() -> bytes:
    return bytes(np.random.default_rng(7).integers(1, 256, 4096, dtype=np.uint8))


def _line(raw: bytes, pos: int) -> int:
    return raw.count(b"\n", 0, pos) + 1


def _nul_message(name: str, raw: bytes) -> str:
    return f"{name}: not a text table (a NUL byte on line {_line(raw, raw.index(0))}); {TEXT_HINT}"


def _control_message(name: str, raw: bytes) -> str:
    controls = set(range(1, 9)) | set(range(0x0E, 0x20)) | {0x7F}
    pos = next(i for i, b in enumerate(raw) if b in controls)
    return f"{name}: not a text table (control character 0x{raw[pos]:02X} on line {_line(raw, pos)}); {TEXT_HINT}"


def _bomb_540() -> bytes:
    return xlsx_bomb(None, 540)


def _write_only(rows) -> bytes:
    """A workbook from openpyxl's write-only mode: its sheet states no size (<dimension>)."""
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet()
    for row in rows:
        ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    assert b"dimension" not in zipfile.ZipFile(io.BytesIO(buf.getvalue())).read("xl/worksheets/sheet1.xml")
    return buf.getvalue()


def _unpacked_mb(raw: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        return f"{sum(i.file_size for i in zf.infolist()) / 2**20:,.0f}"


def _ratio(raw: bytes, part: str) -> str:
    info = zipfile.ZipFile(io.BytesIO(raw)).getinfo(part)
    return f"{info.file_size / info.compress_size:,.0f}"


BIG_CELL = 30 * 2**20  # the 30 MB single-cell CSV
FORGED_ROWS = ('<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c></row><row r="2"><c r="A2"><v>1</v></c></row>'
               '<row r="5000000"><c r="A5000000"><v>2</v></c></row>')
HEADER_XML = ('<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c>'
              '<c r="B1" t="inlineStr"><is><t>b</t></is></c></row>')

# (id, file name, bytes or a function making them, extra form fields, settings, status, message (or a function
# of the bytes))
REFUSED = [
    ("empty file", "empty.csv", b"", {}, {}, 200, "empty.csv: the file is empty"),
    ("blank lines only", "blank.csv", b"  \n\n\t\n", {}, {}, 200, "blank.csv: the file is empty"),
    ("header only", "h.csv", b"a,b,c\n", {}, {}, 200, "h.csv: no data rows (only a header line)"),
    ("ragged: a long row", "r.csv", b"a,b,c\n1,2,3\n4,5,6,7\n", {}, {}, 200,
     "r.csv, line 3: 4 field(s) where the first line has 3"),
    ("ragged: a short row", "s.csv", b"a,b,c\n1,2,3\n4,5\n", {}, {}, 200,
     "s.csv, line 3: 2 field(s) where the first line has 3"),
    ("unclosed quote", "q.csv", b'a,b\n"x,1\n2,3\n', {}, {}, 200,
     "q.csv, lines 2-3: 1 field(s) where the first line has 2 (a quoted field runs over 2 lines: is a closing "
     "quote missing?)"),
    ("NUL bytes in a text file", "nul.csv", b"a,b\n1,2\n3,\x004\n5,6\n", {}, {}, 200,
     f"nul.csv: not a text table (a NUL byte on line 3); {TEXT_HINT}"),
    ("random bytes", "random.csv", _random_bytes, {}, {}, 200, lambda raw: _nul_message("random.csv", raw)),
    ("random bytes without a NUL", "noise.txt", _random_without_nul, {}, {}, 200,
     lambda raw: _control_message("noise.txt", raw)),
    ("a PNG named .csv", "image.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", {}, {}, 200,
     f"image.csv: not a text table (a NUL byte on line 3); {TEXT_HINT}"),
    ("duplicate header names", "d.csv", b"a,b,a,c,b\n1,2,3,4,5\n", {}, {}, 200,
     "d.csv, line 1: the column name 'a' appears twice in the header (columns 1 and 3); the column name 'b' "
     f"appears twice in the header (columns 2 and 5); rename them, {NO_HEADER}"),
    ("a name three times", "t.csv", b"x,x,x\n1,2,3\n", {}, {}, 200,
     f"t.csv, line 1: the column name 'x' appears 3 times in the header (columns 1, 2 and 3); rename them, "
     f"{NO_HEADER}"),
    ("empty header name", "e.csv", b"a,,c\n1,2,3\n", {}, {}, 200,
     f"e.csv, line 1: column 2 has no name in the header; name it, {NO_HEADER}"),
    ("two empty header names", "e2.csv", b"a,,c, \n1,2,3,4\n", {}, {}, 200,
     f"e2.csv, line 1: columns 2 and 4 have no name in the header; name them, {NO_HEADER}"),
    ("duplicate header chosen explicitly", "dh.csv", b"x,x\n1,2\n", {"header": "yes"}, {}, 200,
     f"dh.csv, line 1: the column name 'x' appears twice in the header (columns 1 and 2); rename them, {NO_HEADER}"),
    ("very long header", "long.csv", b"a," + b"h" * 300 + b"\n1,2\n", {}, {}, 200,
     "long.csv, line 1: the name of column 2 has 300 characters, more than the limit of 255 (it starts "
     f"'{'h' * 40}')"),
    ("very long cell", "cell.csv", b"a,b\n1,2\n3," + b"x" * 40_000 + b"\n", {}, {}, 200,
     "cell.csv, line 3, column 2 ('b'): a cell of 40,000 characters, more than the limit of 32,767"),
    ("very long quoted cell", "cellq.csv", b'a,b\n"1",2\n3,"' + b"y" * 40_000 + b'"\n', {}, {}, 200,
     "cellq.csv, line 3, column 2 ('b'): a cell of 40,000 characters, more than the limit of 32,767"),
    ("the issue's 30 MB single cell", "one-cell.csv", lambda: b"note\n" + b"z" * BIG_CELL + b"\n", {}, {}, 200,
     f"one-cell.csv, line 2, column 1 ('note'): a cell of {BIG_CELL:,} characters, more than the limit of 32,767"),
    ("cell cap from the settings", "capped.csv", b"a,b\n1,12345678901\n", {},
     {"ANONYMIZER_MAX_CELL_CHARS": 10}, 200,
     "capped.csv, line 2, column 2 ('b'): a cell of 11 characters, more than the limit of 10"),
    ("too many columns", "wide.csv", b"a,b,c,d,e,f\n1,2,3,4,5,6\n", {}, {"ANONYMIZER_MAX_COLUMNS": 5}, 200,
     "wide.csv: 6 columns, more than the limit of 5"),
    ("too many rows", "tall.csv", b"a\n" + b"1\n" * 11, {}, {"ANONYMIZER_MAX_ROWS": 10}, 200,
     "tall.csv: 11 rows, more than the limit of 10"),
    ("oversized upload", "big.csv", b"a,b\n" + b"1,2\n" * (3 * 2**18), {}, {"ANONYMIZER_MAX_UPLOAD_MB": 1}, 413,
     "the upload is 3.0 MB, more than the limit of 1 MB; nothing was stored"),
    ("the issue's .xlsx bomb (540 MB of sheet XML)", "bomb.xlsx", _bomb_540, {}, {}, 200,
     lambda raw: f"bomb.xlsx: the workbook unpacks to {_unpacked_mb(raw)} MB, more than the limit of 100 MB; {AS_CSV}"),
    ("an .xlsx bomb under the size cap", "bomb90.xlsx", lambda: xlsx_bomb(None, 90, dimension="A1:T300000"), {}, {},
     200, lambda raw: f"bomb90.xlsx: the part xl/worksheets/sheet1.xml is packed "
                      f"{_ratio(raw, 'xl/worksheets/sheet1.xml')} to 1, more than the limit of 100 to 1 (a zip bomb?); "
                      f"{AS_CSV}"),
    ("an .xlsx bomb without a declared size", "nodim.xlsx", lambda: xlsx_bomb(None, 20), {},
     {"ANONYMIZER_MAX_XLSX_RATIO": 1000, "ANONYMIZER_MAX_ROWS": 1000}, 200,
     "nodim.xlsx: more than the limit of 1,000 rows (sheet 'Sheet1', row 1002)"),
    ("an .xlsx bomb stopped by the row counter", "rows.xlsx", lambda: xlsx_bomb(None, 20, dimension="A1:T65536"),
     {}, {"ANONYMIZER_MAX_XLSX_RATIO": 1000, "ANONYMIZER_MAX_ROWS": 1000}, 200,
     "rows.xlsx: more than the limit of 1,000 rows (sheet 'Sheet1', row 1002)"),
    ("an .xlsx with a forged row number", "forged.xlsx", lambda: xlsx_with_sheet(FORGED_ROWS, "A1:A5000000"), {},
     {}, 200, f"forged.xlsx, sheet 'Sheet1': more cells (empty ones included) than the limit by row 1,048,577; "
              f"{AS_CSV}"),
    ("an .xlsx with no sheet", "nosheet.xlsx", lambda: xlsx_with_sheet("", sheets=False), {}, {}, 200,
     "nosheet.xlsx: the workbook has no worksheet"),
    ("an .xlsx with an empty sheet", "empty.xlsx", lambda: xlsx([]), {}, {}, 200, "empty.xlsx: no data rows"),
    ("an .xlsx with a header only", "head.xlsx", lambda: xlsx([["a", "b"]]), {}, {}, 200,
     "head.xlsx: no data rows (only a header line)"),
    ("an .xlsx with a duplicate header", "dup.xlsx", lambda: xlsx([["a", "a"], [1, 2]]), {}, {}, 200,
     f"dup.xlsx, sheet 'Sheet', row 1: the column name 'a' appears twice in the header (columns 1 and 2); rename "
     f"them, {NO_HEADER}"),
    ("an .xlsx with a long cell", "lc.xlsx", lambda: xlsx([["a", "b"], [1, "w" * 150]]), {},
     {"ANONYMIZER_MAX_CELL_CHARS": 100}, 200,
     "lc.xlsx, sheet 'Sheet', cell B2: a cell of 150 characters, more than the limit of 100"),
    ("an .xlsx with too many columns", "wide.xlsx", lambda: xlsx([list("abcdef"), list(range(6))]), {},
     {"ANONYMIZER_MAX_COLUMNS": 5}, 200, "wide.xlsx, sheet 'Sheet', row 1: 6 columns, more than the limit of 5"),
    ("an .xlsx with formulas never computed", "f.xlsx", lambda: xlsx([["a", "b"], [1, "=A2*2"]]), {}, {}, 200,
     "f.xlsx, sheet 'Sheet', cell B2: a formula with no computed value (the program that wrote the workbook did "
     "not compute it); open and save it in a spreadsheet program, or save it as CSV"),
    ("a damaged .xlsx", "bad.xlsx", b"PK\x03\x04 not really a workbook", {}, {}, 200,
     "bad.xlsx: not a readable .xlsx workbook (a damaged zip archive: File is not a zip file)"),
    ("a CSV that is really a zip", "archive.csv", lambda: zip_of({"data.csv": b"a,b\n1,2\n"}), {}, {}, 200,
     f"archive.csv: a zip archive, not an .xlsx workbook; {TEXT_HINT}"),
    ("an old .xls renamed .xlsx", "old.xlsx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504, {}, {}, 200,
     "old.xlsx: an old Excel .xls workbook; save it as .xlsx or CSV and upload that"),
    ("wrong extension", "report.pdf", b"%PDF-1.4\n", {}, {}, 200,
     "report.pdf: unsupported file type .pdf; upload a .csv, .tsv, .txt or .xlsx table, or a Stata .dta, SPSS .sav or SAS .sas7bdat file (or a .zip of a .sas7bdat and its .sas7bcat format catalog)"),
    ("no extension", "data", b"a,b\n1,2\n", {}, {}, 200,
     "data: unsupported file type (no extension); upload a .csv, .tsv, .txt or .xlsx table, or a Stata .dta, SPSS .sav or SAS .sas7bdat file (or a .zip of a .sas7bdat and its .sas7bcat format catalog)"),
]


def _materialize(raw):
    return raw() if callable(raw) else raw


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_upload_refused(case, client_alice, settings, tmp_path):
    _, filename, raw, fields, overrides, status, message = case
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    for key, value in overrides.items():
        setattr(settings, key, value)
    raw = _materialize(raw)
    expected = message(raw) if callable(message) else message
    before = state()
    r = upload(client_alice, filename, raw, **fields)
    assert r.status_code == status
    html = page(r)
    assert 'id="upload-errors"' in html
    assert escape(expected) in html
    assert state() == before
    assert list(tmp_path.iterdir()) == []  # no spooled upload left either


FORMULA_WITH_VALUE = HEADER_XML + '<row r="2"><c r="A2"><v>1</v></c><c r="B2"><f>A2*2</f><v>2</v></c></row>'

# (id, file name, bytes or a function, extra form fields, (kind, encoding, header), columns, rows)
ACCEPTED = [
    ("UTF-16 LE with BOM", "u16le.csv", PEOPLE.encode("utf-16-le").join([codecs.BOM_UTF16_LE, b""]), {},
     ("csv", "utf-16", True), ["name", "city"], PEOPLE_ROWS),
    ("UTF-16 BE with BOM", "u16be.csv", codecs.BOM_UTF16_BE + PEOPLE.encode("utf-16-be"), {},
     ("csv", "utf-16", True), ["name", "city"], PEOPLE_ROWS),
    ("UTF-16 LE without BOM", "u16.txt", PEOPLE.replace(",", "\t").encode("utf-16-le"), {},
     ("csv", "utf-16-le", True), ["name", "city"], PEOPLE_ROWS),
    ("Latin-1", "latin.csv", PEOPLE.encode("latin-1"), {}, ("csv", "windows-1252", True), ["name", "city"],
     PEOPLE_ROWS),
    ("Windows-1252 with a euro sign", "cp.csv", "name;price\nJosé;5 €\nZoë;7 €\n".encode("cp1252"), {},
     ("csv", "windows-1252", True), ["name", "price"], [["José", "5 €"], ["Zoë", "7 €"]]),
    ("Latin-1 after the first 64 KiB", "late.csv", ("a,b\n" + "x,y\n" * 20_000 + "é,z\n").encode("latin-1"), {},
     ("csv", "windows-1252", True), ["a", "b"], None),
    ("CR-only line ends", "mac.csv", PEOPLE.replace("\n", "\r").encode(), {}, ("csv", "utf-8", True),
     ["name", "city"], PEOPLE_ROWS),
    ("CRLF line ends", "dos.csv", PEOPLE.replace("\n", "\r\n").encode(), {}, ("csv", "utf-8", True),
     ["name", "city"], PEOPLE_ROWS),
    ("UTF-8 BOM", "bom.csv", codecs.BOM_UTF8 + PEOPLE.encode(), {}, ("csv", "utf-8", True), ["name", "city"],
     PEOPLE_ROWS),
    ("one column", "one.csv", b"city\nRoma\nMilano\n", {}, ("csv", "utf-8", True), ["city"],
     [["Roma"], ["Milano"]]),
    ("no header chosen for a repeated first line", "nohead.csv", b"x,x\n1,2\n", {"header": "no"},
     ("csv", "utf-8", False), ["column_1", "column_2"], [["x", "x"], ["1", "2"]]),
    ("an .xlsx that is really a CSV", "text.xlsx", PEOPLE.encode(), {}, ("csv", "utf-8", True), ["name", "city"],
     PEOPLE_ROWS),
    ("a workbook named .csv", "book.csv", lambda: xlsx([["a", "b"], [1, 2]]), {}, ("xlsx", "utf-8", True),
     ["a", "b"], [["1", "2"]]),
    ("an .xlsx with merged cells", "merged.xlsx", lambda: xlsx([["a", "b", "c"], [1, 2, 3], [4, 5, 6]], "A2:B2"),
     {}, ("xlsx", "utf-8", True), ["a", "b", "c"], [["1", "", "3"], ["4", "5", "6"]]),
    ("an .xlsx with computed formulas", "fv.xlsx", lambda: xlsx_with_sheet(FORMULA_WITH_VALUE, "A1:B2"), {},
     ("xlsx", "utf-8", True), ["a", "b"], [["1", "2"]]),
    ("an .xlsx declaring too small a size", "small-dim.xlsx",
     lambda: xlsx_with_sheet(FORMULA_WITH_VALUE + '<row r="3"><c r="A3"><v>3</v></c><c r="B3"><v>4</v></c></row>', "A1"),
     {}, ("xlsx", "utf-8", True), ["a", "b"], [["1", "2"], ["3", "4"]]),
    ("an .xlsx written without a declared size", "wo.xlsx", lambda: _write_only([["a", "b"], [1, 2], [3, 4]]), {},
     ("xlsx", "utf-8", True), ["a", "b"], [["1", "2"], ["3", "4"]]),
    ("an .xlsx with a second, empty sheet", "two.xlsx", lambda: xlsx([["a"], ["x"]], sheets=2), {},
     ("xlsx", "utf-8", True), ["a"], [["x"]]),
    ("a stray lone CR in a CRLF file", "cr.csv", b"a,b\r\n1,x\ry\r\n2,z\r\n", {}, None, None, None),
]


@pytest.mark.parametrize("case", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_upload_accepted(case, client_alice, user):
    _, filename, raw, fields, fmt, columns, rows = case
    raw = _materialize(raw)
    count = Dataset.objects.count()
    r = upload(client_alice, filename, raw, **fields)
    if fmt is None:  # a lone CR is a line break, as in a spreadsheet: the line it makes is refused by number
        assert r.status_code == 200
        assert escape(f"{filename}, line 3: 1 field(s) where the first line has 2") in page(r)
        assert Dataset.objects.count() == count
        return
    assert r.status_code == 302, page(r)[:3000]
    ds = Dataset.objects.get(owner=user, original_name=filename)
    assert (ds.kind, ds.encoding, ds.has_header) == fmt
    assert [c.name for c in ds.columns.all()] == columns
    preview = page(client_alice.get(f"/datasets/{ds.pk}/"))
    if fmt[0] == "csv":
        assert f'<dd id="current-encoding">{fmt[1]}</dd>' in preview
    if rows is not None:
        from anonymizer_app.services import datasets

        assert datasets.dataset_rows(ds, 0, 100).values.tolist() == rows


def test_long_names_are_shortened(client_alice, user):
    """A file name over 255 characters (Django keeps 255 with the extension) and a name over 200: no database
    error on any backend, the dataset named after the file, cut with an ellipsis."""
    filename = "x" * 300 + ".csv"
    r = upload(client_alice, filename, b"a,b\n1,2\n")
    assert r.status_code == 302
    ds = Dataset.objects.get(owner=user)
    assert ds.original_name == "x" * 251 + ".csv"
    assert ds.name == "x" * 199 + "…"
    r = upload(client_alice, "ok.csv", b"a,b\n1,2\n", name="n" * 201)
    assert r.status_code == 200
    assert "Ensure this value has at most 200 characters (it has 201)." in page(r)
    assert Dataset.objects.count() == 1


def test_unknown_header_choice(client_alice):
    before = state()
    r = upload(client_alice, "ok.csv", b"a,b\n1,2\n", header="maybe")
    assert r.status_code == 200
    assert escape("maybe is not a header choice; choose auto, yes or no") in page(r)
    assert state() == before


def test_no_file(client_alice):
    before = state()
    r = client_alice.post(URL, {"name": "x"})
    assert r.status_code == 200
    assert "Choose a file to upload." in page(r)
    assert state() == before


# ---- the preview's read options ----------------------------------------------------------------------------
def _reformat(client, ds, **fields):
    data = {"delimiter": "comma", "encoding": "utf-8", "header": "on", **fields}
    return client.post(f"/datasets/{ds.pk}/", {k: v for k, v in data.items() if v is not None})


def _dataset_state(ds) -> tuple:
    ds.refresh_from_db()
    return (ds.kind, ds.delimiter, ds.encoding, ds.has_header, ds.n_rows, ds.n_columns,
            [(c.name, c.type, c.role) for c in ds.columns.all()], state())


# (id, bytes, header chosen at upload, form fields over comma/utf-8/header on, message)
FORMAT_CASES = [
    ("unknown delimiter", b"a,b\n1,2\n", None, {"delimiter": "colon"},
     "colon is not a delimiter; choose comma, semicolon, tab, pipe"),
    ("no delimiter", b"a,b\n1,2\n", None, {"delimiter": None}, "Choose a delimiter."),
    ("unknown encoding", b"a,b\n1,2\n", None, {"encoding": "klingon"},
     "klingon is not an encoding offered; choose one of the list"),
    ("UTF-8 chosen for UTF-16", "a,b\n1,2\n".encode("utf-16"), None, {},
     "f.csv: the bytes are UTF-16 text, not utf-8; choose utf-16 as the encoding"),
    ("UTF-8 chosen for Latin-1", "a,b\nJosé,2\n".encode("latin-1"), None, {},
     "f.csv, line 2: cannot be decoded as utf-8 (byte 0xE9); choose the file's encoding, e.g. windows-1252"),
    ("a header with a repeated name", b"x,x\n1,2\n", False, {},
     f"f.csv, line 1: the column name 'x' appears twice in the header (columns 1 and 2); rename them, {NO_HEADER}"),
    ("a delimiter that makes rows ragged", b"a;b,c\n1;2,3\n4,5;6;7\n", None, {"delimiter": "semicolon"},
     "f.csv, line 3: 3 field(s) where the first line has 2"),
]


@pytest.mark.parametrize("case", FORMAT_CASES, ids=[c[0] for c in FORMAT_CASES])
def test_read_options_refused(case, client_alice, user):
    _, raw, header, fields, message = case
    from anonymizer_app.services import datasets

    ds = datasets.create_dataset(user, raw, "f.csv", header=header)
    before = _dataset_state(ds)
    r = _reformat(client_alice, ds, **fields)
    assert r.status_code == 200
    assert escape(message) in page(r)
    assert _dataset_state(ds) == before


def test_read_options_with_utf16_for_a_streamed_file_without_bom(client_alice, user, tiny_blocks):
    """utf-16 chosen for a UTF-8 file read in blocks (above STREAM_THRESHOLD): Python's utf-16 codec refuses a
    stream without a byte-order mark with a bare UnicodeError (no byte, no reason), which is a message naming the
    file and the encoding, not a server error; the dataset stays as it was."""
    r = upload(client_alice, "s.csv", ("a,b\n" + FILLER).encode("utf-8"))
    assert r.status_code == 302, page(r)[:2000]
    ds = Dataset.objects.get(owner=user)
    before = _dataset_state(ds)
    r = _reformat(client_alice, ds, encoding="utf-16")
    assert r.status_code == 200
    assert escape("s.csv, line 1: cannot be decoded as utf-16 (UTF-16 stream does not start with BOM); choose the "
                  "file's encoding") in page(r)
    assert _dataset_state(ds) == before


def test_read_options_of_another_users_dataset(client_alice, other_user):
    ds = make_dataset(other_user)
    before = _dataset_state(ds)
    assert _reformat(client_alice, ds).status_code == 404
    assert client_alice.get(f"/datasets/{ds.pk}/").status_code == 404
    assert _dataset_state(ds) == before


def test_read_options_of_a_workbook_ignore_text_settings(client_alice, user):
    from anonymizer_app.services import datasets

    ds = datasets.create_dataset(user, xlsx([["a", "b"], [1, 2]]), "w.xlsx")
    r = _reformat(client_alice, ds, delimiter="nonsense", encoding="nonsense")
    assert r.status_code == 302
    ds.refresh_from_db()
    assert (ds.kind, ds.n_rows, ds.n_columns) == ("xlsx", 1, 2)


# ---- pages with long cells ---------------------------------------------------------------------------------
def test_pages_cut_long_cells_and_keep_escaping(client_alice, user):
    cell = "<b>" + "q" * 4_997  # 5,000 characters, markup included
    ds = make_dataset(user, f"name,note\nann,{cell}\nbob,short\n", "long.csv", roles={})
    for url in (f"/datasets/{ds.pk}/", f"/datasets/{ds.pk}/columns/"):
        html = page(client_alice.get(url))
        assert len(html) < 40_000
        assert (f'<span class="cell-cut" title="5,000 characters; 100 shown">{escape(cell[:100])}…</span>'
                in html)
        assert "<b>qqq" not in html


# ---- the column page ----------------------------------------------------------------------------------------
def _columns_form(ds, **changes) -> dict:
    data = {}
    for c in ds.columns.all():
        data[f"type:{c.name}"] = c.type
        data[f"role:{c.name}"] = c.role
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


COLUMN_CSV = "name,age,sex,blank,born\nann,34,F,,2001-02-03\nbob,51,M,,1999-12-31\ncid,22,M,,2004-06-30\n"
COLUMN_CASES = [
    ("unknown role", {"role:sex": "secret"},
     "column 'sex': secret is not a role; choose " + ", ".join(r.value for r in Role)),
    ("unknown type", {"type:age": "float"}, "column 'age': float is not a type; choose " + ", ".join(COLUMN_TYPES)),
    ("a role left out", {"role:age": None}, "column 'age': choose a role"),
    ("a type the values do not fit", {"type:sex": "integer"}, "column 'sex': 'F' is not a valid integer"),
    ("a date type on text", {"type:name": "date"}, "column 'name': 'ann' is not a valid date"),
    ("a quasi-identifier with no values", {"role:blank": "quasi-identifying"},
     "column 'blank' has no values (every cell is empty): it cannot be a quasi-identifier"),
    ("every column identifying", {f"role:{c}": "identifying" for c in ("name", "age", "sex", "blank", "born")},
     "every column is identifying: the output would have no column; mark at least one as quasi-identifying, "
     "sensitive or insensitive"),
    ("an unknown column", {"role:ghost": "sensitive"}, "unknown column 'ghost'"),
]


@pytest.mark.parametrize("case", COLUMN_CASES, ids=[c[0] for c in COLUMN_CASES])
def test_column_page_refused(case, client_alice, user):
    _, changes, message = case
    ds = make_dataset(user, COLUMN_CSV, "cols.csv", roles={})
    before = _dataset_state(ds)
    r = client_alice.post(f"/datasets/{ds.pk}/columns/", _columns_form(ds, **changes))
    assert r.status_code == 200
    assert escape(message) in page(r)
    assert _dataset_state(ds) == before


def test_column_page_of_another_users_dataset(client_alice, other_user):
    ds = make_dataset(other_user, COLUMN_CSV, "cols.csv", roles={})
    before = _dataset_state(ds)
    assert client_alice.get(f"/datasets/{ds.pk}/columns/").status_code == 404
    assert client_alice.post(f"/datasets/{ds.pk}/columns/", _columns_form(ds)).status_code == 404
    assert _dataset_state(ds) == before


# ---- downloads ----------------------------------------------------------------------------------------------
NUMBERS_CSV = ("id,age,value,note\n1,30,-5,=1+2\n2,30,-3.5,@SUM(A1)\n3,30,+2,-x\n4,40,1e5,＝1\n5,40,-0.25,ok\n"
               "6,40,.5,\t1\n")


def _numbers_job(user):
    ds = make_dataset(user, NUMBERS_CSV, "numbers.csv",
                      roles={"id": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "value": Role.SENSITIVE})
    return finished_job(ds, k=3)


def test_download_leaves_numbers_alone(client_alice, user):
    job = _numbers_job(user)
    r = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv")
    assert r.status_code == 200
    import csv

    rows = list(csv.reader(io.StringIO(r.content.decode())))
    assert rows[0] == ["age", "value", "note"]
    assert [row[1] for row in rows[1:]] == ["-5", "-3.5", "+2", "1e5", "-0.25", ".5"]
    assert [row[2] for row in rows[1:]] == ["'=1+2", "'@SUM(A1)", "'-x", "'＝1", "ok", "'\t1"]


@pytest.mark.parametrize("query, status, message", [
    ("?delimiter=colon", 400, "delimiter must be one of: comma, semicolon, tab, pipe"),
    ("?table=st", 404, None),
])
def test_download_refused(query, status, message, client_alice, user):
    job = _numbers_job(user)
    before = state()
    r = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv{query}")
    assert r.status_code == status
    if message:
        assert r.content.decode() == message
    assert state() == before


def test_downloads_of_another_users_job(client_alice, other_user):
    job = _numbers_job(other_user)
    for url in (f"/jobs/{job.pk}/result/anonymized.csv", f"/jobs/{job.pk}/config.json"):
        assert client_alice.get(url).status_code == 404


# ---- the CLI reading its INPUT -------------------------------------------------------------------------------
def _cli(src, tmp_path) -> tuple[int, str]:
    out = tmp_path / "out" / "o.csv"
    out.parent.mkdir(exist_ok=True)
    try:
        call_command("anonymize", str(src), "--qi", "a", "--k", "1", "--out", str(out), stdout=io.StringIO(),
                     stderr=io.StringIO())
    except CommandError as exc:
        assert list(out.parent.iterdir()) == []
        return exc.returncode, str(exc)
    return 0, out.read_text(encoding="utf-8")


CLI_CASES = [
    ("binary", "bin.csv", b"\x89PNG\r\n\x1a\n\x00\x00", f"bin.csv: not a text table (a NUL byte on line 3); {TEXT_HINT}"),
    ("empty", "empty.csv", b"", "empty.csv: the file is empty"),
    ("duplicate header", "dup.csv", b"a,a\n1,2\n",
     f"dup.csv, line 1: the column name 'a' appears twice in the header (columns 1 and 2); rename them, {NO_HEADER}"),
    ("long cell", "cell.csv", b"a,b\n1," + b"x" * 40_000 + b"\n",
     "cell.csv, line 2, column 2 ('b'): a cell of 40,000 characters, more than the limit of 32,767"),
    ("old .xls", "old.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504,
     "old.xls: an old Excel .xls workbook; save it as .xlsx or CSV and upload that"),
    ("xlsx bomb", "bomb.xlsx", _bomb_540, None),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_input_refused(case, tmp_path):
    _, name, raw, message = case
    raw = _materialize(raw)
    src = tmp_path / name
    src.write_bytes(raw)
    code, text = _cli(src, tmp_path)
    expected = message or (f"bomb.xlsx: the workbook unpacks to {_unpacked_mb(raw)} MB, more than the limit of 100 "
                           f"MB; {AS_CSV}")
    assert (code, text) == (2, expected)


def test_cli_reads_utf16_and_cr_only(tmp_path):
    for name, raw in (("u.csv", "a,b\n1,é\n1,ü\n".encode("utf-16")), ("m.csv", b"a,b\r1,x\r1,y\r")):
        src = tmp_path / name
        src.write_bytes(raw)
        code, text = _cli(src, tmp_path)
        assert code == 0, text
        assert text.splitlines()[0] == "a,b"
        assert len(text.splitlines()) == 3
        (tmp_path / "out" / "o.csv").unlink()


def test_result_page_cuts_long_cells(client_alice, user):
    """The side-by-side tables of a result: a long sensitive value is cut on both sides, escaped."""
    long = "<i>" + "d" * 997  # 1,000 characters
    csv_text = "age,disease\n" + "".join(f"{30 + i % 2},{long if i == 0 else 'flu'}\n" for i in range(6))
    ds = make_dataset(user, csv_text, "res.csv", roles={"age": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE})
    job = finished_job(ds, k=2)
    html = page(client_alice.get(f"/jobs/{job.pk}/result/"))
    cut = f'<span class="cell-cut" title="1,000 characters; 100 shown">{escape(long[:100])}…</span>'
    assert html.count(cut) == 3  # original and anonymized rows, the attack report's row of that value
    assert "<i>ddd" not in html


def test_lattice_node_rows_cut_long_cells():
    """The node detail's rows (JSON for the page's script): cut cells and their full lengths."""
    import pandas as pd

    from anonymizer_app.views.lattice import comparison

    frame = pd.DataFrame({"age": ["30", "31"], "note": ["n" * 250, "short"]})
    output = pd.DataFrame({"age": ["[30-32)", "[30-32)"], "note": ["n" * 250, "short"]})
    table = comparison(frame, output, np.array([False, False]), 2, [])
    first, second = table["rows"]
    assert first["original"] == ["30", "n" * 100 + "…"]
    assert first["anonymized"] == ["[30-32)", "n" * 100 + "…"]
    assert first["cut"] == {"original": {1: 250}, "anonymized": {1: 250}}
    assert second["cut"] == {"original": {}, "anonymized": {}}
    assert first["changed"] == [True, False]


# ---- the streamed path (files above STREAM_THRESHOLD are read in blocks) ----------------------------------------
@pytest.fixture
def tiny_blocks(monkeypatch):
    from anonymizer_app.services import ingestion

    monkeypatch.setattr(ingestion, "STREAM_THRESHOLD", 1024)
    monkeypatch.setattr(ingestion, "STREAM_BLOCK", 4096)


FILLER = "".join(f"r{i},{i}\n" for i in range(2000))  # about 20 KB: several blocks
STREAMED_REFUSED = [
    ("a long cell in a late block", "a,b\n" + FILLER + "x," + "y" * 40_000 + "\n", "utf-8",
     "s.csv, line 2002, column 2 ('b'): a cell of 40,000 characters, more than the limit of 32,767"),
    ("a long quoted cell", 'a,b\n"q",1\n' + FILLER + 'x,"' + "y" * 40_000 + '"\n', "utf-8",
     "s.csv, line 2003, column 2 ('b'): a cell of 40,000 characters, more than the limit of 32,767"),
    ("a NUL in a late block", "a,b\n" + FILLER + "x,\x00\n", "utf-8",
     f"s.csv: not a text table (a NUL byte on line 2002); {TEXT_HINT}"),
    ("a NUL past the sniffed 64 KiB", "a,b\n" + FILLER * 5 + "x,\x00\n", "utf-8",
     f"s.csv: not a text table (a NUL byte on line 10002); {TEXT_HINT}"),
    ("a ragged line in a late block", "a,b\n" + FILLER + "x,y,z\n", "utf-8",
     "s.csv, line 2002: 3 field(s) where the first line has 2"),
    ("a repeated header name", "a,a\n" + FILLER, "utf-8",
     f"s.csv, line 1: the column name 'a' appears twice in the header (columns 1 and 2); rename them, {NO_HEADER}"),
    ("a long cell in UTF-16", "a,b\n" + FILLER + "x," + "y" * 40_000 + "\n", "utf-16",
     "s.csv, line 2002, column 2 ('b'): a cell of 40,000 characters, more than the limit of 32,767"),
]


@pytest.mark.parametrize("case", STREAMED_REFUSED, ids=[c[0] for c in STREAMED_REFUSED])
def test_streamed_upload_refused(case, client_alice, tiny_blocks):
    _, text, encoding, message = case
    before = state()
    r = upload(client_alice, "s.csv", text.encode(encoding))
    assert r.status_code == 200
    assert escape(message) in page(r)
    assert state() == before


@pytest.mark.parametrize("encoding, stored", [("utf-16", "utf-16"), ("latin-1", "windows-1252")])
def test_streamed_upload_of_other_encodings(encoding, stored, client_alice, user, tiny_blocks):
    text = "name,city\n" + FILLER + "Zoë,Forlì\n"
    r = upload(client_alice, "s.csv", text.encode(encoding))
    assert r.status_code == 302, page(r)[:2000]
    ds = Dataset.objects.get(owner=user)
    assert (ds.encoding, ds.n_rows) == (stored, 2001)
    from anonymizer_app.services import datasets

    assert datasets.dataset_rows(ds, 2000, 2001).values.tolist() == [["Zoë", "Forlì"]]
