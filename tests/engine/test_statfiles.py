"""Stata/SPSS/SAS files (engine/io/statfiles.py): files written here with pyreadstat from sdcMicro's testdata
(value labels on urbrur, sex and part of roof, variable labels), read back through the engine's reader
(labels shown as the values), written again as .dta/.sav and read with pyreadstat; bad names refused by
name; cut-short, garbage and oversized files refused with the file's name."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from anonymizer_app.engine import read_table
from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.io.reader import Limits, sniff
from anonymizer_app.engine.io.statfiles import (
    SAS_MAGIC,
    StatMetadata,
    file_labels,
    read_metadata,
    read_statfile,
    stat_kind,
    write_statfile,
)

SDCMICRO = Path(__file__).resolve().parents[1] / "sdcmicro_reference"  # copies of ../shared/datasets/sdcmicro
VALUE_LABELS = {"urbrur": {1: "urban", 2: "rural"}, "sex": {1: "male", 2: "female"},
                "roof": {2: "tiles", 4: "metal sheets"}}  # roof codes 1, 3, 5, 9 have no label
VARIABLE_LABELS = {"urbrur": "Urban or rural area", "sex": "Sex of the person", "income": "Income (local currency)"}


def labelled_file(tmp_path: Path, kind: str, rows: int = 300) -> tuple[Path, pd.DataFrame]:
    """sdcMicro's testdata (first rows), written with value and variable labels; returns the path and the data."""
    table = pd.read_csv(SDCMICRO / "testdata.csv")[["urbrur", "roof", "sex", "age", "income", "savings"]]
    # the first rows, and 10 with the roof codes that have no label (5, 6, 9: further down the file)
    data = pd.concat([table.head(rows - 10), table[table["roof"] >= 5].head(10)], ignore_index=True)
    data = data.astype(float)
    data.loc[3, "income"] = np.nan  # a system-missing cell
    path = tmp_path / f"testdata.{kind}"
    writer = pyreadstat.write_dta if kind == "dta" else pyreadstat.write_sav
    writer(data, path, column_labels=VARIABLE_LABELS, variable_value_labels=VALUE_LABELS)
    return path, data


def shown(value: float, labels: dict) -> str:
    if np.isnan(value):
        return ""
    return labels.get(int(value), str(int(value)) if float(value).is_integer() else repr(value))


@pytest.mark.parametrize("kind", ["sav", "dta"])
def test_read_shows_labels_and_keeps_codes_without_one(tmp_path, kind):
    path, data = labelled_file(tmp_path, kind)
    raw = path.read_bytes()
    assert stat_kind(raw[:64]) == kind and sniff(raw, path.name).kind == kind
    frame, fmt = read_table(path)
    assert fmt.kind == kind
    assert list(frame.columns) == list(data.columns)
    for column in data.columns:
        expected = [shown(v, VALUE_LABELS.get(column, {})) for v in data[column]]
        assert frame[column].tolist() == expected, column
    assert set(frame["roof"]) >= {"tiles", "metal sheets", "5", "9"}
    metadata = read_metadata(path, path.name, kind)
    assert metadata.variable_labels == VARIABLE_LABELS
    assert {c: {int(k): v for k, v in labels.items()} for c, labels in metadata.value_labels.items()} == VALUE_LABELS


@pytest.mark.parametrize("source_kind, target_kind", [("sav", "dta"), ("dta", "sav"), ("sav", "sav")])
def test_write_reattaches_labels_where_the_values_are_still_labels(tmp_path, source_kind, target_kind):
    path, data = labelled_file(tmp_path, source_kind)
    frame, metadata = read_statfile(path, path.name, source_kind)
    frame["age"] = ["[20-40)" if 20 <= float(a) < 40 else "*" for a in frame["age"]]  # generalized: text
    frame.loc[0, "sex"] = "*"  # a suppressed cell: sex can no longer be codes
    kinds = {"income": "integer", "savings": "integer", "urbrur": "text", "roof": "text", "sex": "text",
             "age": "text"}
    raw = write_statfile(frame, target_kind, kinds, metadata)
    reader = pyreadstat.read_dta if target_kind == "dta" else pyreadstat.read_sav
    back, meta = reader(io.BytesIO(raw))
    assert back["urbrur"].tolist() == data["urbrur"].tolist()  # codes again
    assert back["roof"].tolist() == data["roof"].tolist()  # labelled and unlabelled codes
    assert {int(k): v for k, v in meta.variable_value_labels["urbrur"].items()} == VALUE_LABELS["urbrur"]
    assert {int(k): v for k, v in meta.variable_value_labels["roof"].items()} == VALUE_LABELS["roof"]
    assert "sex" not in meta.variable_value_labels  # written as its text
    assert back["sex"].tolist() == ["*"] + [VALUE_LABELS["sex"][int(v)] for v in data["sex"][1:]]
    assert back["age"].tolist() == frame["age"].tolist()
    assert np.isnan(back["income"][3]) and back["income"].drop(3).tolist() == data["income"].drop(3).tolist()
    assert meta.column_names_to_labels["income"] == VARIABLE_LABELS["income"]


