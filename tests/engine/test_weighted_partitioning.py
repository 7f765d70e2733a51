"""Attribute weights in Mondrian's cut choice and in the clustering distances (issue 30).

Mondrian is checked against a plain recursive re-implementation written here from the rule in definitions.md
(strict median cuts on numeric QIs; the QI with the largest weight factor x normalized width that has an
allowable cut, then the wider, then the first; weight 0 after every weighted QI): every published cell and
the number of cuts per QI, on the fast all-regions-at-once path (k-anonymity) and on the one-region loop
(distinct l-diversity). The clustering distance is checked against the weighted sum of Byun et al.'s terms
computed here record by record.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import InputError, Table, anonymize, parse_hierarchy
from anonymizer_app.engine.algorithms.mondrian import partition
from anonymizer_app.engine.privacy import DistinctLDiversity
from anonymizer_app.engine.search.distance import Centroids, Encoded
from anonymizer_app.engine.search.recoding import QISpace

from ._local import problem_of

QIS = ["a", "b", "c"]


def numeric_table(n: int, seed: int) -> tuple[Table, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.stack([rng.integers(0, 40, n), rng.integers(100, 130, n), rng.integers(0, 9, n)], axis=1)
    s = rng.choice(["x", "y", "z"], n)
    frame = pd.DataFrame({q: X[:, j].astype(str) for j, q in enumerate(QIS)} | {"s": s})
    return Table(frame, {"a": "qi", "b": "qi", "c": "qi", "s": "sensitive"}), X, s


def factors_of(weights: dict[str, float]) -> np.ndarray:
    w = np.array([weights.get(q, 0.5) for q in QIS])
    return w * len(w) / w.sum()


def reference_mondrian(X: np.ndarray, s: np.ndarray, k: int, ell: int | None, f: np.ndarray):
    """Published cells (list of tuples of strings per row) and cuts per QI, by plain recursion."""
    span = np.where(X.max(0) > X.min(0), X.max(0) - X.min(0), 1).astype(float)
    cuts = [0, 0, 0]

    def allowable(rows: list[int]) -> bool:
        return len(rows) >= k and (ell is None or len({s[r] for r in rows}) >= ell)

    def split(rows: list[int]) -> list[list[int]]:
        if len(rows) >= 2 * k:
            sub = X[rows]
            width = [(sub[:, j].max() - sub[:, j].min()) / span[j] for j in range(3)]
            order = sorted((j for j in range(3) if width[j] > 0), key=lambda j: (-(width[j] * f[j]), -width[j], j))
            for j in order:
                values = sorted(set(sub[:, j].tolist()))
                cum = np.cumsum([int((sub[:, j] == v).sum()) for v in values])
                gaps = [abs(2 * int(c) - len(rows)) for c in cum[:-1]]
                cut_after = values[gaps.index(min(gaps))]
                left = [r for r in rows if X[r, j] <= cut_after]
                right = [r for r in rows if X[r, j] > cut_after]
                if allowable(left) and allowable(right):
                    cuts[j] += 1
                    return split(left) + split(right)
        return [rows]

    cells: list[tuple] = [()] * len(X)
    for part in split(list(range(len(X)))):
        lo, hi = X[part].min(0), X[part].max(0)
        label = tuple(str(a) if a == b else f"[{a}-{b}]" for a, b in zip(lo, hi))
        for r in part:
            cells[r] = label
    return cells, cuts


WEIGHTINGS = [{"a": 0.0}, {"a": 1.0, "b": 0.1, "c": 0.0}, {"b": 0.0, "c": 1.0}, {"a": 0.2, "b": 0.9, "c": 0.6}]


@pytest.mark.parametrize("weights", WEIGHTINGS)
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("diversity", [False, True])
def test_mondrian_cut_choice_matches_reference(weights, seed, diversity):
    table, X, s = numeric_table(90, seed)
    text = ",".join(f"{q}={w}" for q, w in weights.items())
    models = [DistinctLDiversity(2)] if diversity else None
    result = anonymize(table, algorithm="mondrian", k=3, models=models, options={"weights": text})
    cells, cuts = reference_mondrian(X, s, 3, 2 if diversity else None, factors_of(weights))
    published = list(zip(*(result.output[q].tolist() for q in QIS)))
    assert published == cells
    assert result.search["cuts"] == dict(zip(QIS, cuts))
    assert result.search["weight_factors"] == pytest.approx(dict(zip(QIS, factors_of(weights))))
    if weights.get("a") == 0.0:
        assert cuts[0] == 0 or all(c > 0 for c in cuts[1:])  # a only when nothing else could be cut
    # the weights change the partitions: not the unweighted run's cells
    plain, _ = reference_mondrian(X, s, 3, 2 if diversity else None, np.ones(3))
    assert cells != plain


def test_weight_zero_cut_only_as_last_resort():
    # b takes two values only: once b is cut, a partition of one b can only be cut along a (weight 0)
    frame = pd.DataFrame({"a": [str(v) for v in range(8)], "b": ["1", "2"] * 4})
    table = Table(frame, {"a": "qi", "b": "qi"})
    result = anonymize(table, algorithm="mondrian", k=2, options={"weights": "a=0,b=1"})
    # first cut along b (the only weighted QI with width), then a in each half (4 records each: 2 + 2)
    assert result.search["cuts"] == {"a": 2, "b": 1}
    assert sorted(set(result.output["b"])) == ["1", "2"]
    assert sorted(set(result.output["a"])) == ["[0-2]", "[1-3]", "[4-6]", "[5-7]"]
    unweighted = anonymize(table, algorithm="mondrian", k=2)  # a is the widest: cut first, then b in each half
    assert unweighted.search["cuts"] == {"a": 1, "b": 2}


def test_equal_weights_are_the_unweighted_run():
    table, _, _ = numeric_table(90, 3)
    plain = anonymize(table, algorithm="mondrian", k=3)
    for text in ("a=0.3,b=0.3,c=0.3", "a=0.5", ""):
        same = anonymize(table, algorithm="mondrian", k=3, options={"weights": text})
        assert same.output.equals(plain.output)
        assert same.search == plain.search  # no weight_factors key: the report as before
    for algorithm in ("kmember", "oka"):
        plain = anonymize(table, algorithm=algorithm, k=3)
        same = anonymize(table, algorithm=algorithm, k=3, options={"weights": "a=1,b=1,c=1"})
        assert same.output.equals(plain.output)


@pytest.mark.parametrize("algorithm", ["mondrian", "kmember", "oka"])
def test_bad_weights_refused(algorithm):
    table, _, _ = numeric_table(30, 0)
    with pytest.raises(InputError, match="'d' is not a quasi-identifier"):
        anonymize(table, algorithm=algorithm, k=3, options={"weights": "d=1"})
    with pytest.raises(InputError, match="at least one quasi-identifier needs a weight above 0"):
        anonymize(table, algorithm=algorithm, k=3, options={"weights": "a=0,b=0,c=0"})


ZONE = "a1;a;*\na2;a;*\na3;a;*\nb1;b;*\nb2;b;*\nc1;c;*\n"


def _mixed(n: int, seed: int):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(18, 90, n).astype(str), "zone": rng.choice(
        ["a1", "a2", "a3", "b1", "b2", "c1"], n), "w": rng.integers(0, 1000, n).astype(str)})
    table = Table(frame, {"age": "qi", "zone": "qi", "w": "qi"})
    return table, {"zone": parse_hierarchy(ZONE, "zone")}


@pytest.mark.parametrize("weights", [(1.0, 0.0, 0.5), (0.2, 1.0, 0.0), (0.7, 0.3, 0.9)])
def test_weighted_distance_against_plain_sum(weights):
    table, given = _mixed(60, 4)
    problem = problem_of(table, given, 2)
    space = QISpace(problem.hierarchies, [True, False, True], problem.codes)
    f = np.array(weights) * 3 / sum(weights)
    enc = Encoded(space, problem.freq.codes, f)
    codes = problem.freq.codes
    zone = problem.hierarchies[1]
    ages = np.array([float(zone_v) for zone_v in space.values[0]])[codes[:, 0]]
    ws = np.array([float(v) for v in space.values[2]])[codes[:, 2]]
    parent = {leaf: row[1] for leaf, row in zip(zone.leaves, [r.split(";") for r in ZONE.split()])}
    leaves = list(zone.leaves)

    def zone_term(x: int, y: int) -> float:  # height of the LCA / height of the tree (2)
        a, b = leaves[x], leaves[y]
        return 0.0 if a == b else (0.5 if parent[a] == parent[b] else 1.0)

    span_a, span_w = np.ptp(ages), np.ptp(ws)

    def plain(i: int, j: int) -> float:
        return (f[0] * abs(ages[i] - ages[j]) / span_a + f[1] * zone_term(codes[i, 1], codes[j, 1])
                + f[2] * abs(ws[i] - ws[j]) / span_w)

    n = len(codes)
    for other in (0, 7, n - 1):
        got = enc.distance_to_item(np.arange(n), other)
        assert got == pytest.approx([plain(i, other) for i in range(n)], abs=1e-12)
    # to a cluster's centroid: numeric means, the zone's LCA over the members
    members = np.array([1, 2, 5])
    cent = Centroids(enc, members[:1])
    cent.add(np.zeros(2, dtype=np.int64), members[1:])
    mean_a, mean_w = ages[members].mean(), ws[members].mean()
    got = enc.distance_pairs(np.arange(n), cent, np.zeros(n, dtype=np.int64))
    for i in range(n):
        zs = {leaves[z] for z in codes[np.append(members, i), 1]}
        lca = 0.0 if len(zs) == 1 else (0.5 if len({parent[z] for z in zs}) == 1 else 1.0)
        expected = f[0] * abs(ages[i] - mean_a) / span_a + f[1] * lca + f[2] * abs(ws[i] - mean_w) / span_w
        assert got[i] == pytest.approx(expected, abs=1e-12)


def test_kmember_pairs_by_the_weighted_qi():
    # four records in two pairs: with the weight on x the pairs share x (y generalized), and the other way round
    frame = pd.DataFrame({"x": ["0", "0", "10", "10"], "y": ["0", "10", "0", "10"]})
    table = Table(frame, {"x": "qi", "y": "qi"})
    for seed in range(4):
        by_x = anonymize(table, algorithm="kmember", k=2, options={"weights": "x=1,y=0", "seed": seed})
        assert by_x.output["x"].tolist() == ["0", "0", "10", "10"]
        assert by_x.output["y"].tolist() == ["[0-10]"] * 4
        by_y = anonymize(table, algorithm="kmember", k=2, options={"weights": "x=0,y=1", "seed": seed})
        assert by_y.output["y"].tolist() == ["0", "10", "0", "10"]
        assert by_y.output["x"].tolist() == ["[0-10]"] * 4


def test_oka_weighted_runs_keep_k():
    table, given = _mixed(120, 5)
    for text in ("age=1,zone=0,w=0.2", "age=0,zone=1,w=0"):
        result = anonymize(table, given, algorithm="oka", k=4, options={"weights": text})
        assert result.verified and result.metrics["min_class_size"] >= 4


@pytest.mark.parametrize("weights", ["age=1,zone=0", "age=0,zone=1,sex=0.1"])
def test_the_cluster_cuts_follow_the_weights(weights):
    """The Dask backend's top-level cuts (from the box histograms, and on the frequency set) take the weighted
    order too: cut to the end they are mondrian.partition's partitions and cuts per QI with the same weights."""
    dmondrian = pytest.importorskip("anonymizer_app.engine.backends.dask.mondrian")
    partitions = pytest.importorskip("anonymizer_app.engine.backends.dask.partitions")
    from ._dask_table import ROLES, hierarchies, people

    frame = people(2_000, seed=4).drop(columns=["income"])
    table = Table(frame, dict(ROLES))
    problem = problem_of(table, hierarchies(), 4, {"weights": weights})
    qi, raw = list(table.qi), frame.astype(str)
    columns = [str(c) for c in raw.columns]

    def histograms(boxes):
        return partitions.region_histograms(raw, columns, qi, problem.hierarchies, (), boxes, 0)

    tup, part, _, cuts, _ = partition(problem)
    expected = {frozenset(tup[part == p].tolist()) for p in np.unique(part)}
    unweighted = problem_of(table, hierarchies(), 4)
    plain = partition(unweighted)[3]
    assert cuts.tolist() != plain.tolist()  # the weights change the cuts
    final, waiting, box_cuts = dmondrian.top_cuts_by_histograms(problem, 10**9, histograms)
    assert waiting == [] and box_cuts.tolist() == cuts.tolist()
    assert {frozenset(dmondrian.box_tuples(problem.freq.codes, box).tolist()) for box in final} == expected
    final, waiting, top = dmondrian.top_cuts(problem, 10**9)
    assert waiting == [] and top.tolist() == cuts.tolist()
    assert {frozenset(idx.tolist()) for idx in final} == expected
