"""The compiled grouping of the lattice roll-up (engine/search/_group_kernel.py) and the evaluator's cache
budget: the kernel gives exactly numpy's classes (same order, same first member, same sums), and a
search through the kernel and a small class budget evaluates every node as the plain numpy path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymizer_app.engine.model.table import frequency_set
from anonymizer_app.engine.privacy.distributions import SensitiveDomain
from anonymizer_app.engine.search import lattice
from anonymizer_app.engine.search._group_kernel import group_sorted
from anonymizer_app.engine.search.lattice import Lattice, NodeEvaluator, equivalence_classes

from ._lattice_helpers import make_hierarchy, small_tables

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_hand_worked_grouping():
    key = np.array([5, 3, 5, 3, 9], dtype=np.int64)
    sizes = np.array([1, 2, 3, 4, 5], dtype=np.int64)
    first, sums, keys, members = group_sorted(key, sizes, True)
    # key 3: positions 1 and 3 (first 1, 2 + 4); key 5: 0 and 2 (1 + 3); key 9: 4 alone
    assert first.tolist() == [1, 0, 4]
    assert sums.tolist() == [6, 4, 5]
    assert keys.tolist() == [3, 5, 9]
    assert members.tolist() == [1, 0, 1, 0, 2]
    assert len(group_sorted(key, sizes, False)[3]) == 0


def _numpy_grouping(key: np.ndarray, sizes: np.ndarray):
    order = np.argsort(key, kind="stable")
    sk = key[order]
    head = np.concatenate(([True], sk[1:] != sk[:-1]))
    starts = np.flatnonzero(head)
    members = np.empty(len(key), dtype=np.int64)
    members[order] = np.cumsum(head) - 1
    return order[starts], np.add.reduceat(sizes[order], starts), sk[starts], members


@pytest.mark.parametrize("n, span", [(1, 10), (2, 1), (1000, 7), (5000, 2**20), (3000, 2**61), (4096, 2**33)])
def test_equals_a_stable_sort(n, span):
    rng = np.random.default_rng(n)
    key = rng.integers(-(span // 2), span - span // 2, n, dtype=np.int64)
    sizes = rng.integers(1, 50, n, dtype=np.int64)
    got = group_sorted(key, sizes, True)
    want = _numpy_grouping(key, sizes)
    for g, w in zip(got, want):
        assert np.array_equal(g, w)


def _all_nodes(freq, ordered, lat, order, *, kernel: bool, budget: int | None, dom=None):
    """Every node's (reps, sizes, key) and histogram through one evaluator, in the given order."""
    seen = {}

    def failing(sizes, counts=None):
        seen["hist"] = counts(dom) if dom is not None else None
        return np.zeros(len(sizes), dtype=bool)

    ev = NodeEvaluator(freq, ordered, failing, cache_size=5)
    ev.class_level = ev.histograms = dom is not None
    if kernel:
        ev.kernel = lattice._load_kernel()
    if budget is not None:
        ev.class_budget = budget
    out = []
    for i in order:
        node = ev.classes(lat.levels(i))
        # a class's representative may be any of its tuples (it depends on the source rolled up from):
        # its generalized codes are what must agree
        labels = np.stack([ev.labels(node, j) for j in range(len(ordered))], axis=1)
        out.append((labels, node.sizes.copy(), None if node.key is None else node.key.copy(), seen.get("hist")))
        assert ev.cache_total == sum(len(x.sizes) for x in ev.cache_nodes if x is not None)
        if budget is not None:  # over the budget only with the node just cached alone
            assert ev.cache_total <= budget or sum(x is not None for x in ev.cache_nodes) == 1
    return out


@SETTINGS
@given(data=small_tables(), seed=st.integers(0, 10_000), budget=st.sampled_from([None, 1, 8, 40]))
def test_search_through_the_kernel_equals_numpy(data, seed, budget):
    table, hs = data
    ordered = [hs[c] for c in table.qi]
    freq = frequency_set(table.encode(hs))
    lat = Lattice(ordered)
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, len(freq.inverse))
    dom = SensitiveDomain("s", np.array(["a", "b", "c"], dtype=object), codes, np.bincount(codes, minlength=3))
    order = rng.permutation(lat.size).tolist()
    want = _all_nodes(freq, ordered, lat, order, kernel=False, budget=None, dom=dom)
    got = _all_nodes(freq, ordered, lat, order, kernel=True, budget=budget, dom=dom)
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            assert (a is None and b is None) or np.array_equal(a, b)


@pytest.mark.parametrize("n, distinct", [(0, 1), (1, 1), (50, 3), (20_000, 700), (20_000, 19_000)])
def test_group_rows_equals_numpy_unique(n, distinct):
    """table.group_rows hashes the packed keys instead of sorting them: the same first rows, inverse
    and counts as np.unique."""
    from anonymizer_app.engine.model.table import group_rows

    rng = np.random.default_rng(n + distinct)
    matrix = np.stack([rng.integers(0, distinct, n), rng.integers(0, 5, n)], axis=1)
    key = matrix[:, 0].astype(np.int64) * 5 + matrix[:, 1]
    want = np.unique(key, return_index=True, return_inverse=True, return_counts=True)[1:]
    got = group_rows(matrix, np.array([distinct, 5]))
    for g, w in zip(got, want):
        assert g.dtype == np.int64 and np.array_equal(g, w)


def test_without_numba_numpy_groups_everything(monkeypatch):
    """Where the kernel cannot be loaded the evaluator keeps grouping with numpy, with the same classes."""
    import sys

    monkeypatch.setitem(sys.modules, "anonymizer_app.engine.search._group_kernel", None)  # import fails
    assert lattice._load_kernel() is None
    monkeypatch.setattr(lattice, "KERNEL_AFTER", 0)
    monkeypatch.setattr(lattice, "KERNEL_AFTER_LARGE", 0)
    rng = np.random.default_rng(3)
    leaves = [str(i) for i in range(12)]
    hs = [make_hierarchy("a", leaves, 3, 2), make_hierarchy("b", leaves, 2, 2)]
    codes = rng.integers(0, 12, (500, 2)).astype(np.int32)
    freq = frequency_set(codes)
    lat = Lattice(hs)
    ev = NodeEvaluator(freq, hs)
    for i in range(lat.size):
        node = ev.classes(lat.levels(i))
        _, sizes = equivalence_classes(freq.codes, freq.counts, hs, list(node.levels))
        assert sorted(node.sizes.tolist()) == sorted(sizes.tolist())
    assert ev.kernel is False  # tried once, then numpy throughout
