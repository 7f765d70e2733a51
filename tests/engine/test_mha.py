"""MHA (seed 004): the appendix example exactly, the building blocks, and end-to-end runs through verify()."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table, anonymize
from anonymizer_app.engine.algorithms import mha as M
from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.privacy import BetaLikeness, DistinctLDiversity

DISEASES = ["Alzheimer", "HIV", "Flu", "Depression"]
TABLE_COUNTS = np.array([4, 6, 8, 8])  # the appendix's 26 records


def _p():
    return TABLE_COUNTS / TABLE_COUNTS.sum()


# -- the appendix example ------------------------------------------------------------------------------
def test_appendix_bounds():
    f = M.enhanced_bound(_p(), 2.0)
    assert np.round(f, 4).tolist() == [0.4418, 0.5692, 0.6704, 0.6704]


def test_appendix_beta_partition():
    buckets, bounds, kept = M.beta_partition(np.array([2, 3, 4, 4]), _p(), 2.0)
    assert [b.tolist() for b in buckets] == [[0, 1], [2, 3]]  # {Alzheimer, HIV} {Flu, Depression}
    assert np.round(bounds, 4).tolist() == [0.4418, 0.6704]
    assert kept.tolist() == [2, 3, 4, 4]  # nothing over the bound


def test_appendix_beta_split():
    _, bounds, _ = M.beta_partition(np.array([2, 3, 4, 4]), _p(), 2.0)
    assert M.beta_split([5, 8], bounds, 2) == [[3, 4], [1, 2], [1, 2]]
    # the intermediate steps: [5,8] -> [2,4],[3,4]; [2,4] -> [1,2],[1,2]; [3,4] stays (2/4 > 0.4418)
    assert M.beta_split([2, 4], bounds, 2) == [[1, 2], [1, 2]]
    assert M.beta_split([3, 4], bounds, 2) == [[3, 4]]
    assert 2 / 4 > bounds[0]


def _appendix_table():
    labels = np.repeat(DISEASES, TABLE_COUNTS)
    age = np.arange(30, 56)
    frame = pd.DataFrame({"id": [f"p{i}" for i in range(26)], "age": age.astype(str), "disease": labels})
    return Table(frame, {"id": "identifying", "age": "qi", "disease": "sensitive"})


def test_appendix_end_to_end(monkeypatch):
    """One background-knowledge cluster (l = 1) of the 26 records: root [10, 16] splits into two [5, 8],
    each into the appendix leaves [3,4], [1,2], [1,2]; classes are filled exactly so."""
    monkeypatch.setattr(M, "REFINE_PASSES", 0)
    table = _appendix_table()
    r = anonymize(table, None, "mha", k=2, models=[BetaLikeness(2.0)], options={"js l": 1.0, "seed": 3})
    assert r.verified and r.search["bk_clusters"] == 1 and r.search["suppressed_beta_surplus"] == 0
    group = pd.Series(r.class_of_row)
    comp = sorted(
        (int(d.isin(["Alzheimer", "HIV"]).sum()), int(d.isin(["Flu", "Depression"]).sum()))
        for _, d in table.frame["disease"].groupby(group)
    )
    assert comp == [(1, 2)] * 4 + [(3, 4)] * 2
    assert not r.suppressed.any()


# -- building blocks ------------------------------------------------------------------------------------
def test_js_divergence():
    assert M.js_divergence([0.5, 0.5], [0.5, 0.5]) == pytest.approx(0.0)
    assert M.js_divergence([1.0, 0.0], [0.0, 1.0]) == pytest.approx(1.0)
    d = np.array([[0.2, 0.8], [0.6, 0.4], [1.0, 0.0]])
    mat = M.js_matrix(d)
    for i, j in itertools.product(range(3), repeat=2):
        assert mat[i, j] == pytest.approx(float(M.js_divergence(d[i], d[j])))


def _naive_complete_linkage(D, t):
    clusters = [[i] for i in range(len(D))]
    while True:
        best = None
        for a, b in itertools.combinations(range(len(clusters)), 2):
            d = max(D[i, j] for i in clusters[a] for j in clusters[b])
            if d <= t and (best is None or d < best[0]):
                best = (d, a, b)
        if best is None:
            return sorted(sorted(c) for c in clusters)
        _, a, b = best
        clusters[a] += clusters.pop(b)


@pytest.mark.parametrize("seed", range(8))
def test_complete_linkage_equals_naive(seed):
    rng = np.random.default_rng(seed)
    x = rng.random((25, 2))
    D = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    t = float(rng.uniform(0.1, 0.6))
    labels = M.complete_linkage(D, t)
    got = sorted(sorted(np.flatnonzero(labels == c).tolist()) for c in np.unique(labels))
    assert got == _naive_complete_linkage(D, t)
    for c in np.unique(labels):
        u = np.flatnonzero(labels == c)
        assert D[np.ix_(u, u)].max() <= t + 1e-12


def test_hilbert_order_is_continuous():
    side = 8
    grid = np.array([(i, j) for i in range(side) for j in range(side)])
    keys = M.hilbert_keys((grid + 0.5) / side)
    assert len(np.unique(keys)) == side * side
    path = grid[np.argsort(keys)]
    steps = np.abs(np.diff(path, axis=0)).sum(axis=1)
    assert (steps == 1).all()


def test_beta_partition_removes_surplus():
    p = np.array([0.25, 0.75])
    buckets, bounds, kept = M.beta_partition(np.array([0, 40]), p, 1.0)
    assert kept.tolist() == [0, 0]  # a cluster of one value cannot be β-like at all
    buckets, bounds, kept = M.beta_partition(np.array([30, 10]), p, 1.0)
    f = M.enhanced_bound(p, 1.0)
    assert kept[1] == 10 and kept[0] / kept.sum() <= f[0] and (kept[0] + 1) / (kept.sum() + 1) > f[0]


# -- end to end -----------------------------------------------------------------------------------------
def _random_table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    sex = rng.choice(["m", "f"], n)
    # the sensitive value depends on age: background knowledge worth clustering on
    p_high = np.clip((age - 18) / 80, 0.05, 0.9)
    sal = np.where(rng.random(n) < p_high, ">50K", "<=50K")
    dis = rng.choice(["a", "b", "c", "d"], n, p=[0.1, 0.2, 0.3, 0.4])
    frame = pd.DataFrame({"age": age.astype(str), "sex": sex, "salary": sal, "dis": dis})
    return Table(frame, {"age": "qi", "sex": "qi", "salary": "sensitive", "dis": "insensitive"})


@pytest.mark.parametrize("k,beta,l_js", [(2, 1.0, 0.3), (5, 2.0, 0.1), (10, 0.5, 1.0), (3, 1.5, 0.05)])
def test_mha_verified_and_metrics(k, beta, l_js):
    table = _random_table()
    r = anonymize(table, None, "mha", k=k, suppression_limit=0.5, options={"js l": l_js, "mha beta": beta})
    assert r.verified
    assert {m.name for m in r.models} == {"k-anonymity", "beta-likeness"}
    s = r.search
    assert s["max_js_within_clusters"] <= l_js + 1e-9
    assert s["gcp"] == pytest.approx(r.metrics["ncp"] * table.n)
    assert 0 <= s["record_linkage"] <= 1
    kept = r.class_sizes
    assert (kept >= k).all()
    assert int(r.suppressed.sum()) == s["suppressed_small_clusters"] + s["suppressed_beta_surplus"]


def test_mha_uses_the_runs_beta_model_and_is_seeded():
    table = _random_table(seed=1)
    a = anonymize(table, None, "mha", k=4, suppression_limit=0.5, models=[BetaLikeness(1.5)], options={"seed": 7})
    b = anonymize(table, None, "mha", k=4, suppression_limit=0.5, models=[BetaLikeness(1.5)], options={"seed": 7})
    assert a.search["beta"] == 1.5 and a.verified
    assert [m.name for m in a.models].count("beta-likeness") == 1
    assert a.output.equals(b.output)


def test_mha_refuses_what_it_cannot_honour():
    table = _random_table()
    with pytest.raises(InputError, match="cannot honour"):
        anonymize(table, None, "mha", k=2, models=[DistinctLDiversity(2)])
    frame = table.frame.drop(columns=["salary"])
    plain = Table(frame, {"age": "qi", "sex": "qi", "dis": "insensitive"})
    with pytest.raises(InputError, match="sensitive column"):
        anonymize(plain, None, "mha", k=2)
    with pytest.raises(InputError):
        anonymize(table, None, "mha", k=2, options={"js l": 1.5})
