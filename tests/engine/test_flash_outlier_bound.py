"""Flash with suppression and discernibility, k-anonymity alone: the nodes excluded by the incumbent's
outlier cap (LatticeSearch.outlier_cap, EXCLUDED) and the outlier bound of the branch and bound change
which nodes are checked, never the optimum: the levels are the least (discernibility, rank, index) over
every node within the budget, computed here node by node from engine.search.lattice.equivalence_classes."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymizer_app.engine import Table, UnsatisfiableError, anonymize, read_hierarchy, read_table
from anonymizer_app.engine.model.table import frequency_set
from anonymizer_app.engine.search.lattice import (
    ANONYMOUS,
    NOT_ANONYMOUS,
    PRUNED,
    Lattice,
    equivalence_classes,
)
from anonymizer_app.engine.search.lattice_search import EXCLUDED, LatticeSearch

from ._lattice_helpers import make_hierarchy

DM = {"metric": "discernibility"}
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def tie_heavy_tables(draw):
    """Up to 300 rows over few distinct values (many equal tuples, many equal discernibility values)."""
    q = draw(st.integers(2, 4))
    n = draw(st.integers(10, 300))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    cols, hs = {}, {}
    for j in range(q):
        d = draw(st.integers(2, 8))
        leaves = [f"v{j}{i}" for i in range(d)]
        name = f"q{j}"
        hs[name] = make_hierarchy(name, leaves, draw(st.integers(1, 3)), draw(st.integers(2, 3)))
        skew = rng.dirichlet(np.full(d, 0.5))  # skewed: rare values make small classes
        cols[name] = [leaves[i] for i in rng.choice(d, size=n, p=skew)]
    frame = pd.DataFrame(cols, dtype=object)
    return Table(frame, {c: "quasi-identifying" for c in hs}), hs


def every_node(table: Table, hs: dict, k: int, suppression: float):
    """Per node (C order): levels, records suppressed, discernibility (None over the budget)."""
    ordered = [hs[c] for c in table.qi]
    freq = frequency_set(table.encode(hs))
    budget = int(suppression * table.n + 1e-9)
    out = []
    for levels in itertools.product(*[range(h.height + 1) for h in ordered]):
        _, sizes = equivalence_classes(freq.codes, freq.counts, ordered, list(levels))
        small = sizes < k
        outliers = int(sizes[small].sum())
        value = int(np.sum(sizes[~small] ** 2)) + outliers * table.n if outliers <= budget else None
        out.append((levels, outliers, value))
    return out


def canonical(nodes) -> tuple | None:
    """The least (value, rank, index): the optimum LatticeSearch.optimum breaks ties to."""
    ranked = [(v, sum(lv), i, lv) for i, (lv, _, v) in enumerate(nodes) if v is not None]
    return min(ranked)[3] if ranked else None


def flash(table, hs, k, suppression, searches: list | None = None):
    if searches is not None:
        original = LatticeSearch.recoding

        def keep(self, *args, **kwargs):
            searches.append(self)
            return original(self, *args, **kwargs)

    try:
        if searches is not None:
            LatticeSearch.recoding = keep  # type: ignore[method-assign]
        return anonymize(table, hs, "flash", k=k, suppression_limit=suppression, options=DM)
    except UnsatisfiableError:
        return None
    finally:
        if searches is not None:
            LatticeSearch.recoding = original  # type: ignore[method-assign]


@SETTINGS
@given(data=tie_heavy_tables(), k=st.integers(2, 6), suppression=st.sampled_from([0.02, 0.05, 0.1, 0.3]))
def test_flash_levels_are_the_canonical_optimum_and_tags_are_sound(data, k, suppression):
    table, hs = data
    nodes = every_node(table, hs, k, suppression)
    expected = canonical(nodes)
    searches: list = []
    result = flash(table, hs, k, suppression, searches)
    if expected is None:
        assert result is None
        return
    assert result is not None and result.verified
    assert tuple(result.transformation[c] for c in table.qi) == expected
    best = min(v for _, _, v in nodes if v is not None)
    assert result.metrics["discernibility"] == best
    (search,) = searches
    tags = search.tags.reshape(-1)
    for i, (_, outliers, value) in enumerate(nodes):
        tag = int(tags[i])
        if tag == ANONYMOUS:
            assert value is not None
        elif tag == NOT_ANONYMOUS:
            assert value is None
        elif tag in (PRUNED, EXCLUDED):  # neither can be the optimum nor tie with it
            assert value is None or value > best
        if tag == EXCLUDED:  # over the cap of the best value found then, so of the final best too
            assert outliers > search.outlier_cap()


@SETTINGS
@given(data=tie_heavy_tables(), k=st.integers(2, 6), suppression=st.sampled_from([0.05, 0.2]))
def test_without_the_cap_and_the_outlier_bound_the_same_optimum(data, k, suppression):
    table, hs = data
    with_bound = flash(table, hs, k, suppression)
    original_cap, original_init = LatticeSearch.outlier_cap, LatticeSearch.__init__

    def plain_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self.outlier_lb = None  # neither the cap (flash sets excluding from it) nor the bound

    LatticeSearch.__init__ = plain_init  # type: ignore[method-assign]
    LatticeSearch.outlier_cap = lambda self: self.budget  # type: ignore[method-assign]
    try:
        without = flash(table, hs, k, suppression)
    finally:
        LatticeSearch.__init__ = original_init  # type: ignore[method-assign]
        LatticeSearch.outlier_cap = original_cap  # type: ignore[method-assign]
    if without is None:
        assert with_bound is None
        return
    assert with_bound is not None
    assert with_bound.transformation == without.transformation
    assert with_bound.metrics == without.metrics
    assert with_bound.output.equals(without.output)


def test_outlier_cap_hand_worked():
    """N = 100, k = 5: a node suppressing o records costs at least 100*o + 5*(100 - o) = 500 + 95*o;
    with a best of 5,000 no node suppressing more than (5000 - 500) // 95 = 47 records can be optimal."""
    frame = pd.DataFrame({"a": ["x"] * 100}, dtype=object)
    hs = {"a": make_hierarchy("a", ["x"], 1, 2)}
    searches: list = []
    flash(Table(frame, {"a": "quasi-identifying"}), hs, 5, 0.6, searches)
    (search,) = searches
    search.best = 5000.0
    assert search.outlier_cap() == 47
    assert 500 + 95 * 48 > 5000 >= 500 + 95 * 47
    search.best = 20_000.0  # the cap never exceeds the budget (60 records)
    assert search.outlier_cap() == 60


QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 5, 10])
def test_adult_with_suppression_flash_equals_exhaustive(k, demo_datasets):
    adult = demo_datasets / "adult"
    frame, _ = read_table(adult / "adult.csv")
    table = Table(frame, {c: "quasi-identifying" for c in QIS})
    hs = {c: read_hierarchy(adult / f"adult_hierarchy_{c}.csv") for c in QIS}
    fast = anonymize(table, hs, "flash", k=k, suppression_limit=0.04, options=DM)
    full = anonymize(table, hs, "exhaustive", k=k, suppression_limit=0.04, options=DM)
    assert fast.transformation == full.transformation
    assert fast.metrics["discernibility"] == full.metrics["discernibility"] == fast.search["optimum_value"]
    assert fast.output.equals(full.output)
    assert fast.search["nodes_checked"] < Lattice([hs[c] for c in QIS]).size == full.search["nodes_checked"]
