"""Which grouping a roll-up takes (counting, the compiled kernel's radix sort, numpy's sort) changes its
speed only: once the kernel groups, counting is kept for code spaces of at most DENSE_SPACE_KERNEL codes
per source class (none by default), and every node's classes are those of an evaluator grouping with
numpy (and counting) alone."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizer_app.engine.model.table import frequency_set
from anonymizer_app.engine.search import lattice
from anonymizer_app.engine.search.lattice import Lattice, NodeEvaluator

from ._lattice_helpers import make_hierarchy


def _nodes(freq, hs, order, kernel: bool, spaces: list | None = None):
    ev = NodeEvaluator(freq, hs, lambda sizes: sizes < 3)
    if kernel:
        ev.kernel = lattice._load_kernel()
        assert ev.kernel  # make test installs numba (the `fast` extra): the kernel loads
    if spaces is not None:
        original = ev._group_dense

        def dense(levels, source, space):
            spaces.append((space, len(source.sizes)))
            return original(levels, source, space)

        ev._group_dense = dense  # type: ignore[method-assign]
    lat = Lattice(hs)
    out = []
    for i in order:
        node = ev.classes(lat.levels(i))
        labels = np.stack([ev.labels(node, j) for j in range(len(hs))], axis=1)
        out.append((node.levels, labels, node.sizes.copy(), node.key.copy(), node.outliers))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_kernel_or_counting_same_classes_as_numpy(seed):
    rng = np.random.default_rng(seed)
    leaves = [str(i) for i in range(40)]
    hs = [make_hierarchy("a", leaves, 3, 2), make_hierarchy("b", leaves, 2, 3), make_hierarchy("c", leaves[:6], 2, 2)]
    n = 6000
    codes = np.stack([rng.integers(0, 40, n), rng.integers(0, 40, n), rng.integers(0, 6, n)], axis=1).astype(np.int32)
    freq = frequency_set(codes)
    assert len(freq.counts) >= lattice.DENSE_MIN  # the counting path is open
    order = rng.permutation(Lattice(hs).size).tolist()
    spaces: list = []
    got = _nodes(freq, hs, order, kernel=True, spaces=spaces)
    want = _nodes(freq, hs, order, kernel=False)
    for g, w in zip(got, want):
        assert g[0] == w[0] and g[4] == w[4]
        for a, b in zip(g[1:4], w[1:4]):
            assert np.array_equal(a, b)
    assert all(space <= lattice.DENSE_SPACE_KERNEL * classes for space, classes in spaces)
