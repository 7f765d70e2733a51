"""The CSV of a frame whose columns are Categoricals (the run's coded QI columns, handed to `manage.py anonymize`'s
CSV sink as they are: issue 32) is byte for byte the CSV of the same frame with object cells, and what Python's csv
module writes from the cells with formulas neutralized as the product does (a leading apostrophe before =, +, -, @,
tab, CR and their full-width forms, numbers left alone), done here without the product's code."""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.run.sinks import write_to
from anonymizer_app.management.common import CsvSink
from anonymizer_app.services import exports

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _safe(text: str) -> str:
    if text[:1] in ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20") and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def _reference(frame: pd.DataFrame, delimiter: str, header: bool = True) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    if header:
        writer.writerow([_safe(str(c)) for c in frame.columns])
    for row in frame.astype(object).itertuples(index=False):
        writer.writerow([_safe(str(v)) for v in row])
    return out.getvalue().encode("utf-8")


def _frame(labels: list[list[str]], rows: int, seed: int, unused: list[str] = ()) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    columns = {}
    for i, values in enumerate(labels):
        codes = rng.integers(0, len(values), rows)
        categories = pd.Index(list(values) + [u for u in unused if u not in values], dtype=object)
        columns[f"c{i}"] = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(categories))
    columns["plain"] = np.array([f"p{v}" for v in rng.integers(0, 5, rows)], dtype=object)
    return pd.DataFrame(columns)


CASES = [
    ([["Male", "Female", "*"], ["[20-30[", "[30-40[", "*"], ["=1+2", "-5", "+x", "@a", "\uff1dsum", "1e5"]], []),
    ([["a", "b"], ["x;y", "z"]], []),  # a delimiter in a label: quoted
    ([["a", "b"], ['say "hi"', "z"]], []),
    ([["a", "b"], ["line\nbreak", "z"]], []),
    ([["a", "b"], ["c", "d"]], ["un;used", 'un"used']),  # an unused label needing quotes changes nothing
    ([["a", "b"], ["c", ""]], []),  # an empty label
    ([["é", "日本"], ["ü", "ß"]], []),
]


@pytest.mark.parametrize("labels,unused", CASES)
@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_coded_columns_write_the_bytes_of_their_cells(labels, unused, delimiter):
    frame = _frame(labels, 500, 1, unused)
    cells = frame.astype(object)
    coded = exports.export_csv_bytes(frame, delimiter=delimiter)
    assert coded == exports.export_csv_bytes(cells, delimiter=delimiter)
    assert coded == _reference(cells, delimiter)
    assert exports.export_csv_bytes(frame, delimiter=delimiter, header=False) == _reference(cells, delimiter, False)


def test_one_column_with_an_empty_label_is_written_as_the_csv_module_does():
    frame = pd.DataFrame({"only": pd.Categorical.from_codes([0, 1, 1, 0], categories=["a", ""])})
    assert exports.export_csv_bytes(frame) == _reference(frame.astype(object), ",") == b'only\na\n""\n""\na\n'


def test_missing_cells_and_nul_texts_take_the_cell_path():
    frame = pd.DataFrame({"a": pd.Categorical(["x", None, "x", "y"]), "b": pd.Categorical(["n\x00", "n", "n", "m"])})
    cells = pd.DataFrame({"a": np.array(["x", np.nan, "x", "y"], dtype=object),
                          "b": np.array(["n\x00", "n", "n", "m"], dtype=object)})
    assert exports.export_csv_bytes(frame) == exports.export_csv_bytes(cells)


@pytest.mark.parametrize("rows", [0, 1, 40_000, 70_000])
def test_the_cli_sink_writes_coded_chunks_as_it_wrote_their_cells(rows):
    frame = _frame(CASES[0][0], rows, 3)
    qi = ["c0", "c1", "c2"]
    coded, plain = io.BytesIO(), io.BytesIO()
    write_to(CsvSink(coded, ";"), frame, np.zeros(rows, dtype=bool), np.arange(rows), qi)

    class CellSink(CsvSink):
        takes_codes = False

    write_to(CellSink(plain, ";"), frame, np.zeros(rows, dtype=bool), np.arange(rows), qi)
    assert coded.getvalue() == plain.getvalue() == _reference(frame.astype(object), ";")


@pytest.mark.parametrize("rows", [4095, 4096, 20_000])
@pytest.mark.parametrize("labels", [CASES[0][0], CASES[6][0], [["a", "b"], ["c", ""]]])
def test_repeated_rows_are_written_as_pyarrow_writes_them(rows, labels):
    """From DISTINCT_ROWS_MIN rows each distinct row's line is made once (exports._distinct_row_bytes)."""
    frame = _frame(labels, rows, 5)
    expected = _reference(frame.astype(object), ",")
    assert exports.export_csv_bytes(frame) == exports.export_csv_bytes(frame.astype(object)) == expected


def test_mostly_distinct_rows_and_keys_beyond_64_bits_take_pyarrow():
    rng = np.random.default_rng(9)
    rows = 6000
    ids = np.array([f"id{i}" for i in rng.permutation(rows)], dtype=object)  # every row distinct
    wide = {f"w{i}": pd.Categorical.from_codes(rng.integers(0, 3000, rows), categories=[f"v{j}" for j in range(3000)])
            for i in range(6)}  # 3000**6 > 2**62: no single key
    for frame in (pd.DataFrame({"id": ids, "sex": rng.choice(["M", "F"], rows)}), pd.DataFrame(wide)):
        assert exports.export_csv_bytes(frame, delimiter=";") == _reference(frame.astype(object), ";")
