"""AIM's numpy inference (engine/synthesis/tree_inference.py) against the brute-force joint distribution, and the
pooling of repeated measurements of one clique against its closed form."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from anonymizer_app.engine.synthesis.graphical import Measurement, pooled
from anonymizer_app.engine.synthesis.tree_inference import CalibratedTree

SIZES = {"a": 2, "b": 3, "c": 2, "d": 3, "e": 2, "f": 2}


def _potentials(seed: int) -> dict[tuple[str, ...], np.ndarray]:
    rng = np.random.default_rng(seed)
    cliques = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("f",)]
    return {cl: rng.normal(0, 1.5, [SIZES[x] for x in cl]) for cl in cliques}


def _tree() -> nx.Graph:
    # a chain of the pairs (a junction tree: running intersection holds) and f on its own (a forest)
    tree = nx.Graph()
    chain = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")]
    tree.add_nodes_from(chain + [("f",)])
    tree.add_edges_from(zip(chain, chain[1:]))
    return tree


def _brute_marginal(potentials, total, clique):
    """Sum exp(Σ potentials) over every full row, by loops."""
    names = list(SIZES)
    counts: dict[tuple[int, ...], float] = {}
    z = 0.0
    for row in itertools.product(*(range(SIZES[n]) for n in names)):
        value = dict(zip(names, row))
        weight = 1.0
        for cl, table in potentials.items():
            weight *= float(np.exp(table[tuple(value[x] for x in cl)]))
        key = tuple(value[x] for x in clique)
        counts[key] = counts.get(key, 0.0) + weight
        z += weight
    cells = itertools.product(*(range(SIZES[x]) for x in clique))
    return np.array([counts.get(cell, 0.0) * total / z for cell in cells])


@pytest.mark.parametrize("seed", [0, 1])
def test_every_pair_and_column_matches_the_brute_force_joint(seed):
    potentials = _potentials(seed)
    tree = CalibratedTree(potentials, SIZES, 1000.0, _tree())
    for clique in [(c,) for c in SIZES] + list(itertools.combinations(SIZES, 2)):
        assert tree.marginal(clique) == pytest.approx(_brute_marginal(potentials, 1000.0, clique), rel=1e-9,
                                                      abs=1e-9), clique


def test_a_pair_in_reverse_order_is_the_transposed_table():
    potentials = _potentials(2)
    tree = CalibratedTree(potentials, SIZES, 50.0, _tree())
    forward = tree.marginal(("a", "e")).reshape(SIZES["a"], SIZES["e"])
    backward = tree.marginal(("e", "a")).reshape(SIZES["e"], SIZES["a"])
    assert backward == pytest.approx(forward.T, rel=1e-12)


def test_pooled_measurements_are_the_inverse_variance_mean():
    first = Measurement(("a",), np.array([10.0, 4.0]), 2.0)
    second = Measurement(("a",), np.array([7.0, 1.0]), 1.0)
    other = Measurement(("b",), np.array([1.0, 2.0, 3.0]), 5.0)
    out = pooled([first, other, second])
    assert [m.clique for m in out] == [("a",), ("b",)]
    # weights 1/4 and 1: (10/4 + 7) / 1.25 = 7.6, (4/4 + 1) / 1.25 = 1.6; σ = 1/sqrt(1.25)
    assert out[0].noisy == pytest.approx([7.6, 1.6], rel=1e-12)
    assert out[0].sigma == pytest.approx(1 / 1.25**0.5, rel=1e-12)
    assert out[1] is other
