"""Flash, Incognito, Samarati and the exhaustive search against a brute-force lattice search."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymizer_app.engine import UnsatisfiableError, anonymize
from anonymizer_app.engine.model.table import frequency_set
from anonymizer_app.engine.privacy.distributions import SensitiveDomain
from anonymizer_app.engine.search.lattice import Lattice, NodeEvaluator, equivalence_classes

from ._lattice_helpers import KEYS, brute_force, make_hierarchy, small_tables

METRICS = list(KEYS)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(table, hs, algorithm, k, suppression, metric):
    try:
        return anonymize(table, hs, algorithm, k=k, suppression_limit=suppression, options={"metric": metric})
    except UnsatisfiableError:
        return None


@pytest.mark.parametrize("algorithm", ["flash", "incognito", "exhaustive"])
@pytest.mark.parametrize("metric", METRICS)
@SETTINGS
@given(data=small_tables(), k=st.integers(2, 4), suppression=st.sampled_from([0.0, 0.1, 0.3]))
def test_optimum_equals_brute_force(algorithm, metric, data, k, suppression):
    table, hs = data
    expected = brute_force(table, hs, k, suppression, metric)
    result = _run(table, hs, algorithm, k, suppression, metric)
    if expected is None:
        assert result is None
        return
    assert result is not None and result.verified
    got = result.metrics[KEYS[metric]]
    assert got == pytest.approx(expected[0], rel=1e-9, abs=1e-9)
    # the value the search reports is the one the final report shows
    assert result.search["optimum_value"] == pytest.approx(got, rel=1e-9, abs=1e-9)


@SETTINGS
@given(data=small_tables(), k=st.integers(2, 4), suppression=st.sampled_from([0.0, 0.2]))
def test_samarati_minimal_height(data, k, suppression):
    table, hs = data
    result = _run(table, hs, "samarati", k, suppression, "discernibility")
    best_height = None
    ordered = [hs[c] for c in table.qi]
    freq = frequency_set(table.encode(hs))
    budget = int(suppression * table.n + 1e-9)
    for levels in itertools.product(*[range(h.height + 1) for h in ordered]):
        _, sizes = equivalence_classes(freq.codes, freq.counts, ordered, list(levels))
        if sizes[sizes < k].sum() <= budget:
            best_height = sum(levels) if best_height is None else min(best_height, sum(levels))
    if best_height is None:
        assert result is None
        return
    assert sum(result.transformation.values()) == best_height == result.search["minimal_height"]


@SETTINGS
@given(data=small_tables())
def test_rollup_equals_direct_evaluation(data):
    table, hs = data
    ordered = [hs[c] for c in table.qi]
    freq = frequency_set(table.encode(hs))
    lat = Lattice(ordered)
    ev = NodeEvaluator(freq, ordered, cache_size=4)
    seen = 0
    for node in ev.iterate_all(lat, list(reversed(range(lat.q)))):
        _, sizes = equivalence_classes(freq.codes, freq.counts, ordered, list(node.levels))
        assert sorted(node.sizes.tolist()) == sorted(sizes.tolist())
        cached = ev.classes(node.levels)  # through the cache / roll-up
        assert sorted(cached.sizes.tolist()) == sorted(sizes.tolist())
        seen += 1
    assert seen == lat.size


def test_keep_lattice_and_tags():
    table, hs = _fixed_table()
    result = anonymize(table, hs, "flash", k=2, options={"keep_lattice": "yes"})
    lattice = result.search["lattice"]
    assert len(lattice["nodes"]) == result.search["lattice_size"]
    assert all(tag in "AaNn" for _, tag, _ in lattice["nodes"])  # every node tagged
    assert lattice["optimum"] == "".join(str(result.transformation[c]) for c in table.qi)
    assert result.search["nodes_checked"] == sum(tag in "AN" for _, tag, _ in lattice["nodes"])


def _fixed_table():
    import pandas as pd

    from anonymizer_app.engine import Table

    frame = pd.DataFrame({"a": ["1", "2", "3", "4", "1", "2"], "b": ["x", "y", "x", "y", "z", "z"]}, dtype=object)
    hs = {"a": make_hierarchy("a", ["1", "2", "3", "4"], 2, 2), "b": make_hierarchy("b", ["x", "y", "z"], 1, 2)}
    return Table(frame, {"a": "quasi-identifying", "b": "quasi-identifying"}), hs


@SETTINGS
@given(data=small_tables(), seed=st.integers(0, 10_000))
def test_sensitive_histograms_rolled_up_equal_the_direct_ones(data, seed):
    """Class x value counts rolled up from cached nodes, hubs and evicted sources (small cache) and
    along the odometer equal those summed from the frequency-set tuples."""
    table, hs = data
    ordered = [hs[c] for c in table.qi]
    freq = frequency_set(table.encode(hs))
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, len(freq.inverse))
    dom = SensitiveDomain("s", np.array(["a", "b", "c"], dtype=object), codes, np.bincount(codes, minlength=3))
    lat = Lattice(ordered)
    got = []

    def failing(sizes, counts=None):
        got.append(counts(dom))
        return np.zeros(len(sizes), dtype=bool)

    for walk in ("random", "odometer"):
        ev = NodeEvaluator(freq, ordered, failing, cache_size=3)
        ev.class_level = ev.histograms = True
        if walk == "random":
            nodes = (ev.classes(lat.levels(i)) for i in rng.permutation(lat.size))
        else:
            nodes = ev.iterate_all(lat)
        for node in nodes:
            direct = dom.from_tuples(freq.inverse, ev.tuple_class(node), len(node.sizes))
            assert np.array_equal(got[-1], direct)
            assert np.array_equal(direct.sum(axis=1), node.sizes)
