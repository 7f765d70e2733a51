"""services.exports.iter_output_csv: the streamed CSV download of a stored result, read a row group at a time as
Parquet's dictionary codes, gives the text pandas' writer gives for every published cell (formulas neutralized,
suppressed rows kept or left out), over several row groups; fields that need quoting (the delimiter, a quote, a
line break) go through pandas' writer and come out the same."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from anonymizer_app.services import exports, results, storage


def reference(frame: pd.DataFrame, suppressed: np.ndarray, delimiter: str, drop: bool) -> str:
    """pandas' writer on each kept cell's text, formulas neutralized (by hand: a leading = + - @ gets a ')."""
    def safe(text: str) -> str:
        if text[:1] in ("=", "+", "-", "@", "\t", "\r") and not text.lstrip("+-").replace(".", "", 1).isdigit():
            return "'" + text
        return text

    kept = frame[~suppressed] if drop else frame
    out = pd.DataFrame({safe(c): [safe(v) for v in kept[c]] for c in kept.columns})
    return out.to_csv(sep=delimiter, index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)


def stored(tmp_path, monkeypatch, frame: pd.DataFrame, suppressed: np.ndarray, group: int):
    path = tmp_path / "out.parquet"
    rows = np.arange(len(frame), dtype=np.int64)
    pq.write_table(results.output_table(frame, suppressed, rows), path, row_group_size=group)
    monkeypatch.setattr(storage, "output_path", lambda result: path)
    # rows stored outside any job (result None): a run's rows, which the synthetic sets' check passes by
    # (its refusals are tests/test_synthesis_gate.py's)
    monkeypatch.setattr(exports, "checked_for_publication", lambda result: None)
    return path


def table(n: int, seed: int, extra: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    pick = lambda values: np.array(values, dtype=object)[rng.integers(0, len(values), n)]  # noqa: E731
    frame = pd.DataFrame({"age": pick(["[20-40[", "[40-60[", "*", "-5", "17"]),
                          "=cmd": pick(["Female", "Male", "*"]),
                          "note": pick(["ok", "=1+1", "@SUM(A1)", "", "+x"] + extra)})
    return frame, rng.random(n) < 0.2


@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_streamed_text_is_pandas_writers(tmp_path, monkeypatch, drop, delimiter):
    frame, suppressed = table(2500, 1, [])
    path = stored(tmp_path, monkeypatch, frame, suppressed, 400)
    assert pq.ParquetFile(path).metadata.num_row_groups == 7
    monkeypatch.setattr(exports, "export_csv", None)  # no field needs quoting: no group goes through a frame
    assert "".join(exports.iter_output_csv(None, delimiter, drop)) == reference(frame, suppressed, delimiter, drop)


@pytest.mark.parametrize("drop", [False, True])
def test_fields_that_need_quoting(tmp_path, monkeypatch, drop):
    frame, suppressed = table(1200, 2, ['a,b', 'say "hi"', "two\nlines"])
    stored(tmp_path, monkeypatch, frame, suppressed, 500)
    assert "".join(exports.iter_output_csv(None, ",", drop)) == reference(frame, suppressed, ",", drop)


def test_every_row_of_a_group_left_out(tmp_path, monkeypatch):
    frame, _ = table(900, 3, [])
    suppressed = np.zeros(900, dtype=bool)
    suppressed[300:600] = True  # the whole second group
    stored(tmp_path, monkeypatch, frame, suppressed, 300)
    monkeypatch.setattr(exports, "export_csv", None)
    assert "".join(exports.iter_output_csv(None, ",", True)) == reference(frame, suppressed, ",", True)
