"""The session's fast paths on hostile inputs the other fast-path tests do not build: hierarchies whose level 0
does not map each leaf to itself (leaves grouped, or level-0 labels in another order), key grouping past 2**16
rows with keys up to 2**32 - 1 (the radix and hashing thresholds), and a dictionary-read table whose cells were
replaced after reading (its codes no longer describe the column). Each is compared with a plain computation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Hierarchy, Role, Table, anonymize, read_table
from anonymizer_app.engine.model.table import RADIX_GROUP_MAX_ROWS, frequency_set, group_keys
from anonymizer_app.engine.privacy.distributions import sensitive_domain
from anonymizer_app.engine.run.report import value_counts
from anonymizer_app.engine.search.lattice import Lattice, NodeEvaluator


def _hierarchy(name: str, d: int, kind: str, rng) -> Hierarchy:
    """Leaves 0..d-1; level 0: the leaves themselves ("identity"), pairs of leaves ("grouped") or the leaves as
    labels in a shuffled order ("permuted"); then groups of 2-3 codes up to a top '*'."""
    leaves = np.array([f"{name}{i}" for i in range(d)], dtype=object)
    if kind == "grouped":
        cur = np.arange(d) // 2
        labels = [np.array([f"{name}g{c}" for c in range(cur.max() + 1)], dtype=object)]
    elif kind == "permuted":
        cur = rng.permutation(d)
        first = np.empty(d, dtype=object)
        first[cur] = leaves
        labels = [first]
    else:
        cur = np.arange(d)
        labels = [leaves.copy()]
    maps = [cur.copy()]
    level = 1
    while cur.max() > 0:
        cur = cur // int(rng.integers(2, 4))
        labels.append(np.array([f"{name}L{level}_{c}" for c in range(cur.max() + 1)], dtype=object))
        maps.append(cur.copy())
        level += 1
    labels.append(np.array(["*"], dtype=object))
    maps.append(np.zeros(d, dtype=np.int64))
    return Hierarchy(name, leaves, labels, [np.asarray(m, dtype=np.int64) for m in maps])


@pytest.mark.parametrize("seed", range(3))
def test_node_classes_with_level_0_not_the_leaves_equal_plain_grouping(seed):
    rng = np.random.default_rng(seed)
    kinds = ["grouped", "permuted", "identity"]
    hs = [_hierarchy(f"q{j}", int(rng.integers(3, 12)), kinds[(j + seed) % 3], rng) for j in range(3)]
    n = 3000
    codes = np.stack([rng.integers(0, len(h.leaves), n) for h in hs], axis=1).astype(np.int32)
    freq = frequency_set(codes)
    ev = NodeEvaluator(freq, hs, lambda sizes: sizes < 4)
    lat = Lattice(hs)
    for i in rng.permutation(lat.size).tolist():  # any order: roll-ups from whatever is cached
        levels = lat.levels(i)
        node = ev.classes(levels)  # the bottom too: grouped by its level-0 labels when level 0 groups leaves
        got = np.stack([ev.labels(node, j) for j in range(len(hs))], axis=1)
        shown = np.stack([h.maps[lv][freq.codes[:, j]] for j, (h, lv) in enumerate(zip(hs, levels))], axis=1)
        want, inverse = np.unique(shown, axis=0, return_inverse=True)
        sizes = np.bincount(inverse.reshape(-1), weights=freq.counts).astype(np.int64)
        order = np.lexsort(got.T[::-1])
        assert np.array_equal(got[order], want), (levels, len(got), len(want))
        assert np.array_equal(np.asarray(node.sizes)[order], sizes), (levels, len(got), len(want))
        assert node.outliers == int(sizes[sizes < 4].sum())


def _unique(key):
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    return first, inverse.reshape(-1), counts


@pytest.mark.parametrize("n", [2**16 + 1, RADIX_GROUP_MAX_ROWS, RADIX_GROUP_MAX_ROWS + 1])
@pytest.mark.parametrize("high", [2**32 - 1, 2**32, 3 * 2**17])
def test_group_keys_past_2_16_rows_up_to_2_32(n, high):
    rng = np.random.default_rng(n + high)
    key = rng.integers(0, high, n, dtype=np.int64)
    key[0] = high - 1
    key[1: n // 3] = key[0]  # one large group, the others small
    for got, want in zip(group_keys(key), _unique(key)):
        assert np.array_equal(got, want)


CSV = "id;age;city;disease\n" + "".join(
    f"{i};{a};{c};{d}\n" for i, (a, c, d) in enumerate(zip(
        np.random.default_rng(5).integers(17, 30, 400), np.random.default_rng(6).choice(["Rome", "Milan", "Turin"], 400),
        np.random.default_rng(7).choice(["flu", "cold", "", "NA", "asthma"], 400))))
ROLES = {"id": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "city": Role.QUASI_IDENTIFYING,
         "disease": Role.SENSITIVE}


@pytest.mark.parametrize("change", ["same text, new object", "another category's object", "a new value"])
def test_a_dictionary_table_changed_after_reading_is_read_from_its_cells(change):
    frame, _ = read_table(CSV.encode(), filename="t.csv", dictionary=True)
    table = Table(frame, dict(ROLES), name="t")
    assert set(table.dictionaries) >= {"city", "disease"}
    for col in ("city", "disease"):
        at = table.frame.columns.get_loc(col)
        cell = table.frame.iat[7, at]
        table.frame.iat[7, at] = {"same text, new object": "".join(list(cell)) + "",
                                  "another category's object": table.frame.iat[8, at] if table.frame.iat[8, at] != cell
                                  else table.frame.iat[9, at],
                                  "a new value": "Florence" if col == "city" else "gout"}[change]
    plain = Table(pd.DataFrame(table.frame.to_numpy(dtype=object).tolist(), columns=list(table.frame.columns),
                               dtype=object), dict(ROLES), name="t", encode_objects=False)  # every row read
    assert not plain.dictionaries
    hs = table.hierarchies({})
    assert np.array_equal(table.encode(hs), plain.encode(plain.hierarchies({})))
    a = sensitive_domain(table.frame, "disease", numeric=False, dictionary=table.dictionaries["disease"])
    b = sensitive_domain(plain.frame, "disease", numeric=False)
    assert list(a.values) == list(b.values) and np.array_equal(a.codes, b.codes)
    assert np.array_equal(a.table_counts, b.table_counts)
    for col in ("city", "disease"):
        assert value_counts(table.frame[col], dictionary=table.dictionaries[col]) == value_counts(plain.frame[col])
    r1 = anonymize(table, None, "flash", k=3, suppression_limit=0.04, sensitive="disease")
    r2 = anonymize(plain, None, "flash", k=3, suppression_limit=0.04, sensitive="disease")
    assert r1.output.to_csv() == r2.output.to_csv() and r1.transformation == r2.transformation
    assert repr(r1.metrics) == repr(r2.metrics) and repr(r1.metrics_before) == repr(r2.metrics_before)
    assert r1.attack == r2.attack

