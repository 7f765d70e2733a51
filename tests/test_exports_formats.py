"""Exports of a result in every format (CSV, TSV, Parquet, Excel, JSON lines): each read back equals the CSV
download; numbers only where every published value is a number of a numeric column; formulas neutralized
in Excel exactly as in the CSV; owner-only; the result page offers the formats."""

from __future__ import annotations

import csv
import io
import json

import openpyxl
import pandas as pd
import pytest

from anonymizer_app.services import exports
from tests.anonymizer_helpers import finished_job, make_dataset

pytestmark = pytest.mark.django_db


def csv_frame(body: bytes, delimiter: str = ",") -> pd.DataFrame:
    rows = list(csv.reader(io.StringIO(body.decode("utf-8")), delimiter=delimiter))
    return pd.DataFrame(rows[1:], columns=rows[0])


def xlsx_frame(body: bytes) -> tuple[pd.DataFrame, list[list[str]]]:
    sheet = openpyxl.load_workbook(io.BytesIO(body)).active
    rows = [list(r) for r in sheet.iter_rows()]
    header = [c.value for c in rows[0]]
    values = [[str(c.value) for c in r] for r in rows[1:]]
    types = [[c.data_type for c in r] for r in rows[1:]]
    return pd.DataFrame(values, columns=header), types


@pytest.fixture
def job(user):
    return finished_job(make_dataset(user), k=2, suppression_limit=0.5)


def download(client, job, fmt: str, **extra) -> bytes:
    response = client.get(f"/jobs/{job.pk}/result/anonymized.csv", {"format": fmt, **extra})
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_every_format_reads_back_equal_to_the_csv(client_alice, job):
    reference = csv_frame(download(client_alice, job, "csv"))
    assert list(reference.columns) == ["age", "zip", "sex", "note", "disease"]  # the identifier removed
    assert csv_frame(download(client_alice, job, "tsv"), "\t").equals(reference)
    neutral = reference.map(str)
    parquet = pd.read_parquet(io.BytesIO(download(client_alice, job, "parquet"))).astype(str)
    assert parquet.map(exports.neutralize).equals(neutral)
    lines = download(client_alice, job, "jsonl").decode("utf-8").splitlines()
    assert len(lines) == len(reference)
    jsonl = pd.DataFrame([json.loads(line) for line in lines]).astype(str)
    assert jsonl.map(exports.neutralize).equals(neutral)
    sheet, _ = xlsx_frame(download(client_alice, job, "xlsx"))
    assert sheet.equals(neutral)  # the workbook holds the neutralized text, as the CSV


def test_excel_neutralizes_formulas_and_keeps_text_as_text(client_alice, job):
    sheet, types = xlsx_frame(download(client_alice, job, "xlsx"))
    notes = sheet["note"].tolist()
    assert "'=cmd" in notes and "=cmd" not in notes  # as the CSV writes it
    assert "-2" in notes  # a number is data, not a formula (CSV: the same)
    note = list(sheet.columns).index("note")
    assert {row[note] for row in types} == {"s"}  # text cells, never formulas ("f") nor numbers
    body = download(client_alice, job, "xlsx")
    assert b"<f>" not in body  # no formula element anywhere in the workbook


def test_column_kinds_by_hand():
    frame = pd.DataFrame({"n": ["1", "-20", "0"], "lead": ["007", "1", "2"], "d": ["1.5", "2.25", "-0.5"],
                          "d0": ["1.50", "2.0", "3.0"], "gen": ["34", "[30, 40[", "*"], "s": ["1", "2", "3"]})
    types = {"n": "integer", "lead": "integer", "d": "decimal", "d0": "decimal", "gen": "integer", "s": "string"}
    assert exports.column_kinds(frame, types) == {"n": "integer", "lead": "text", "d": "decimal", "d0": "text",
                                                  "gen": "text", "s": "text"}
    parquet = pd.read_parquet(io.BytesIO(exports.export_parquet(frame, types)))
    assert parquet["n"].tolist() == [1, -20, 0] and parquet["d"].tolist() == [1.5, 2.25, -0.5]
    assert parquet["lead"].tolist() == ["007", "1", "2"] and parquet["gen"].tolist() == ["34", "[30, 40[", "*"]
    first = json.loads(exports.export_jsonl(frame, types).decode().splitlines()[0])
    assert first == {"n": 1, "lead": "007", "d": 1.5, "d0": "1.50", "gen": "34", "s": "1"}
    sheet = openpyxl.load_workbook(io.BytesIO(exports.export_xlsx(frame, types))).active
    second = [(c.value, c.data_type) for c in list(sheet.iter_rows())[2]]
    assert second == [(-20, "n"), ("1", "s"), (2.25, "n"), ("2.0", "s"), ("[30, 40[", "s"), ("2", "s")]


def test_format_choice_is_checked_and_owner_only(client_alice, job, other_user, client):
    response = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv", {"format": "xls"})
    assert response.status_code == 400 and b"format must be one of" in response.content
    client.force_login(other_user)
    assert client.get(f"/jobs/{job.pk}/result/anonymized.csv", {"format": "parquet"}).status_code == 404


def test_drop_suppressed_and_file_names(client_alice, job):
    from anonymizer_app.services import results

    _, suppressed = results.load_output(job.result)
    everything = pd.read_parquet(io.BytesIO(download(client_alice, job, "parquet")))
    kept = pd.read_parquet(io.BytesIO(download(client_alice, job, "parquet", drop_suppressed="1")))
    assert len(everything) == len(suppressed) and len(kept) == len(suppressed) - int(suppressed.sum())
    assert len(kept) == len(csv_frame(download(client_alice, job, "csv", drop_suppressed="1")))
    response = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv", {"format": "jsonl"})
    assert response["Content-Disposition"].endswith('-anonymized.jsonl"')


def test_result_page_offers_the_formats(client_alice, job):
    page = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    for value in ("csv", "tsv", "parquet", "xlsx", "jsonl"):
        assert f'<option value="{value}"' in page
    assert f"/jobs/{job.pk}/result/export-sql/" in page


def test_a_workbook_over_the_sheet_limit_is_refused(monkeypatch):
    monkeypatch.setattr(exports, "XLSX_MAX_ROWS", 2)
    with pytest.raises(exports.ExportError, match="more than an Excel worksheet holds"):
        exports.export_xlsx(pd.DataFrame({"a": ["1", "2", "3"]}))


def test_excel_refuses_control_characters_it_cannot_store():
    with pytest.raises(exports.ExportError, match=r"column 'a': the value 'x\\x01y' holds a control character"):
        exports.export_xlsx(pd.DataFrame({"a": ["ok", "x\x01y"]}))
