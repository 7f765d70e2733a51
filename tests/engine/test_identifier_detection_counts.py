"""Identifier detection counts a column's values from its distinct values (issue 32: `manage.py anonymize` spent
3 s of a million-row run making the text of every cell): the counts, and the sample whose shapes are read, must be
exactly those of the cell-by-cell way. Expected counts are made here in plain Python (str of every cell, stripped,
counted with a Counter) or, for numbers, by pandas' own cell-by-cell text, which defines how a number reads."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.model.identifier_detection import detect, shapes


def _missing(v) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v))


def _plain_counts(cells: list, categorical: bool = False) -> list[int]:
    """Counts of each stripped text, largest first, in plain Python (a Categorical's text goes through numpy's
    fixed-width strings, which drop trailing NULs: pandas' astype(str) of a Categorical)."""
    texts = (str(v).rstrip("\x00") if categorical else str(v) for v in cells if not _missing(v))
    counts = Counter(t for t in (t.strip() for t in texts) if t != "")
    return sorted(counts.values(), reverse=True)


def _cell_by_cell(values: pd.Series) -> list[int]:
    text = values[values.notna()].astype(str).str.strip()
    return sorted(text[text != ""].value_counts().tolist(), reverse=True)


def _plain_uniqueness(counts: list[int]) -> tuple[int, int, float, int]:
    n = sum(counts)
    if n < 2:
        return n, len(counts), 0.0, max(counts) if counts else 0
    # summed in the same order (largest first) as the detection sums them
    pairs = 0.0
    for f in counts:
        pairs += float(f) * (f - 1)
    return n, len(counts), 1.0 - pairs / (n * (n - 1.0)), max(counts)


STRINGS = ["a", " a", "a ", "b", "", "  ", None, "B", "b\t", "x\x00", "x", "é", " é ", "1", "1.0", "nan"]


def _string_columns(rng: np.random.Generator) -> list[pd.Series]:
    cells = [STRINGS[i] for i in rng.integers(0, len(STRINGS), 500)]
    obj = pd.Series(cells, dtype=object)
    with_nan = pd.Series([np.nan if c is None else c for c in cells], dtype=object)
    return [obj, with_nan, obj.astype("category"), pd.Series(pd.Categorical(cells, categories=[
        s for s in STRINGS if s is not None] + ["never used"]))]


@pytest.mark.parametrize("seed", range(5))
def test_string_and_categorical_columns_count_as_their_stripped_text(seed):
    for values in _string_columns(np.random.default_rng(seed)):
        expected = _plain_counts(values.tolist(), isinstance(values.dtype, pd.CategoricalDtype))
        assert detect.text_counts(values).tolist() == expected == _cell_by_cell(values)
        assert detect.uniqueness(values) == _plain_uniqueness(expected)


def test_categorical_text_is_taken_as_pandas_takes_it_with_trailing_nuls():
    # a Categorical's cells become text through numpy's fixed-width strings, which drop trailing NULs
    values = pd.Series(pd.Categorical(["x\x00", "x", "x\x00", "y"]))
    assert detect.text_counts(values).tolist() == _cell_by_cell(values) == [3, 1]
    # an object column keeps them: two texts
    values = pd.Series(["x\x00", "x", "x\x00", "y"], dtype=object)
    assert detect.text_counts(values).tolist() == _cell_by_cell(values) == [2, 1, 1]


@pytest.mark.parametrize("values", [
    pd.Series([1, 2, 2, 3, 3, 3, -1, 0, 10**12], dtype=np.int64),
    pd.Series([1, 2, 2, 300], dtype=np.uint16),
    pd.Series([True, False, True, True]),
    pd.Series([0.0, -0.0, 0.1, 0.1, np.nan, 1e16, 1e16, 2.5, np.inf, -np.inf, np.nan]),
    pd.Series([0.5, 0.5, np.nan, -0.0], dtype=np.float32),
    pd.Series(pd.Categorical([1.5, 2.0, 1.5, None])),
    pd.Series([1, 1.0, True, "1", " 1", None, "True"], dtype=object),  # mixed: counted cell by cell
    pd.Series(["a", "b", None, "a"], dtype="string"),
    pd.Series([1, None, 1, 2], dtype="Int64"),
    pd.Series(pd.to_datetime(["2020-01-01", None, "2020-01-01"])),
    pd.Series([], dtype=object),
    pd.Series([None, None], dtype=object),
    pd.Series(["only"]),
])
def test_every_dtype_counts_as_cell_by_cell(values):
    expected = _cell_by_cell(values)
    counts = detect.text_counts(values)
    if counts is not None:
        assert counts.tolist() == expected
    assert detect.uniqueness(values) == _plain_uniqueness(expected)


def test_many_distinct_values_and_collisions():
    rng = np.random.default_rng(3)
    cells = [f"{' ' * int(rng.integers(0, 2))}id{int(v)}" for v in rng.integers(0, 5000, 20000)]
    values = pd.Series(cells)
    assert detect.text_counts(values).tolist() == _plain_counts(cells)
    assert detect.text_counts(values.astype("category")).tolist() == _plain_counts(cells, categorical=True)


@pytest.mark.parametrize("missing_share", [0.0, 0.3])
@pytest.mark.parametrize("size", [5, 50, 5000])
def test_the_sample_is_pandas_sample_of_the_present_values(missing_share, size):
    rng = np.random.default_rng(7)
    cells = [None if rng.random() < missing_share else f" v{int(v)} " for v in rng.integers(0, 300, 400)]
    for values in (pd.Series(cells, index=np.arange(400) * 3), pd.Series(cells).astype("category")):
        s = values[values.notna()]
        if len(s) > size:
            s = s.sample(size, random_state=11)
        s = s.astype(str).str.strip()
        expected = s[(s != "") & ~s.str.lower().isin(("nan", "na", "n/a", "none", "null", "?", "-"))]
        got = shapes.sample_values(values, size, 11)
        pd.testing.assert_series_equal(got, expected)


def _numeric_kind_cell_by_cell(sample: pd.Series) -> str | None:
    if not len(sample):
        return None
    if sample.str.fullmatch(r"[-+]?\d{1,30}").all():
        return "integer"
    if sample.str.fullmatch(r"[-+]?(?:\d{1,30}(?:\.\d{0,30})?|\.\d{1,30})(?:[eE][-+]?\d{1,3})?").all():
        return "decimal"
    return None


@pytest.mark.parametrize("cells", [
    [], ["1", "22", "-3"], ["1", "2.5", "+.5"], ["1", "2.5", "x"], ["12", "12\x00"], ["1e5", "2E-3", "3"],
    ["1" * 31], ["0.1", "1."], [" 1"], ["١٢"],  # Arabic-Indic digits: \d matches them, as pandas' regex does
])
def test_numeric_kind_tests_each_distinct_text_as_every_cell(cells):
    sample = pd.Series(cells * 3, dtype=object)
    assert shapes.numeric_kind(sample) == _numeric_kind_cell_by_cell(sample)


@pytest.mark.parametrize("cells", [
    ["short", "words"], ["x" * 41], ["two words"], ["mail me at a.b@example.org please"],
    ["call +44 20 7946 0958 today", "nothing"], ["a\tb"],
])
def test_free_text_without_long_text_finds_nothing_and_with_it_as_before(cells):
    sample = pd.Series(cells * 25, dtype=object)
    shape = shapes.value_shapes(sample)
    found = shapes.free_text("notes", sample, shape)
    if not any(" " in c or len(c) > 40 for c in cells):
        assert found is None
    elif "example.org" in cells[0]:
        assert found is not None and found.emails == len(sample)
