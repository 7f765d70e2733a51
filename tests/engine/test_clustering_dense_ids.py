"""clustering.finish skips np.unique when the cluster ids are already 0 .. m-1, each used (_dense_ids): exactly
when np.unique's inverse would be the array itself."""

from __future__ import annotations

import numpy as np

from anonymizer_app.engine.search.clustering import _dense_ids


def test_dense_ids_exactly_when_unique_inverse_is_the_array():
    rng = np.random.default_rng(0)
    cases = [np.zeros(0, dtype=np.int64), np.array([0]), np.array([1]), np.array([-1, 0]), np.array([0, 2]),
             np.array([2, 0, 1, 1]), np.array([0, 0, 0]), np.array([5, 4, 3, 2, 1, 0])]
    for _ in range(300):
        n = int(rng.integers(1, 30))
        g = rng.integers(-1, int(rng.integers(1, 12)), n)
        cases.append(g if rng.random() < 0.5 else np.unique(g, return_inverse=True)[1].reshape(-1))
    for g in cases:
        g = np.asarray(g, dtype=np.int64)
        inverse = np.unique(g, return_inverse=True)[1].reshape(-1)
        if _dense_ids(g):
            assert np.array_equal(inverse, g)
        elif len(g):
            # not dense: a value missing below the maximum, or a negative id
            assert g.min() < 0 or len(np.unique(g)) < g.max() + 1
