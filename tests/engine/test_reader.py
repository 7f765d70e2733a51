"""Reading user tables: delimiter, header, encoding, malformed files, limits, Excel."""

from __future__ import annotations

import io

import pytest

from anonymizer_app.engine import Format, InputError, read_table, sniff


def _rows(frame):
    return [list(r) for r in frame.itertuples(index=False)]


# ---- delimiter and header ------------------------------------------------------------------------
@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_delimiters(delimiter):
    raw = delimiter.join(["name", "age", "city"]).encode() + b"\n"
    raw += delimiter.join(["Anna", "34", "Roma"]).encode() + b"\n"
    raw += delimiter.join(["Ben", "51", "Milano"]).encode() + b"\n"
    frame, fmt = read_table(raw, "t.csv")
    assert fmt == Format("csv", delimiter, "utf-8", True)
    assert list(frame.columns) == ["name", "age", "city"]
    assert _rows(frame) == [["Anna", "34", "Roma"], ["Ben", "51", "Milano"]]


def test_semicolon_file_with_commas_in_values():
    raw = b"name;note\nAnna;a, b, c\nBen;d, e, f\n"
    frame, fmt = read_table(raw, "t.csv")
    assert fmt.delimiter == ";"
    assert _rows(frame) == [["Anna", "a, b, c"], ["Ben", "d, e, f"]]


def test_quoted_fields_with_delimiter_and_newline():
    frame, _ = read_table(b'a,b\n"x, y",2\n"multi\nline",3\n', "q.csv")
    assert _rows(frame) == [["x, y", "2"], ["multi\nline", "3"]]


def test_header_detected_over_numbers():
    frame, fmt = read_table(b"age,zip\n34,16100\n51,16151\n", "h.csv")
    assert fmt.header is True
    assert list(frame.columns) == ["age", "zip"]


def test_no_header_when_first_row_is_numeric_like_the_rest():
    frame, fmt = read_table(b"1,34,5\n2,51,6\n3,22,7\n", "n.csv")
    assert fmt.header is False
    assert list(frame.columns) == ["column_1", "column_2", "column_3"]
    assert _rows(frame) == [["1", "34", "5"], ["2", "51", "6"], ["3", "22", "7"]]


def test_header_override():
    frame, fmt = read_table(b"1,34\n2,51\n", "o.csv", fmt=Format("csv", ",", "utf-8", True))
    assert list(frame.columns) == ["1", "34"]
    assert _rows(frame) == [["2", "51"]]


def test_blank_header_cell_is_reported():
    # an empty name is reported by position (the user may read the line as data instead)
    with pytest.raises(InputError) as info:
        read_table(b"a,,c\nx,y,z\n", "b.csv", fmt=Format("csv", ",", "utf-8", True))
    assert str(info.value) == ("b.csv, line 1: column 2 has no name in the header; name it, or read the first line "
                               "as data (no header row)")
    frame, _ = read_table(b"a,,c\nx,y,z\n", "b.csv", fmt=Format("csv", ",", "utf-8", False))
    assert list(frame.columns) == ["column_1", "column_2", "column_3"]


def test_bom_is_dropped():
    frame, _ = read_table(b"\xef\xbb\xbfa,b\n1,2\n", "bom.csv")
    assert list(frame.columns) == ["a", "b"]


# ---- encodings -----------------------------------------------------------------------------------
def test_utf8_with_non_ascii():
    raw = "nome;città\nJosé;Forlì\nZoë;Cefalù\n".encode("utf-8")
    frame, fmt = read_table(raw, "u.csv")
    assert fmt.encoding == "utf-8"
    assert list(frame.columns) == ["nome", "città"]
    assert _rows(frame) == [["José", "Forlì"], ["Zoë", "Cefalù"]]


def test_windows_1252():
    raw = "nome;città\nJosé;Forlì\nZoë;Cefalù €\n".encode("windows-1252")
    frame, fmt = read_table(raw, "w.csv")
    assert fmt.encoding == "windows-1252"
    assert _rows(frame) == [["José", "Forlì"], ["Zoë", "Cefalù €"]]


def test_utf8_character_cut_by_the_sniffing_window():
    # 5-byte prefix, then 5-byte lines whose 2-byte 'é' starts at 5 + 5i: i = 13106 puts a first byte on
    # offset 65535, the last byte of the 64 KiB sniffing window.
    raw = b"ab;b\n" + "é;x\n".encode("utf-8") * 20000
    assert raw[65535:65537] == "é".encode("utf-8")
    assert sniff(raw, "big.csv").encoding == "utf-8"
    frame, _ = read_table(raw, "big.csv")
    assert frame.shape == (20000, 2)
    assert set(frame["ab"]) == {"é"}


