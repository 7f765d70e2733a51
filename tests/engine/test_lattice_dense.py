"""The counting roll-up (NodeEvaluator._group_dense) gives exactly the sorting roll-up's classes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table, anonymize
from anonymizer_app.engine.model.table import frequency_set
from anonymizer_app.engine.privacy.distributions import SensitiveDomain
from anonymizer_app.engine.search import lattice
from anonymizer_app.engine.search.lattice import Lattice, NodeEvaluator

from ._lattice_helpers import make_hierarchy


def _table(seed: int, rows: int = 3000):
    """Tie-heavy: few leaves per QI, skewed, so classes merge at every level."""
    rng = np.random.default_rng(seed)
    cols, hs = {}, {}
    for j, (d, height, fan) in enumerate(((7, 3, 2), (12, 3, 3), (5, 2, 2), (30, 4, 2))):
        leaves = [f"v{j}_{i:02d}" for i in range(d)]
        hs[f"q{j}"] = make_hierarchy(f"q{j}", leaves, height, fan)
        p = rng.random(d) ** 3 + 0.01
        cols[f"q{j}"] = np.array(leaves, dtype=object)[rng.choice(d, rows, p=p / p.sum())]
    cols["s"] = np.array(["a", "b", "c", "d"], dtype=object)[rng.integers(0, 4, rows)]
    roles = {c: "quasi-identifying" for c in hs}
    roles["s"] = "sensitive"
    return Table(pd.DataFrame(cols, dtype=object), roles), hs


def _sorted_classes(ev, levels, source, monkeypatch):
    monkeypatch.setattr(lattice, "DENSE_MIN", 10**12)  # the sort path
    try:
        return ev._group_fixed(levels, source)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_counted_classes_equal_sorted_ones(seed, monkeypatch):
    table, hs = _table(seed)
    ordered = [hs[c] for c in table.qi]
    freq = frequency_set(table.encode(hs))
    lat = Lattice(ordered)
    ev = NodeEvaluator(freq, ordered)
    ev.class_level = ev.histograms = True  # the map of each source class to its class is made too
    rng = np.random.default_rng(seed)
    counted = 0
    for _ in range(150):
        levels = tuple(int(rng.integers(0, s)) for s in lat.shape)
        below = tuple(int(rng.integers(0, x + 1)) for x in levels)
        source = ev.bottom if not any(below) else _sorted_classes(ev, below, ev.bottom, monkeypatch)
        space = int(np.prod([ev.radix[j][lv] for j, lv in enumerate(levels)]))
        dense = ev._group_dense(levels, source, space)
        sort = _sorted_classes(ev, levels, source, monkeypatch)
        assert np.array_equal(dense.reps, sort.reps)
        assert np.array_equal(dense.sizes, sort.sizes) and dense.sizes.dtype == np.int64
        assert np.array_equal(dense.key, sort.key)
        assert np.array_equal(dense.parent_map, sort.parent_map)
        counted += len(source.sizes) > len(dense.sizes)
    assert counted > 50  # most draws merged classes


def test_counted_histograms_equal_direct_ones(monkeypatch):
    table, hs = _table(3)
    ordered = [hs[c] for c in table.qi]
    freq = frequency_set(table.encode(hs))
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 3, len(freq.inverse))
    dom = SensitiveDomain("s", np.array(["a", "b", "c"], dtype=object), codes, np.bincount(codes, minlength=3))
    monkeypatch.setattr(lattice, "DENSE_MIN", 0)
    got = []

    def failing(sizes, counts=None):
        got.append(counts(dom))
        return np.zeros(len(sizes), dtype=bool)

    lat = Lattice(ordered)
    ev = NodeEvaluator(freq, ordered, failing, cache_size=5)
    ev.class_level = ev.histograms = True
    for i in rng.permutation(lat.size)[:200]:
        node = ev.classes(lat.levels(i))
        assert np.array_equal(got[-1], dom.from_tuples(freq.inverse, ev.tuple_class(node), len(node.sizes)))


@pytest.mark.parametrize("suppression,models", [(0.0, {}), (0.05, {}), (0.0, {"l": 2}), (0.05, {"l": 2})])
def test_flash_publishes_the_same_with_either_grouping(suppression, models, monkeypatch):
    from anonymizer_app.engine.privacy import DistinctLDiversity

    table, hs = _table(4, rows=4000)
    extra = [DistinctLDiversity(models["l"], column="s")] if models else []

    def run(dense_min):
        monkeypatch.setattr(lattice, "DENSE_MIN", dense_min)
        r = anonymize(table, hs, "flash", k=4, suppression_limit=suppression, sensitive="s", models=extra,
                      options={"metric": "discernibility"})
        search = {k: v for k, v in r.search.items() if k != "search_seconds"}
        return r.output.to_csv(index=False), r.metrics, search

    assert run(0) == run(10**12)
