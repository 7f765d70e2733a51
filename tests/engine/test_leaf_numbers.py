"""A hierarchy's leaves as numbers: parsed once per Hierarchy (the NCP of numeric QIs), the very floats
pd.to_numeric gives, through the digit fast path or pandas."""

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.measure.metrics import ncp_by_label
from anonymizer_app.engine.model.hierarchy import Hierarchy, numbers_of


def _pandas(values) -> np.ndarray:
    return pd.to_numeric(pd.Series(np.array(values, dtype=object)), errors="coerce").to_numpy(dtype=float)


@pytest.mark.parametrize("values", [
    ["1", "2"], ["007", "0", "123456789012345"], ["999999999999999", "0"], ["1234567890123456"],
    ["99999999999999999999", "1"], ["1.5", "", "x"], [], ["inf", "nan", " 7 "], ["1e400", "+3"], [1, "2"],
    ["12\x00"], ["1\x002"], ["\u0663", "4"], ["", "1"], ["-1", "2"], ["1 ", "2"], ["0x1"], ["1_0"], ["é1"],
])
def test_numbers_of_is_to_numeric(values):
    got, want = numbers_of(np.array(values, dtype=object)), _pandas(values)
    assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)


def test_numbers_of_random_digit_strings():
    rng = np.random.default_rng(0)
    for _ in range(100):
        v = [str(x).zfill(int(rng.integers(1, 16))) for x in rng.integers(0, 10 ** int(rng.integers(1, 16)), 40)]
        assert np.array_equal(numbers_of(np.array(v, dtype=object)), _pandas(v))


def _zip_hierarchy(n: int = 1000) -> Hierarchy:
    leaves = np.array([f"{i:05d}" for i in range(n)], dtype=object)
    labels, maps = [leaves], [np.arange(n)]
    for m in range(1, 6):
        lab = np.array([z[:5 - m] + "*" * m for z in leaves], dtype=object)
        uniq, code = np.unique(lab, return_inverse=True)
        labels.append(uniq.astype(object))
        maps.append(code)
    return Hierarchy("zip", leaves, labels, maps)


def test_leaf_numbers_parsed_once_and_read_only():
    h = _zip_hierarchy()
    first = h.leaf_numbers()
    assert first is h.leaf_numbers()
    assert np.array_equal(first, _pandas(list(h.leaves)))
    with pytest.raises(ValueError):
        first[0] = 1.0


def test_ncp_from_the_cached_numbers_is_the_parsed_one():
    h = _zip_hierarchy()
    present = np.zeros(len(h.leaves), dtype=bool)
    present[::3] = True
    values = _pandas(list(h.leaves))
    for level in range(1, h.level_count):
        got = ncp_by_label(h, level, present, True)
        # the NCP of each label: (highest - lowest present leaf) / span, as pandas' numbers give it
        span = values[present].max() - values[present].min()
        want = np.zeros(len(h.labels[level]))
        for code in range(len(want)):
            mine = present & (np.asarray(h.maps[level]) == code)
            if mine.any():
                want[code] = (values[mine].max() - values[mine].min()) / span
        assert np.array_equal(got, want)
