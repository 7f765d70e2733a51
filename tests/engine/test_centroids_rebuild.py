"""Centroids.rebuild (bincount and level assignment) equals the member-by-member np.add.at / np.maximum.at."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizer_app.engine.search.clustering import space_of
from anonymizer_app.engine.search.distance import Centroids, Encoded

from ._local import mixed_table, problem_of


def _rebuild_at(cent: Centroids, cl: np.ndarray, items: np.ndarray, which: np.ndarray) -> None:
    # the former implementation, kept here as the reference
    enc = cent.enc
    sel = np.isin(cl, which)
    cl, items = cl[sel], items[sel]
    cent.count[which] = 0
    cent.sums[which] = 0
    cent.level[which] = 0
    np.add.at(cent.count, cl, 1)
    if enc.num:
        np.add.at(cent.sums, cl, enc.X[items])
    first = np.full(len(cent.count), -1, dtype=np.int64)
    first[cl[::-1]] = items[::-1]
    has = first >= 0
    cent.rep[has] = enc.L[first[has]]
    for t in range(len(enc.cat)):
        np.maximum.at(cent.level[:, t], cl, enc.lca(t, enc.L[items, t], cent.rep[cl, t]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rebuild_equals_add_at(seed):
    table, given = mixed_table(3000, seed)
    problem = problem_of(table, given, 2)
    enc = Encoded(space_of(problem), problem.freq.codes)
    rng = np.random.default_rng(seed)
    items = problem.freq.inverse
    n_clusters = 40
    cl = rng.integers(0, n_clusters, len(items))
    which = np.sort(rng.choice(n_clusters, 25, replace=False))  # some clusters left as they are
    start = rng.integers(0, len(items), n_clusters)
    new, old = Centroids(enc, items[start]), Centroids(enc, items[start])
    new.add(cl[:500], items[:500])
    old.add(cl[:500], items[:500])
    new.rebuild(cl, items, which)
    _rebuild_at(old, cl, items, which)
    assert np.array_equal(new.count, old.count)
    assert np.array_equal(new.sums, old.sums)  # bit for bit: the same additions in the same order
    assert np.array_equal(new.level, old.level)
    assert np.array_equal(new.rep, old.rep)
    assert new.level[which].max() > 0
