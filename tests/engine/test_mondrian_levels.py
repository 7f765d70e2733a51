"""Mondrian's level-at-a-time partitioning (models on class sizes) equals the one-region-at-a-time loop:
the same partitions with the same numbers, the same tuples and weights, the same cuts per QI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import KAnonymity, Table, parse_hierarchy, read_hierarchy, read_table
from anonymizer_app.engine.algorithms import mondrian
from anonymizer_app.engine.algorithms.base import Problem
from anonymizer_app.engine.model.table import frequency_set
from anonymizer_app.engine.privacy import PRIVACY_MODELS
from anonymizer_app.engine.privacy.average_risk import AverageRisk
from anonymizer_app.engine.search.recoding import QISpace, cells_from_groups

ADULT_QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]

# a wide hierarchy: 9 children under the root (subset sums), 2 under some (the lighter side), 1 under one
SHOP = "".join(f"{g}{i};{g};*\n" for g, n in zip("abcdefghi", (4, 2, 3, 1, 2, 5, 2, 3, 2)) for i in range(n))
SIZE = "s;small;*\nm;small;*\nl;big;*\nxl;big;*\n"


def problem(table: Table, given: dict, models: list) -> Problem:
    hs = table.hierarchies(given)
    ordered = [hs[c] for c in table.qi]
    codes = table.encode(hs)
    freq = frequency_set(codes, np.array([len(h.leaves) for h in ordered], dtype=np.int64))
    return Problem(table, ordered, codes, freq, models, 0.0, 0, {})


def tie_heavy(n: int, seed: int) -> tuple[Table, dict]:
    """Few distinct values per column (many ties among the medians), blanks among the numbers."""
    rng = np.random.default_rng(seed)
    shops = [line.split(";")[0] for line in SHOP.splitlines()]
    age = rng.integers(20, 20 + int(rng.integers(2, 12)), n).astype(str).astype(object)
    age[rng.random(n) < 0.05] = ""
    frame = pd.DataFrame({
        "age": age,
        "score": rng.choice([0.5, 1.5, 2.0, 7.25], n, p=[0.55, 0.2, 0.2, 0.05]).astype(str),
        "shop": rng.choice(shops, n, p=rng.dirichlet(np.ones(len(shops)) * 0.5)),
        "size": rng.choice(["s", "m", "l", "xl"], n),
        "disease": rng.choice(["flu", "cold"], n),
    })
    table = Table(frame, {"age": "qi", "score": "qi", "shop": "qi", "size": "qi", "disease": "sensitive"})
    return table, {"shop": parse_hierarchy(SHOP, "shop"), "size": parse_hierarchy(SIZE, "size")}


def assert_same(p: Problem) -> None:
    loop = mondrian.partition(p, allowable=mondrian.default_allowable(p))  # the loop, one region at a time
    fast = mondrian.partition(p)
    assert fast[4] == loop[4]
    np.testing.assert_array_equal(fast[3], loop[3])
    order = np.lexsort((loop[0], loop[1]))  # the loop lists each partition's tuples in its own order
    for got, want in zip(fast[:3], loop[:3]):
        np.testing.assert_array_equal(got, want[order])


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("k", [2, 3, 7, 25])
def test_levels_equal_the_loop_on_tie_heavy_tables(seed, k):
    table, given = tie_heavy(400 + 37 * seed, seed)
    assert_same(problem(table, given, [KAnonymity(k)]))


def test_levels_equal_the_loop_with_another_size_model():
    table, given = tie_heavy(600, 99)
    # average re-identification risk: a model on class sizes whose verdict is on the pair as a whole
    assert_same(problem(table, given, [KAnonymity(2), AverageRisk(average_risk=0.2)]))


def test_too_small_table_is_one_partition():
    table, given = tie_heavy(5, 3)
    p = problem(table, given, [KAnonymity(3)])
    tup, part, weight, cuts, n_parts = mondrian.partition(p)
    assert n_parts == 1 and not cuts.any() and weight.sum() == 5
    np.testing.assert_array_equal(part, 0)
    assert_same(p)


@pytest.mark.parametrize("k", [2, 5, 50])
def test_levels_equal_the_loop_on_adult(k, demo_datasets):
    adult = demo_datasets / "adult"
    frame, _ = read_table(adult / "adult.csv")
    table = Table(frame, {**{c: "qi" for c in ADULT_QI}, "occupation": "sensitive"})
    given = {c: read_hierarchy(adult / f"adult_hierarchy_{c}.csv", c) for c in ADULT_QI}
    assert_same(problem(table, given, [KAnonymity(k)]))


@pytest.mark.parametrize("seed", range(4))
def test_cells_from_whole_tuples_equal_cells_from_groups(seed):
    table, given = tie_heavy(500, seed)
    p = problem(table, given, [KAnonymity(3)])
    tup, part, _, _, n_parts = mondrian.partition(p)
    tuple_group = np.empty(len(p.freq.counts), dtype=np.int64)
    tuple_group[tup] = part
    failing = np.random.default_rng(seed).random(n_parts) < 0.2  # some partitions suppressed
    group = tuple_group[p.freq.inverse]
    group[failing[group]] = -1
    space = QISpace(p.hierarchies, [table.is_numeric(c) for c in table.qi], p.codes)
    want = cells_from_groups(space, p.codes, group, p.freq.inverse)
    got = mondrian._tuple_cells(space, p.freq, tuple_group, failing)
    for g, w in zip(got, want):
        assert g.tolist() == w.tolist()
    assert any("*" in w.tolist() for w in want) and any(str(v).startswith("[") for v in want[0].tolist())


def test_balanced_subsets_by_enumeration_equal_balanced_subset():
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(3000):
        c = int(rng.integers(3, mondrian.SUBSET_CHILDREN + 1))
        top = int(rng.choice([3, 10, 1000]))  # small weights: many ties between subsets
        rows.append(rng.integers(1, top, c))
    weights = np.zeros((len(rows), mondrian.SUBSET_CHILDREN), dtype=np.int64)
    for i, w in enumerate(rows):
        weights[i, :len(w)] = w
    got = mondrian._balanced_subsets(weights)
    for i, w in enumerate(rows):
        np.testing.assert_array_equal(got[i, :len(w)], mondrian.balanced_subset(w))
        assert not got[i, len(w):].any()


@pytest.mark.parametrize("qi", [["age"], ["score", "age"], ["shop"], ["size", "shop"], ["shop", "age"]])
@pytest.mark.parametrize("seed", range(3))
def test_levels_equal_the_loop_on_numbers_only_or_categories_only(qi, seed):
    table, given = tie_heavy(300, seed)
    frame = table.frame[qi + ["disease"]]
    sub = Table(frame, {**{c: "qi" for c in qi}, "disease": "sensitive"})
    assert_same(problem(sub, {c: h for c, h in given.items() if c in qi}, [KAnonymity(2)]))


def test_one_distinct_tuple_is_one_partition():
    frame = pd.DataFrame({"age": ["30"] * 20, "size": ["m"] * 20, "disease": ["flu", "cold"] * 10})
    table = Table(frame, {"age": "qi", "size": "qi", "disease": "sensitive"})
    p = problem(table, {"size": parse_hierarchy(SIZE, "size")}, [KAnonymity(2)])
    tup, part, weight, cuts, n_parts = mondrian.partition(p)
    assert (tup.tolist(), part.tolist(), weight.tolist(), cuts.tolist(), n_parts) == ([0], [0], [20], [0, 0], 1)
    assert_same(p)


@pytest.mark.parametrize("name", [n for n, m in PRIVACY_MODELS.items() if not m.needs_sensitive])
def test_levels_equal_the_loop_with_every_model_on_sizes(name):
    """Each model on class sizes alone, with its default parameters, beside 2-anonymity."""
    cls = PRIVACY_MODELS[name]
    model = cls(**{p.name: p.default for p in cls.parameters})
    table, given = tie_heavy(700, 11)
    assert_same(problem(table, given, [KAnonymity(2), model]))
