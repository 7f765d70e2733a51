"""3-itemsets counted item by item (setvalued.triples) against plain Python (itertools.combinations over
the records as sets), and AA with them against AA counting the whole table of 3-itemsets."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from anonymizer_app.engine.model.hierarchy import Hierarchy
from anonymizer_app.engine.setvalued import apriori, itemsets, triples
from anonymizer_app.engine.setvalued.anonymize import anonymize_transactions
from anonymizer_app.engine.setvalued.transactions import Transactions


def random_sets(rng: random.Random, items: int = 12, records: int = 30) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    sets = [sorted(rng.sample(range(items), rng.randint(0, min(items, 7)))) for _ in range(records)]
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in sets])]).astype(np.int64)
    codes = np.array([c for s in sets for c in s], dtype=np.int64)
    return offsets, codes, sets


def plain_triples(sets: list[list[int]]) -> Counter:
    return Counter(t for s in sets for t in combinations(s, 3))


def acted_rows(rows, adds: list[list[int]]) -> list[list[int]]:
    """The rows a fix() loop acts on; each acted-on row touches its items and some others."""
    touched: set[int] = set()
    acted: list[list[int]] = []
    for row in rows(touched):
        if not touched.isdisjoint(row):
            continue
        acted.append(list(row))
        touched.update(list(row) + adds[(len(acted) - 1) % len(adds)])
    return acted


@pytest.mark.parametrize("seed", range(30))
def test_violations_in_the_order_of_the_whole_table(seed, monkeypatch):
    monkeypatch.setattr(triples, "ROW_BLOCK", 2)
    rng = random.Random(7000 + seed)
    offsets, codes, sets = random_sets(rng)
    k = rng.randint(2, 5)
    counts = plain_triples(sets)
    want = sorted((v, t) for t, v in counts.items() if v < k)
    lazy = triples.Violations(offsets, codes, 12, k)
    assert lazy.first() == ((list(want[0][1]), want[0][0]) if want else None)
    adds = [rng.sample(range(12), rng.randint(0, 2)) for _ in range(10)]
    assert acted_rows(lazy.rows, adds) == acted_rows(lambda touched: [list(t) for _, t in want], adds)
    untouched = triples.Violations(offsets, codes, 12, k)
    assert list(untouched.rows(set())) == [list(t) for _, t in want]


@pytest.mark.parametrize("seed", range(30))
def test_smallest_triple_matches_combinations(seed):
    rng = random.Random(8000 + seed)
    offsets, codes, sets = random_sets(rng, items=rng.randint(3, 15), records=rng.randint(1, 40))
    counts = plain_triples(sets)
    if not counts:
        assert triples.smallest_triple(offsets, codes, 15) == (None, None)
        return
    low = min(counts.values())
    assert triples.smallest_triple(offsets, codes, 15) == (low, min(t for t, v in counts.items() if v == low))


@pytest.mark.parametrize("seed", range(20))
def test_smallest_support_matches_combinations(seed):
    rng = random.Random(9000 + seed)
    offsets, codes, sets = random_sets(rng, items=rng.randint(3, 10), records=rng.randint(1, 25))
    best: tuple = (None, None)
    for size in (1, 2, 3):
        counts = Counter(t for s in sets for t in combinations(s, size))
        if counts:
            low = min(counts.values())
            if best[0] is None or low < best[0]:
                best = (low, min(t for t, v in counts.items() if v == low))
    assert itemsets.smallest_support(offsets, codes, 3) == best


def generated(seed: int) -> tuple[Transactions, Hierarchy]:
    rng = np.random.default_rng(seed)
    lengths = np.maximum(1, rng.poisson(9, 200))
    weights = 1.0 / np.arange(1, 61)
    codes = rng.choice(60, size=int(lengths.sum()), p=weights / weights.sum())
    names = np.array([f"i{i:02d}" for i in range(60)], dtype=object)
    tx = Transactions(names, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), codes.astype(np.int64))
    rows = [[str(names[i]), f"g{i // 5}", f"G{i // 20}", "*"] for i in range(60)]
    return tx, Hierarchy.from_rows(rows, "items")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("algorithm", ["apriori", "dynamic"])
def test_aa_with_lazy_triples_equals_aa_with_the_whole_table(seed, algorithm, monkeypatch):
    tx, hierarchy = generated(seed)
    results = []
    for lazy in (False, True):
        monkeypatch.setattr(apriori, "LAZY_TRIPLES", lazy)
        result = anonymize_transactions(tx, 6, 3, algorithm=algorithm, hierarchy=hierarchy, suppress_at_root=True)
        report = {key: value for key, value in result.report.items() if key != "seconds"}
        results.append((result.records, result.recoding.rules, result.recoding.rounds, report))
    assert results[0] == results[1]


@pytest.mark.parametrize("size", [1, 2, 3])
def test_combinations_array_matches_itertools(size):
    for length in range(size, 14):
        assert itemsets._combinations(length, size).tolist() == [list(c) for c in combinations(range(length), size)]
