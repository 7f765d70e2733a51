"""services.exports.export_csv writes through pyarrow when no field needs quoting, and then writes exactly the
bytes pandas' csv writer would (QUOTE_MINIMAL, '\\n'); a field that needs quoting goes through pandas."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.services import exports


def reference(frame: pd.DataFrame, delimiter: str) -> str:
    """The export as pandas writes it: every cell as text, formulas neutralized (exports.neutralize)."""
    safe = pd.DataFrame({exports.neutralize(str(c)): [exports.neutralize(str(v)) for v in frame[c]]
                         for c in frame.columns})
    return safe.to_csv(sep=delimiter, index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)


CASES = [
    (pd.DataFrame({"a": ["x", "=1+2", "-5", "", "é", "*"], "b c": [1, 2, 3, 4, 5, 6]}), ","),
    (pd.DataFrame({"a": ["x", "y;z"], "b": ["1", "2"]}), ";"),  # the delimiter in a cell: quoted
    (pd.DataFrame({"a": ["x", "y;z"]}), ","),  # another table's delimiter: no quote needed
    (pd.DataFrame({"a": ["x", ""]}), ","),  # one column with an empty cell: the csv module writes ""
    (pd.DataFrame({"a": ["x", 'q"r'], "b": ["1", "2"]}), "\t"),
    (pd.DataFrame({"a": ["l\nm", "k"], "b": ["", ""]}), ","),
    (pd.DataFrame({"a;b": ["1"], "c": ["2"]}), ";"),  # a header that needs quoting
    (pd.DataFrame({"a": [], "b": []}), ","),
    (pd.DataFrame({"a": ["1", "2"]}, index=[5, 9]), "|"),
    (pd.DataFrame({"a": ["x", "y"], "b": ["", "z"]}), ","),
    (pd.DataFrame({"@a": ["x\r", "+y"]}), ","),
]


@pytest.mark.parametrize("frame,delimiter", CASES)
def test_export_csv_writes_what_pandas_writes(frame, delimiter):
    assert exports.export_csv(frame, delimiter) == reference(frame, delimiter)


def test_a_large_table_goes_through_pyarrow_with_the_same_bytes(monkeypatch):
    rng = np.random.default_rng(0)
    values = np.array(["Private", "Self-emp", "=cmd|' /C calc'!A0", "-3.5", "[20-40)", "*"], dtype=object)
    frame = pd.DataFrame({c: values[rng.integers(0, len(values), 50_000)] for c in ("w", "x", "y")})
    expected = reference(frame, ";")
    used = []
    original = exports._arrow_csv
    monkeypatch.setattr(exports, "_arrow_csv", lambda *a: used.append(1) or original(*a))
    text = exports.export_csv(frame, ";")
    assert used and text == expected
    assert "'=cmd|' /C calc'!A0" in text  # neutralized
    assert "'-3.5" not in text and "-3.5" in text  # a number stays a number


def test_a_field_that_needs_quoting_is_written_by_pandas():
    frame = pd.DataFrame({"a": ["x", "y;z"], "b": ["1", "2"]})
    assert exports._arrow_csv(["a", "b"], [exports._neutralized_codes(frame[c]) for c in frame.columns], ";") is None
    assert exports.export_csv(frame, ";") == 'a;b\nx;1\n"y;z";2\n'
