"""t-closeness with equal distance: the verdicts of the check the searches call (t_closeness.equal_failing) against
an exact rational brute force, and against the figure the model reports (``values``) at the boundary, where the
check hands the matrix to that figure."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from anonymizer_app.engine.privacy import TCloseness
from anonymizer_app.engine.privacy import t_closeness as tc
from anonymizer_app.engine.privacy.base import EPS
from anonymizer_app.engine.privacy.distributions import SensitiveDomain


def _domain(table_counts) -> SensitiveDomain:
    table_counts = np.asarray(table_counts, dtype=np.int64)
    m = len(table_counts)
    return SensitiveDomain("s", np.array([f"v{i}" for i in range(m)], dtype=object), np.zeros(1, dtype=np.int64),
                           table_counts)


def _exact_emd(row, table_counts) -> Fraction:
    """½ Σ |c_i/s - T_i/N| in rationals (s = 0: the class's shares are all 0, as the model takes them)."""
    s, n = sum(int(c) for c in row), sum(int(t) for t in table_counts)
    return Fraction(1, 2) * sum(abs(Fraction(int(c), max(s, 1)) - Fraction(int(t), n))
                                for c, t in zip(row, table_counts))


def _exact_failing(counts, table_counts, t: float) -> list[bool]:
    threshold = Fraction(t + EPS)  # the float the model compares with, exactly
    return [_exact_emd(row, table_counts) > threshold for row in counts]


@pytest.mark.parametrize("seed", range(40))
def test_verdicts_equal_the_exact_rationals(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 9))
    table_counts = rng.integers(1, 40, m)
    n = int(rng.integers(1, 60))
    counts = rng.integers(0, int(rng.integers(1, 12)), (n, m))
    counts[rng.random(n) < 0.1] = 0  # classes without records (their shares are all 0)
    dom = _domain(table_counts)
    for t in (0.01, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 0.99):
        model = TCloseness(t, "equal", "s")
        got = model.classes_failing(counts.sum(axis=1), counts, dom)
        assert got.dtype == bool
        assert got.tolist() == _exact_failing(counts, table_counts, t)
        assert got.tolist() == (model.values(counts, dom) > t + EPS).tolist()


def test_a_class_exactly_at_t_holds():
    # table 1:1:2 (q = 1/4, 1/4, 1/2); the class 2:0:2 has shares 1/2, 0, 1/2: EMD = ½ (1/4 + 1/4) = 1/4
    dom = _domain([1, 1, 2])
    counts = np.array([[2, 0, 2], [1, 1, 2], [4, 0, 0], [0, 0, 0]])
    assert [_exact_emd(r, [1, 1, 2]) for r in counts] == [Fraction(1, 4), 0, Fraction(3, 4), Fraction(1, 2)]
    assert TCloseness(0.25, "equal", "s").classes_failing(None, counts, dom).tolist() == [False, False, True, True]
    assert TCloseness(0.2, "equal", "s").classes_failing(None, counts, dom).tolist() == [True, False, True, True]
    assert TCloseness(0.75, "equal", "s").classes_failing(None, counts, dom).tolist() == [False] * 4


@pytest.mark.parametrize("seed", range(20))
def test_classes_at_the_boundary_are_judged_by_the_reported_figure(seed, monkeypatch):
    """t chosen so that t + EPS is a class's EMD as ``values`` computes it (within rounding): the check defers to
    that figure for the whole matrix, so the verdicts are the figure's to the last bit."""
    rng = np.random.default_rng(500 + seed)
    m = int(rng.integers(2, 16))
    table_counts = rng.integers(1, 1000, m)
    counts = rng.integers(0, 50, (int(rng.integers(2, 40)), m))
    counts[counts.sum(axis=1) == 0, 0] = 1
    dom = _domain(table_counts)
    figures = TCloseness(0.5, "equal", "s").values(counts, dom)
    target = float(figures[int(rng.integers(0, len(counts)))])
    deferred = []
    original = tc.emd_equal

    def spy(p, q, overwrite=False):
        deferred.append(len(p))
        return original(p, q, overwrite)

    monkeypatch.setattr(tc, "emd_equal", spy)
    for t in (target - EPS, np.nextafter(target - EPS, 0), np.nextafter(target - EPS, 1)):
        if not 0 < t <= 1:
            continue
        model = TCloseness(float(t), "equal", "s")
        deferred.clear()
        got = model.classes_failing(None, counts, dom)
        assert deferred  # the check deferred to the figure
        assert got.tolist() == (model.values(counts, dom) > model.t + EPS).tolist()