# ---- malformed input -----------------------------------------------------------------------------
@pytest.mark.parametrize("raw", [b"", b"  \n\n\t\n"])
def test_empty_file(raw):
    with pytest.raises(InputError, match=r"^e\.csv: the file is empty$"):
        read_table(raw, "e.csv")


def test_header_only():
    with pytest.raises(InputError, match="no data rows"):
        read_table(b"a,b,c\n", "h.csv")


def test_binary_file():
    with pytest.raises(InputError, match=r"^image\.csv: not a text table \(a NUL byte on line 3\)"):
        read_table(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image.csv")


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read the file"):
        read_table(tmp_path / "nope.csv")


def test_ragged_csv_long_row_names_the_line():
    # The field count of every line is checked before pandas parses the text.
    with pytest.raises(InputError) as info:
        read_table(b"a,b,c\n1,2,3\n4,5,6\n7,8,9,10\n", "r.csv")
    assert str(info.value) == "r.csv, line 4: 4 field(s) where the first line has 3"


def test_ragged_csv_short_row_names_the_line():
    # pandas would pad the short row with '' silently; the reader refuses it.
    with pytest.raises(InputError) as info:
        read_table(b"a,b,c\n1,2,3\n4,5\n7,8,9\n", "s.csv")
    assert str(info.value) == "s.csv, line 3: 2 field(s) where the first line has 3"


def test_duplicate_header_names():
    with pytest.raises(InputError, match="the column name 'a' appears twice in the header"):
        read_table(b"a,b,a\n1,2,3\n", "d.csv", fmt=Format("csv", ",", "utf-8", True))


def test_undecodable_with_the_chosen_encoding():
    with pytest.raises(InputError, match="cannot be decoded as utf-8"):
        read_table("a\né\n".encode("latin-1"), "x.csv", fmt=Format("csv", ",", "utf-8", True))


# ---- limits --------------------------------------------------------------------------------------
RAW_10 = b"a,b,c\n" + b"".join(b"%d,%d,%d\n" % (i, i, i) for i in range(10))


def test_row_limit():
    assert read_table(RAW_10, "l.csv", max_rows=10)[0].shape == (10, 3)
    with pytest.raises(InputError, match="l.csv: 10 rows, more than the limit of 9"):
        read_table(RAW_10, "l.csv", max_rows=9)


def test_column_limit():
    assert read_table(RAW_10, "l.csv", max_columns=3)[0].shape == (10, 3)
    with pytest.raises(InputError, match="l.csv: 3 columns, more than the limit of 2"):
        read_table(RAW_10, "l.csv", max_columns=2)


def test_nrows_preview():
    frame, _ = read_table(RAW_10, "l.csv", nrows=4)
    assert _rows(frame) == [[str(i)] * 3 for i in range(4)]


# ---- text stays text -----------------------------------------------------------------------------
def test_missing_value_markers_stay_text():
    frame, _ = read_table(b"city,code\nNone,1\nNA,2\nNaN,3\n,4\nnull,5\nN/A,06\n", "n.csv")
    assert frame["city"].tolist() == ["None", "NA", "NaN", "", "null", "N/A"]
    assert frame["code"].tolist() == ["1", "2", "3", "4", "5", "06"]  # leading zero kept
    assert frame["city"].isna().sum() == 0


# ---- Excel ---------------------------------------------------------------------------------------
def _xlsx(rows) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    for r in rows:
        ws.append(r)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def test_xlsx():
    raw = _xlsx([["name", "age", "city"], ["Anna", 34, "None"], ["Ben", 51, "NA"], ["Zoë", 7.5, None]])
    frame, fmt = read_table(raw, "t.xlsx")
    assert fmt.kind == "xlsx"
    assert list(frame.columns) == ["name", "age", "city"]
    assert _rows(frame) == [["Anna", "34", "None"], ["Ben", "51", "NA"], ["Zoë", "7.5", ""]]


def test_xlsx_detected_by_content_whatever_the_name():
    raw = _xlsx([["a"], ["x"]])
    assert sniff(raw, "upload.bin").kind == "xlsx"


def test_broken_xlsx():
    with pytest.raises(InputError, match=r"x\.xlsx: not a readable \.xlsx workbook"):
        read_table(b"PK\x03\x04garbage", "x.xlsx")


def test_xlsx_duplicate_header():
    with pytest.raises(InputError, match="'a' appears twice"):
        read_table(_xlsx([["a", "a"], [1, 2]]), "d.xlsx")
