"""Flash with t-closeness (not monotonic with suppression: an exhaustive search of the nodes within the
budget on class sizes, algorithms.flash._size_region) and the nodes skipped as over the budget on sizes
alone (NodeEvaluator._over_on_sizes), against a brute force over every node that uses neither."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table, UnsatisfiableError, anonymize
from anonymizer_app.engine.model.table import frequency_set
from anonymizer_app.engine.privacy import DistinctLDiversity, TCloseness
from anonymizer_app.engine.privacy.distributions import SensitiveDomain
from anonymizer_app.engine.search.lattice import Lattice, NodeEvaluator, equivalence_classes

from ._lattice_helpers import make_hierarchy

S_LEAVES = ["10", "20", "30", "40", "50"]


def _table(seed: int):
    """Three QIs on small domains (many ties), a numeric sensitive column s skewed per QI value."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 121))
    cols, hs = {}, {}
    for j in range(3):
        d = int(rng.integers(2, 7))
        leaves = [f"v{j}{i}" for i in range(d)]
        hs[f"q{j}"] = make_hierarchy(f"q{j}", leaves, int(rng.integers(1, 4)), int(rng.integers(2, 4)))
        cols[f"q{j}"] = [leaves[i] for i in rng.integers(0, d, n)]
    skew = rng.integers(0, 3, n) + (np.array([int(v[2:]) for v in cols["q0"]]) % 2) * 2
    cols["s"] = [S_LEAVES[int(i)] for i in np.minimum(skew, 4)]
    hs["s"] = make_hierarchy("s", S_LEAVES, 2, 2)
    roles = {f"q{j}": "quasi-identifying" for j in range(3)}
    roles["s"] = "sensitive"
    table = Table(pd.DataFrame(cols, dtype=object), roles, types={"s": "integer"})
    return table, hs


def _brute(table: Table, hs: dict, k: int, suppression: float, model) -> tuple[int, list[int]] | None:
    """(discernibility, levels) of the best node, ties to the lower rank then the lower index; every node's
    classes grouped directly and its histograms summed from the rows."""
    ordered = [hs[c] for c in table.qi]
    freq = frequency_set(table.encode({c: hs[c] for c in table.qi}))
    dom = model.domain(table.frame, hs, True)
    n = table.n
    budget = math.floor(suppression * n + 1e-9)
    best = None
    for levels in itertools.product(*[range(h.height + 1) for h in ordered]):
        inverse, sizes = equivalence_classes(freq.codes, freq.counts, ordered, list(levels))
        row_class = inverse[freq.inverse]
        counts = dom.from_rows(row_class, len(sizes))
        failing = (sizes < k) | model.classes_failing(sizes, counts, dom)
        outliers = int(sizes[failing].sum())
        if outliers > budget:
            continue
        value = int(np.sum(sizes[~failing] ** 2)) + outliers * n
        key = (value, sum(levels), levels)
        if best is None or key < best:
            best = key
    return None if best is None else (best[0], list(best[2]))


@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("distance", ["equal", "ordered", "hierarchical"])
def test_flash_with_t_closeness_equals_brute_force(seed, distance):
    table, hs = _table(seed)
    rng = np.random.default_rng(1000 + seed)
    k = int(rng.integers(2, 5))
    suppression = float(rng.choice([0.0, 0.05, 0.1, 0.2, 0.3]))
    model = TCloseness(float(rng.choice([0.1, 0.2, 0.35])), distance, "s")
    want = _brute(table, hs, k, suppression, model)
    for algorithm in ("flash", "exhaustive"):
        try:
            r = anonymize(table, hs, algorithm, k=k, suppression_limit=suppression, models=[model],
                          options={"metric": "discernibility"})
        except UnsatisfiableError:
            assert want is None
            continue
        assert want is not None
        assert r.transformation is not None
        assert [r.transformation[c] for c in table.qi] == want[1], algorithm
        assert int(r.metrics["discernibility"]) == want[0], algorithm


@pytest.mark.parametrize("seed", range(8))
def test_nodes_over_the_budget_on_sizes_skip_their_histograms(seed):
    """With size_failing and a budget, a node over the budget on sizes alone keeps the classes below k as
    failing and the failing function is not called; every other node's histograms, rolled up past the skipped
    ones (random order, small cache; odometer), equal those summed from the rows."""
    table, hs = _table(seed)
    ordered = [hs[c] for c in table.qi]
    freq = frequency_set(table.encode({c: hs[c] for c in table.qi}))
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, table.n)
    dom = SensitiveDomain("s", np.array(["a", "b", "c"], dtype=object), codes, np.bincount(codes, minlength=3))
    lat = Lattice(ordered)
    k, budget = 3, int(rng.integers(0, 8))
    made: dict = {}

    def failing(sizes, counts=None):
        made["counts"] = counts(dom)
        return sizes < k

    for walk in ("random", "odometer"):
        ev = NodeEvaluator(freq, ordered, failing, cache_size=3)
        ev.class_level = ev.histograms = True
        ev.size_failing, ev.budget = (lambda sizes: sizes < k), budget
        nodes = (ev.classes(lat.levels(i)) for i in rng.permutation(lat.size)) if walk == "random" \
            else ev.iterate_all(lat)
        skipped = 0
        for node in nodes:
            inverse, sizes = equivalence_classes(freq.codes, freq.counts, ordered, list(node.levels))
            assert np.array_equal(np.sort(node.sizes), np.sort(sizes))
            assert np.array_equal(node.failing, node.sizes < k)
            if int(node.sizes[node.sizes < k].sum()) > budget:
                assert node.skipped and "counts" not in made
                skipped += 1
                continue
            direct = dom.from_rows(ev.tuple_class(node)[freq.inverse], len(node.sizes))
            got = made.pop("counts", None)
            if got is None:  # the node came from the cache, evaluated before: its histogram again
                got = ev.histogram(node, dom)
            assert np.array_equal(got, direct)
            made.clear()
        assert skipped or budget >= table.n


def test_l_diversity_beside_k_with_suppression_equals_exhaustive():
    """A monotonic sensitive model with a size model: the skip applies to Flash's own checks too."""
    for seed in range(6):
        table, hs = _table(seed)
        results = []
        for algorithm in ("flash", "exhaustive"):
            r = anonymize(table, hs, algorithm, k=2, suppression_limit=0.1, models=[DistinctLDiversity(2, "s")],
                          options={"metric": "discernibility"})
            results.append(([r.transformation[c] for c in table.qi], int(r.metrics["discernibility"]),
                            int(r.suppressed.sum())))
        assert results[0] == results[1]