def test_fast_verdicts_do_not_defer_away_from_the_boundary(monkeypatch):
    """Far from t, the check decides itself (no call to the figure's emd_equal) and agrees with the rationals."""
    rng = np.random.default_rng(7)
    table_counts = rng.integers(1, 100, 14)
    counts = rng.integers(0, 30, (300, 14)) + 1
    dom = _domain(table_counts)
    emds = [_exact_emd(r, table_counts) for r in counts]
    t = 0.2
    assert all(abs(e - Fraction(t + EPS)) > Fraction(1, 10**6) for e in emds)
    monkeypatch.setattr(tc, "emd_equal", lambda *a, **k: pytest.fail("deferred"))
    got = TCloseness(t, "equal", "s").classes_failing(None, counts, dom)
    assert got.tolist() == [e > Fraction(t + EPS) for e in emds]


def test_no_classes_and_counts_left_unchanged():
    dom = _domain([3, 5])
    model = TCloseness(0.2, "equal", "s")
    assert model.classes_failing(np.zeros(0), np.zeros((0, 2), dtype=np.int64), dom).tolist() == []
    counts = np.array([[1, 0], [3, 5]])
    kept = counts.copy()
    assert model.classes_failing(None, counts, dom).tolist() == [True, False]
    assert (counts == kept).all()  # another model on the column may read the same matrix


def _compositions(s: int, m: int):
    """Every way of putting s records into m values."""
    if m == 1:
        yield (s,)
        return
    for first in range(s + 1):
        for rest in _compositions(s - first, m - 1):
            yield (first, *rest)


@pytest.mark.parametrize("seed", range(12))
def test_sizes_sure_to_fail_equal_the_brute_force_over_every_composition(seed):
    """A size is sure to fail exactly when no class of that many records, whatever its values, is within t: the
    least EMD over every composition, in rationals."""
    rng = np.random.default_rng(900 + seed)
    m = int(rng.integers(1, 5))
    table_counts = rng.integers(1, 30, m)
    dom = _domain(table_counts)
    for t in (0.05, 0.1, 0.2, 0.3, 0.45, 0.6):
        threshold = Fraction(t + EPS)
        sure = tc.sure_failing_sizes(dom, t + EPS)
        model = TCloseness(t, "equal", "s")
        assert len(sure) >= 2 and not sure[-1]  # sizes above the table: not known
        for s in range(0, min(len(sure) - 1, 11) + 1):
            rows = np.array(list(_compositions(s, m)) if s else [(0,) * m], dtype=np.int64)
            least = min(_exact_emd(r, table_counts) for r in rows)
            assert bool(sure[s]) == (least > threshold), (s, least)
            if sure[s]:  # and every such class fails the model's own check
                assert model.classes_failing(None, rows, dom).all()
        sizes = np.arange(0, 3 * len(sure))
        assert model.failing_by_size(sizes, dom).tolist() == [bool(sure[min(s, len(sure) - 1)]) for s in sizes]


def test_the_table_of_sizes_reaches_every_size_that_may_be_sure():
    """From m / threshold records on, some class is within t: the table may stop there (checked on sizes past it)."""
    table_counts = np.array([5, 1, 13])
    dom = _domain(table_counts)
    t = 0.3
    sure = tc.sure_failing_sizes(dom, t + EPS)
    assert len(sure) == 3 // (t + EPS) + 1 + 2
    for s in range(len(sure) - 1, len(sure) + 12):
        least = min(_exact_emd(r, table_counts) for r in _compositions(s, 3))
        assert least <= Fraction(t + EPS)


