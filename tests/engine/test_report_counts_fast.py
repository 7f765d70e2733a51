"""The report's value counts and loss sums without pandas Series or per-row gathers (issue 32), against
independent references: pandas' own sort and value_counts, numpy's sum of the expanded per-row values, the
first occurrence found by a plain loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.measure.metrics import _exact_sum, _row_sum
from anonymizer_app.engine.run import coded
from anonymizer_app.engine.run.coded import first_rows as _first_rows
from anonymizer_app.engine.run.report import Tally, _descending, _listing, _ordered_counts


@pytest.mark.parametrize("seed", range(40))
def test_descending_is_pandas_sort(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(0, 300))
    counts = rng.integers(1, int(rng.integers(2, 20)), m).astype(np.int64)  # many ties
    expected = pd.Series(counts, index=pd.Index([f"v{i}" for i in range(m)], dtype=object)).sort_values(
        ascending=False)
    got = _descending(counts)
    assert [f"v{i}" for i in got] == list(expected.index)


def first_by_loop(codes: np.ndarray, size: int) -> np.ndarray:
    first = [len(codes)] * size
    for row, code in enumerate(codes.tolist()):
        if first[code] == len(codes):
            first[code] = row
    return np.array(first, dtype=np.int64)


@pytest.mark.parametrize("blocks", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_first_rows(seed, blocks, monkeypatch):
    if blocks:  # the blocks read until every code was seen, whatever the length
        monkeypatch.setattr(coded, "FIRST_ROWS_AT_ONCE", 0)
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 300))
    n = int(rng.integers(0, 60_000))
    weights = rng.random(size) ** 6  # some codes rare: first seen late, or never
    codes = rng.choice(size, n, p=weights / weights.sum()).astype(np.int32)
    expected = first_by_loop(codes, size)
    assert np.array_equal(_first_rows(codes, size), expected)
    assert np.array_equal(_first_rows(codes, size, np.bincount(codes, minlength=size)), expected)
    assert np.array_equal(_first_rows(codes, size, np.bincount(codes, minlength=size) > 0), expected)


@pytest.mark.parametrize("seed", range(20))
def test_tally_listing_is_value_counts(seed):
    # a column of str cells: the Tally from counts and first rows, listed, equals pandas' value_counts listing
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 80))
    categories = np.array([f"c{i}" for i in range(size)], dtype=object)
    weights = rng.integers(1, 4, size).astype(float)  # few distinct weights: ties
    codes = rng.choice(size, int(rng.integers(1, 3000)), p=weights / weights.sum())
    cells = categories[codes]
    counts = pd.Series(cells).astype(str).value_counts()
    expected = {"values": [str(v) for v in counts.index[:30]], "counts": [int(c) for c in counts.to_numpy()[:30]],
                "distinct": int(len(counts)), "rows": len(cells)}
    tally = _ordered_counts(categories, np.bincount(codes, minlength=size),
                            lambda: _first_rows(codes, size))
    assert isinstance(tally, Tally)
    assert _listing(tally, len(cells), 30) == expected


def test_ordered_counts_merges_one_text_twice():
    categories = np.array(["a", "*", "b", "*"], dtype=object)
    codes = np.array([3, 0, 1, 2, 3, 1, 0])
    cells = categories[codes]
    counts = pd.Series(cells).value_counts()
    tally = _ordered_counts(categories, np.bincount(codes, minlength=4), lambda: _first_rows(codes, 4))
    assert _listing(tally, len(cells), 30)["values"] == list(counts.index)
    assert _listing(tally, len(cells), 30)["counts"] == counts.tolist()


def expanded_sum(values: np.ndarray, leaves: np.ndarray) -> float:
    return float(np.sum(np.array([values[i] for i in leaves.tolist()], dtype=np.float64)))


@pytest.mark.parametrize("seed", range(30))
def test_row_sum_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 50))
    n = int(rng.integers(0, 5000))
    kind = seed % 5
    if kind == 0:
        values = rng.random(size)  # arbitrary floats: summed from the rows
    elif kind == 1:
        values = rng.integers(0, 2, size).astype(float)  # 0/1 ('*' shares)
    elif kind == 2:
        values = rng.integers(0, 9, size) / 8.0  # multiples of 1/8
    elif kind == 3:
        values = rng.integers(1, 74, size) / 74.0  # leaf shares: not dyadic
    else:
        values = np.zeros(size)
    leaves = rng.integers(0, size, n).astype(np.int32)
    counts = np.bincount(leaves, minlength=size)
    expected = expanded_sum(values, leaves)
    got = _row_sum(values, leaves, counts, [])
    assert _exact_sum(values, counts) in (None, expected)
    assert np.float64(got).tobytes() == np.float64(expected).tobytes()


def test_exact_sum_refuses_what_it_cannot_add_exactly():
    counts = np.array([3, 5])
    assert _exact_sum(np.array([1 / 3, 0.5]), counts) is None  # 1/3 is no small multiple of a power of 2
    assert _exact_sum(np.array([-0.0, 0.0]), counts) is None  # a negative zero: left to the rows' sum
    assert _exact_sum(np.array([np.nan, 1.0]), counts) is None
    assert _exact_sum(np.array([2.0 ** 52, 1.0]), counts) is None  # past 2^51 units
    assert _exact_sum(np.array([0.25, 1.5]), counts) == 0.25 * 3 + 1.5 * 5
    assert _exact_sum(np.array([0.7, 1.5]), np.array([0, 2])) == 3.0  # a value no row holds is not read
