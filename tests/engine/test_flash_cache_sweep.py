"""Flash's node cache drops the nodes no node still to be checked can roll up from (LatticeSearch.needed_sources,
NodeEvaluator._sweep) and is emptied once the optimum is known (NodeEvaluator.release): checked against a
brute-force reading of the tags and bounds, and against the search without the sweep."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymizer_app.engine import Role, Table, anonymize
from anonymizer_app.engine.model.table import frequency_set
from anonymizer_app.engine.search.lattice import (
    ANONYMOUS,
    UNKNOWN,
    NodeEvaluator,
    equivalence_classes,
)
from anonymizer_app.engine.search.lattice_search import LatticeSearch

from ._lattice_helpers import make_hierarchy
from .test_flash_outlier_bound import canonical, every_node, tie_heavy_tables

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _tiny_search(dims: list[int], budget: int) -> LatticeSearch:
    """A LatticeSearch on a table whose hierarchies give the lattice ``dims`` (its tags and bounds are then
    overwritten by the test)."""
    import pandas as pd

    hs, cols = {}, {}
    for j, d in enumerate(dims):
        name = f"q{j}"
        leaves = [f"v{j}{i}" for i in range(4)]
        hs[name] = make_hierarchy(name, leaves, d - 1, 2)
        cols[name] = [leaves[i % len(leaves)] for i in range(8)]
    table = Table(pd.DataFrame(cols, dtype=object), {c: Role.QUASI_IDENTIFYING for c in hs})
    ordered = [hs[c] for c in table.qi]
    result_holder: list[LatticeSearch] = []
    original = LatticeSearch.recoding

    def keep(self, *args, **kwargs):
        result_holder.append(self)
        return original(self, *args, **kwargs)

    LatticeSearch.recoding = keep  # type: ignore[method-assign]
    try:
        anonymize(table, hs, "flash", k=2, suppression_limit=budget / 8, options={"metric": "discernibility"})
    finally:
        LatticeSearch.recoding = original  # type: ignore[method-assign]
    (search,) = result_holder
    assert [h.height + 1 for h in ordered] == list(search.lattice.shape)
    return search


@st.composite
def lattice_states(draw):
    q = draw(st.integers(1, 3))
    dims = [draw(st.integers(2, 3)) for _ in range(q)]
    size = int(np.prod(dims))
    tags = draw(st.lists(st.integers(0, 4), min_size=size, max_size=size))
    checked = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    class_lb = draw(st.lists(st.integers(0, 200), min_size=size, max_size=size))
    outlier_lb = draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))
    best = draw(st.sampled_from([math.inf, 0.0, 40.0, 90.0, 150.0, 400.0]))
    pruning = draw(st.booleans())
    with_outliers = draw(st.booleans())
    return dims, tags, checked, class_lb, outlier_lb, best, pruning, with_outliers


@SETTINGS
@given(state=lattice_states())
def test_needed_sources_is_the_brute_force_closure(state):
    dims, tags, checked, class_lb, outlier_lb, best, pruning, with_outliers = state
    search = _tiny_search(dims, 1)
    shape = tuple(dims)
    search.tags = np.array(tags, dtype=np.int8).reshape(shape)
    search.checked = np.array(checked, dtype=bool).reshape(shape)
    search.class_lb = np.array(class_lb, dtype=float).reshape(shape)
    search.outlier_lb = np.array(outlier_lb, dtype=np.int64).reshape(shape) if with_outliers else None
    search.best = best
    search.pruning = pruning
    n, k = search.n, search.k_cost
    nodes = list(itertools.product(*[range(d) for d in dims]))

    def pending(y) -> bool:
        i = nodes.index(y)
        if tags[i] == UNKNOWN:
            return not (pruning and best != math.inf and class_lb[i] > best)
        if tags[i] == ANONYMOUS and not checked[i]:
            if best == math.inf:
                return True
            bound = float(class_lb[i])
            if with_outliers:
                bound = max(bound, k * n) + outlier_lb[i] * float(n - k)
            return not bound > best
        return False

    expected = [any(pending(y) for y in nodes if all(a <= b for a, b in zip(x, y))) for x in nodes]
    assert search.needed_sources().reshape(-1).tolist() == expected


def _flash_recording(table, hs, k, suppression, metric, sweep: bool, every: bool):
    """Flash with the sweep (after every node cached when ``every``) or without it; per sweep the levels of the
    nodes it evicted, and the levels of every node evaluated after each sweep."""
    events: list[tuple[str, tuple]] = []
    orig_sweep, orig_eval, orig_init = NodeEvaluator._sweep, NodeEvaluator.evaluate, LatticeSearch.__init__

    def sweep_rec(self, keep):
        before = {s: n.levels for s, n in enumerate(self.cache_nodes[:self.cache_filled]) if n is not None}
        orig_sweep(self, keep)
        for s, levels in before.items():
            if self.cache_nodes[s] is None:
                events.append(("evicted", levels))

    def eval_rec(self, levels, source=None, cache=True):
        events.append(("evaluated", levels))
        return orig_eval(self, levels, source, cache)

    def init(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        if not sweep:
            self.evaluator._sweep = lambda keep: None

    def remember(self, node, bits=None):
        if every:
            self.next_sweep = 0  # a sweep at every node cached
        orig_remember(self, node, bits)

    orig_remember = NodeEvaluator._remember
    NodeEvaluator._sweep = sweep_rec  # type: ignore[method-assign]
    NodeEvaluator.evaluate = eval_rec  # type: ignore[method-assign]
    NodeEvaluator._remember = remember  # type: ignore[method-assign]
    LatticeSearch.__init__ = init  # type: ignore[method-assign]
    result: object
    try:
        result = anonymize(table, hs, "flash", k=k, suppression_limit=suppression, options={"metric": metric})
    except Exception as exc:  # noqa: BLE001 - compared between the two runs
        result = type(exc).__name__
    finally:
        NodeEvaluator._sweep = orig_sweep  # type: ignore[method-assign]
        NodeEvaluator.evaluate = orig_eval  # type: ignore[method-assign]
        NodeEvaluator._remember = orig_remember  # type: ignore[method-assign]
        LatticeSearch.__init__ = orig_init  # type: ignore[method-assign]
    return result, events


@SETTINGS
@given(data=tie_heavy_tables(), k=st.integers(2, 6), suppression=st.sampled_from([0.0, 0.05, 0.2]),
       metric=st.sampled_from(["discernibility", "ncp"]))
def test_a_swept_node_is_never_a_source_again_and_the_result_is_unchanged(data, k, suppression, metric):
    table, hs = data
    swept, events = _flash_recording(table, hs, k, suppression, metric, sweep=True, every=True)
    plain, _ = _flash_recording(table, hs, k, suppression, metric, sweep=False, every=False)
    evicted: list[tuple] = []
    for kind, levels in events:
        if kind == "evicted":
            evicted.append(levels)
        else:  # no node swept out is a specialization of a node evaluated later
            assert not any(all(a <= b for a, b in zip(e, levels)) for e in evicted), (levels, evicted)
    if isinstance(plain, str):
        assert swept == plain
        return
    assert not isinstance(swept, str)
    assert swept.transformation == plain.transformation
    assert swept.metrics == plain.metrics
    assert swept.output.equals(plain.output)
    assert swept.search["nodes_checked"] == plain.search["nodes_checked"]
    if metric == "discernibility":  # and the optimum is the brute-force one
        assert tuple(swept.transformation[c] for c in table.qi) == canonical(every_node(table, hs, k, suppression))


def test_release_empties_the_cache_and_the_evaluator_stays_exact():
    rng = np.random.default_rng(7)
    hs = [make_hierarchy(f"q{j}", [f"v{j}{i}" for i in range(9)], 3, 2) for j in range(3)]
    codes = rng.integers(0, 9, size=(500, 3))
    freq = frequency_set(codes, np.array([9, 9, 9], dtype=np.int64))
    ev = NodeEvaluator(freq, hs, lambda sizes: sizes < 3)
    nodes = list(itertools.product(range(4), repeat=3))
    for levels in nodes[:30]:
        ev.evaluate(levels)
    assert ev.cache_total > 0 and ev.deltas
    ev.needed = lambda: np.ones((4, 4, 4), dtype=bool)
    ev.release()
    assert ev.needed is None and ev.cache_total == 0 and not ev.deltas
    assert all(n is None for n in ev.cache_nodes)
    assert all(c is None for cols in ev.gcols for c in cols._cols)
    for levels in nodes:  # rolled up again from whatever is cached now: the classes of the frequency set
        node = ev.evaluate(levels)
        _, sizes = equivalence_classes(freq.codes, freq.counts, hs, list(levels))
        assert sorted(node.sizes.tolist()) == sorted(sizes.tolist())
        assert int(node.sizes.sum()) == 500


def test_adult_with_suppression_sweeps_and_finds_the_same_optimum():
    from anonymizer_app.engine import read_hierarchy, read_table
    from tests.reference_data import ADULT

    qis = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
    frame, _ = read_table(ADULT / "adult.csv")
    table = Table(frame, {c: "quasi-identifying" for c in qis})
    hs = {c: read_hierarchy(ADULT / f"adult_hierarchy_{c}.csv") for c in qis}
    swept, events = _flash_recording(table, hs, 5, 0.04, "discernibility", sweep=True, every=True)
    plain, _ = _flash_recording(table, hs, 5, 0.04, "discernibility", sweep=False, every=False)
    evicted: list[tuple] = []
    for kind, levels in events:
        if kind == "evicted":
            evicted.append(levels)
        else:
            assert not any(all(a <= b for a, b in zip(e, levels)) for e in evicted)
    assert len(evicted) > 50  # the sweep does evict (Adult, 8 QIs, 4%: most checked nodes)
    assert swept.transformation == plain.transformation
    assert swept.metrics == plain.metrics
    assert swept.output.equals(plain.output)