def test_write_without_labels_types_numbers_and_text(tmp_path):
    frame = pd.DataFrame({"zip": ["10115", "", "80331"], "town": ["Berlin", "", "München"],
                          "rate": ["0.25", "1.5", ""]})
    raw = write_statfile(frame, "dta", {"zip": "integer", "town": "text", "rate": "decimal"})
    back, _ = pyreadstat.read_dta(io.BytesIO(raw))
    assert back["zip"].tolist()[::2] == [10115.0, 80331.0] and np.isnan(back["zip"][1])
    assert back["town"].tolist() == ["Berlin", "", "München"]
    assert back["rate"].tolist()[:2] == [0.25, 1.5]


@pytest.mark.parametrize("kind, name, message", [
    ("dta", "a" * 33, "a Stata name has at most 32 characters, this one 33"),
    ("dta", "2nd", "not a valid Stata name"),
    ("dta", "zip code", "not a valid Stata name"),
    ("dta", "_n", "not a valid Stata name"),
    ("sav", "x" * 65, "an SPSS name has at most 64 bytes"),
    ("sav", "BY", "not a valid SPSS name"),
    ("sav", "zip code", "not a valid SPSS name"),
])
def test_invalid_names_are_refused_by_name(kind, name, message):
    with pytest.raises(InputError, match=f"column '{name}': {message}"):
        write_statfile(pd.DataFrame({name: ["1"]}), kind)


def test_long_text_cells_are_written(tmp_path):
    frame = pd.DataFrame({"note": ["x" * 3000, "short"]})
    back, _ = pyreadstat.read_dta(io.BytesIO(write_statfile(frame, "dta")))
    assert back["note"].tolist() == frame["note"].tolist()


@pytest.mark.parametrize("kind", ["sav", "dta"])
def test_cut_short_and_garbage_files_are_refused_naming_the_file(tmp_path, kind):
    path, _ = labelled_file(tmp_path, kind)
    raw = path.read_bytes()
    for damaged in (raw[: len(raw) // 3], raw[:200], raw[:64] + bytes(range(256)) * 8):
        with pytest.raises(InputError, match=rf"^survey\.{kind}: not a readable .* file"):
            read_table(damaged, f"survey.{kind}")


def test_sas_magic_with_garbage_is_refused():
    with pytest.raises(InputError, match=r"^old\.sas7bdat: not a readable SAS \.sas7bdat file"):
        read_table(SAS_MAGIC + b"\x00" * 2000, "old.sas7bdat")


def test_caps_are_checked_from_the_header(tmp_path):
    path, _ = labelled_file(tmp_path, "sav", rows=50)
    with pytest.raises(InputError, match=r"testdata\.sav: 50 rows, more than the limit of 49"):
        read_table(path, limits=Limits(max_rows=49))
    with pytest.raises(InputError, match=r"testdata\.sav: 6 columns, more than the limit of 5"):
        read_table(path, limits=Limits(max_columns=5))
    with pytest.raises(InputError, match=r"the name of column 1 has 6 characters, more than the limit of 3"):
        read_table(path, limits=Limits(max_header_chars=3))
    frame, _ = read_table(path, nrows=7)
    assert len(frame) == 7


def test_file_labels_of_other_files_is_none(tmp_path):
    csv = tmp_path / "a.csv"
    csv.write_text("a\n1\n")
    assert file_labels(csv) is None and file_labels(tmp_path / "absent.sav") is None
    path, _ = labelled_file(tmp_path, "dta", rows=5)
    labels = file_labels(path)
    assert isinstance(labels, StatMetadata) and labels.kind == "dta" and "sex" in labels.value_labels


def test_old_stata_versions_are_recognized(tmp_path):
    frame = pd.DataFrame({"a": [1.0, 2.0]})
    for version in (8, 12):
        path = tmp_path / f"v{version}.dta"
        pyreadstat.write_dta(frame, path, version=version)
        assert stat_kind(path.read_bytes()[:64]) == "dta"
        assert read_table(path)[0]["a"].tolist() == ["1", "2"]


def test_a_cell_over_the_cap_is_refused_naming_row_and_column(tmp_path):
    path = tmp_path / "notes.dta"
    pyreadstat.write_dta(pd.DataFrame({"id": [1.0, 2.0, 3.0], "note": ["short", "x" * 50, "y"]}), path)
    with pytest.raises(InputError, match=r"notes\.dta, row 2, column 'note': a cell of 50 characters, more than "
                                         r"the limit of 10"):
        read_table(path, limits=Limits(max_cell_chars=10))
    assert read_table(path, limits=Limits(max_cell_chars=50))[0]["note"].tolist() == ["short", "x" * 50, "y"]