def test_adult_occupation_sizes_sure_to_fail_at_0_2():
    """Adult's occupation (14 values, 30,162 records): classes of 1-6, 10 and 11 records cannot be 0.2-close."""
    counts = [3721, 9, 4030, 3992, 989, 1350, 1966, 3212, 143, 4038, 644, 3584, 912, 1572]
    assert sum(counts) == 30162
    sure = tc.sure_failing_sizes(_domain(counts), 0.2 + EPS)
    assert np.flatnonzero(sure).tolist() == [0, 1, 2, 3, 4, 5, 6, 10, 11]


def test_other_distances_do_not_tell_from_sizes():
    dom = _domain([3, 5])
    assert TCloseness(0.2, "ordered", "s").failing_by_size(np.array([1, 2]), dom) is None
    assert TCloseness(0.2, "hierarchical", "s").failing_by_size(np.array([1, 2]), dom) is None


def _hierarchical_with_add_at(p, q, hierarchy, leaf_of_value):
    """emd_hierarchical as it was written with np.add.at (the figure reports and golden outputs were made with)."""
    H = hierarchy.height
    if H == 0:
        return np.zeros(len(p))
    d = p - q[None, :]
    total = np.zeros(len(p))
    for lv in range(1, H + 1):
        child = hierarchy.maps[lv - 1][leaf_of_value]
        parent_of_child = np.zeros(len(hierarchy.labels[lv - 1]), dtype=np.int64)
        parent_of_child[child] = hierarchy.maps[lv][leaf_of_value]
        n_child, n_parent = len(hierarchy.labels[lv - 1]), len(hierarchy.labels[lv])
        extra = np.zeros((len(p), n_child))
        np.add.at(extra.T, child, d.T)
        pos = np.zeros((len(p), n_parent))
        neg = np.zeros((len(p), n_parent))
        np.add.at(pos.T, parent_of_child, np.maximum(extra, 0).T)
        np.add.at(neg.T, parent_of_child, np.maximum(-extra, 0).T)
        total += (lv / H) * np.minimum(pos, neg).sum(axis=1)
    return total


@pytest.mark.parametrize("seed", range(40))
def test_hierarchical_figures_equal_the_add_at_ones_to_the_last_bit(seed):
    from ._lattice_helpers import make_hierarchy

    rng = np.random.default_rng(1300 + seed)
    n_leaves = int(rng.integers(2, 90))
    h = make_hierarchy("s", [f"x{i:03d}" for i in range(n_leaves)], int(rng.integers(1, 4)), int(rng.integers(2, 14)))
    present = np.sort(rng.choice(n_leaves, int(rng.integers(1, n_leaves + 1)), replace=False))  # the table's values
    leaf_of_value = np.array([h.leaf_index[f"x{i:03d}"] for i in present], dtype=np.int64)
    table_counts = rng.integers(1, 50, len(present))
    q = table_counts / table_counts.sum()
    counts = rng.integers(0, 9, (int(rng.integers(1, 300)), len(present)))
    counts[rng.random(len(counts)) < 0.5] *= 0  # many empty and sparse rows
    p = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    got = tc.emd_hierarchical(p, q, h, leaf_of_value)
    assert got.tobytes() == _hierarchical_with_add_at(p, q, h, leaf_of_value).tobytes()


def test_sizes_sure_to_fail_on_small_tables():
    # T = 3:1 at t = 0.2: one record leaves at least 1 - 3/4 = 1/4; two at least 1/4 (shares 1/2, 1/2 or 1, 0);
    # three may be 2:1 (1/12); a class holds at most the table's 4 records
    assert tc.sure_failing_sizes(_domain([3, 1]), 0.2 + EPS).tolist() == [True, True, True, False, False, False]
    assert tc.sure_failing_sizes(_domain([0, 0]), 0.2 + EPS).tolist() == [False, False]  # no records: nothing known
