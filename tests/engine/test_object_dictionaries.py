"""A table of text objects is dictionary-encoded on arrival (Table._object_columns): the same frame, types,
missing values and leaf codes as reading every row (``encode_objects=False``), whatever objects the cells hold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import anonymize
from anonymizer_app.engine.errors import EngineError
from anonymizer_app.engine.model.table import Role, Table

ROLES = {"a": Role.QUASI_IDENTIFYING, "b": Role.QUASI_IDENTIFYING, "s": Role.SENSITIVE}
VALUES = ["17", "18", " 19", "NA", "", "na ", "?", "x", "N/A", "20"]


def _frame(seed: int, rows: int, fresh_objects: bool, odd: object = "no") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cols = {}
    for c in ("a", "b", "s", "other"):
        picked = rng.choice(VALUES, rows)
        # fresh_objects: equal texts held by different str objects (a parser that does not intern)
        one = {v: v for v in VALUES}  # one str object per text
        cells = np.array(["".join(list(str(v))) if fresh_objects else one[str(v)] for v in picked], dtype=object)
        cols[c] = cells
    if odd != "no":  # one cell of b that is no str
        cols["b"][rows // 2] = odd
    return pd.DataFrame(cols)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rows", [50, 5000])  # below and above cells.SMALL (hashing by address)
@pytest.mark.parametrize("fresh_objects", [False, True])
@pytest.mark.parametrize("odd", ["no", 17, None, float("nan")])
def test_encoded_on_arrival_equals_every_row_read(seed, rows, fresh_objects, odd):
    frame = _frame(seed, rows, fresh_objects, odd)
    before = frame.copy()
    ids = [id(v) for v in frame["a"]]
    fast = Table(frame, dict(ROLES), na_values=("", "NA", "N/A", "?"))
    slow = Table(frame.copy(), dict(ROLES), na_values=("", "NA", "N/A", "?"), encode_objects=False)
    assert not slow.dictionaries
    # a column holding a non-str cell (a number, None, NaN) is read row by row
    assert set(fast.dictionaries) == ({"a", "b", "s"} if odd == "no" else {"a", "s"})
    pd.testing.assert_frame_equal(fast.frame, slow.frame)
    assert fast.types == slow.types and fast.holding_missing == slow.holding_missing
    pd.testing.assert_frame_equal(frame, before)  # the caller's frame keeps its cells
    assert [id(v) for v in frame["a"]] == ids
    assert _encoded(fast) == _encoded(slow)  # the codes, or the same refusal (an int cell among texts: '17')
    for col, d in fast.dictionaries.items():
        assert d.describes(fast.frame[col].to_numpy(dtype=object))


def _encoded(table: Table) -> object:
    try:
        return table.encode(table.hierarchies({})).tolist()
    except EngineError as exc:
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("fresh_objects", [False, True])
def test_a_run_on_an_encoded_table_equals_the_row_by_row_run(fresh_objects):
    frame = _frame(9, 3000, fresh_objects)
    fast = anonymize(Table(frame, dict(ROLES)), None, "flash", k=3, suppression_limit=0.04, sensitive="s")
    slow = anonymize(Table(frame.copy(), dict(ROLES), encode_objects=False), None, "flash", k=3,
                     suppression_limit=0.04, sensitive="s")
    assert fast.output.to_csv() == slow.output.to_csv() and fast.transformation == slow.transformation
    assert repr(fast.metrics) == repr(slow.metrics) and repr(fast.metrics_before) == repr(slow.metrics_before)
    assert fast.attack == slow.attack
