"""services.exports.export_csv on columns long enough for engine.model.cells' hashing by object (rows sharing a str
object are hashed once): the same bytes as pandas' writer, whatever objects the rows hold, missing cells
included (written as their text, as before)."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.model.cells import SMALL
from anonymizer_app.services import exports


def reference(frame: pd.DataFrame, delimiter: str) -> str:
    """pandas' writer on every cell's text (a missing cell, None or NaN: 'nan'), formulas neutralized."""
    safe = pd.DataFrame({exports.neutralize(str(c)): [exports.neutralize("nan" if v is None else str(v))
                                                      for v in frame[c]] for c in frame.columns})
    return safe.to_csv(sep=delimiter, index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)


def shared(values: list, n: int, seed: int) -> np.ndarray:
    """n cells drawn from ``values``: every row holds one of a few objects."""
    labels = np.array(values, dtype=object)
    return labels[np.random.default_rng(seed).integers(0, len(labels), n)]


def copies(values: list, n: int, seed: int) -> np.ndarray:
    """The same cells, each row its own str object (equal values held by different objects)."""
    return np.array(["".join(list(str(v))) if isinstance(v, str) else v for v in shared(values, n, seed)],
                    dtype=object)


N = 3 * SMALL
TEXTS = ["x", "=1+2", "-5", "@a", "*", "[20, 30[", "é", "+x", "1e5"]


@pytest.mark.parametrize("make", [shared, copies])
@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_shared_and_distinct_objects(make, delimiter):
    frame = pd.DataFrame({"a": make(TEXTS, N, 1), "b": make(["1", "2", "3"], N, 2),
                          "c": np.array([f"v{i}" for i in range(N)], dtype=object)})  # no sharing at all
    assert exports.export_csv(frame, delimiter) == reference(frame, delimiter)


def test_missing_cells_keep_their_text():
    cells = shared(TEXTS, N, 3)
    cells[::7] = np.nan
    cells[::11] = None
    frame = pd.DataFrame({"a": cells, "b": shared(["p", "q"], N, 4)})
    assert exports.export_csv(frame, ",") == reference(frame, ",")


def test_a_cell_that_needs_quoting_goes_through_pandas():
    frame = pd.DataFrame({"a": shared(TEXTS + ["y,z"], N, 5), "b": shared(["1", "2"], N, 6)})
    assert exports.export_csv(frame, ",") == reference(frame, ",")


@pytest.mark.parametrize("extra", [[], ["y,z"]])  # pyarrow's bytes as they are; a quoted field: pandas' text
def test_the_file_sinks_bytes_are_the_texts(extra):
    frame = pd.DataFrame({"a": shared(TEXTS + extra, N, 7), "b": copies(["1", "2"], N, 8)})
    text = exports.export_csv(frame, ",")
    assert exports.export_csv_bytes(frame, ",") == text.encode("utf-8")
    assert exports.export_csv_bytes(frame, ",", header=False) == text.split("\n", 1)[1].encode("utf-8")
