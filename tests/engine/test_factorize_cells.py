"""result.factorize_cells groups output cells by object address, then by value: it must give exactly what
pd.factorize gives on the values (codes, distinct values, their order, missing cells), whatever objects hold them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.errors import VerificationError
from anonymizer_app.engine.model.hierarchy import Hierarchy
from anonymizer_app.engine.run.result import check_cells, factorize_cells


def copies(value: str, n: int) -> np.ndarray:
    """n distinct str objects with the same value."""
    return np.array(["".join(list(value)) for _ in range(n)], dtype=object)


@pytest.mark.parametrize("n", [0, 10, 4095, 4096, 50_000])
def test_the_same_codes_as_pandas_on_values(n):
    rng = np.random.default_rng(n)
    labels = np.array(["a", "b", "[20-40)", "*", "b "], dtype=object)
    cells = labels[rng.integers(0, len(labels), n)]
    cells[::7] = copies("b", len(cells[::7]))  # equal values in other objects: one code
    cells[3::11] = np.nan
    cells[5::13] = None
    cells[8::17] = 5
    for arr in (cells, cells[::3], cells[::-1]):
        codes, distinct = factorize_cells(arr)
        want_codes, want_distinct = pd.factorize(pd.Series(arr, dtype=object))
        assert np.array_equal(codes, want_codes)
        assert distinct.equals(want_distinct)


def test_a_cell_held_by_another_object_is_still_checked_by_value():
    """A tampered cell in a fresh object, amid 10,000 rows sharing the label objects: refused by its value."""
    h = Hierarchy.from_rows([["1", "1-2", "*"], ["2", "1-2", "*"], ["3", "3-4", "*"], ["4", "3-4", "*"]], "x")
    original = pd.Series(np.array(["1", "2", "3", "4"] * 2500, dtype=object))
    cells = h.labels[1][h.maps[1][h.encode(original)]].astype(object)
    check_cells("x", original, cells, h, np.zeros(len(cells), dtype=bool), 1)
    cells[9_999] = "".join(["1", "-", "2"])  # row 10,000 holds 4: '1-2' does not generalize it
    with pytest.raises(VerificationError, match="row 10000"):
        check_cells("x", original, cells, h, np.zeros(len(cells), dtype=bool), 1,
                    factorized=factorize_cells(cells))
