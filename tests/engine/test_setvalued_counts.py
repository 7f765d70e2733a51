"""Counts shared between AA's rounds, the report and the gate (issue 32), against plain-Python references
written here (itertools.combinations over each record's set), on random transaction sets (seeded) with
repeated items, suppressed items and merged groups:

- 2-itemsets recounted only where a node changed (itemsets.pairs_touching, AA's counts kept between rounds);
- AA's last counts read by the report, and AA's first counts kept as the input's own supports;
- the gate fed the engine's coded records (cells joined in Arrow), its in-order image check and its fallback;
- the engine leaving its check to the gate (gated=True) and the published records built on demand.
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from anonymizer_app.engine.errors import UnsatisfiableError, VerificationError
from anonymizer_app.engine.model.hierarchy import Hierarchy
from anonymizer_app.engine.run.gate import ITEMS, publish_transactions
from anonymizer_app.engine.run.spec import RunSpec, TransactionSet
from anonymizer_app.engine.setvalued import anonymize as anonymize_module
from anonymizer_app.engine.setvalued import apriori, itemsets, measures
from anonymizer_app.engine.setvalued.anonymize import anonymize_transactions
from anonymizer_app.engine.setvalued.transactions import Transactions, joined_cells

SEEDS = range(30)


def random_case(seed: int) -> tuple[Transactions, Hierarchy]:
    """Records drawn with repeats (Zipf-like) from leaves under groups under '*'."""
    rng = random.Random(seed)
    leaves = [f"i{g}{j}" for g in range(rng.randint(2, 4)) for j in range(rng.randint(2, 4))]
    rows = [[leaf, f"G{leaf[1]}", "*"] for leaf in leaves]
    weights = [1.0 / (1 + i) for i in range(len(leaves))]
    records = [rng.choices(leaves, weights, k=rng.randint(1, 6)) for _ in range(rng.randint(8, 40))]
    return Transactions.from_records(records), Hierarchy.from_rows(rows, "items")


def sets_of(offsets: np.ndarray, codes: np.ndarray) -> list[set[int]]:
    return [set(codes[offsets[r]:offsets[r + 1]].tolist()) for r in range(len(offsets) - 1)]


def reference_supports(records: list[set[int]], size: int) -> dict[tuple[int, ...], int]:
    return dict(Counter(c for rec in records for c in combinations(sorted(rec), size)))


def as_table(keys: np.ndarray, supports: np.ndarray, size: int, base: int) -> dict[tuple[int, ...], int]:
    assert keys.tolist() == sorted(keys.tolist())  # keys ascending, as itemsets.supports gives them
    return {tuple(row): int(s) for row, s in zip(itemsets.decode(keys, size, base).tolist(), supports.tolist())}


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("seed", range(20))
def test_pairs_touching_match_counting_combinations(seed, dense, monkeypatch):
    monkeypatch.setattr(itemsets, "CHUNK_KEYS", 5)  # many chunks
    if not dense:
        monkeypatch.setattr(itemsets, "DENSE_KEYS", 0)
    rng = random.Random(seed)
    base = rng.randint(1, 15)
    records = [[rng.randrange(base) for _ in range(rng.randint(0, 7))] for _ in range(rng.randint(0, 25))]
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in records])]).astype(np.int64)
    codes = np.array([c for r in records for c in r], dtype=np.int64)
    offsets, codes = itemsets.sorted_sets(offsets, codes)
    touched = np.array([rng.random() < 0.4 for _ in range(base)], dtype=bool)
    want = {pair: n for pair, n in reference_supports([set(r) for r in records], 2).items()
            if touched[pair[0]] or touched[pair[1]]}
    keys, supports = itemsets.pairs_touching(offsets, codes, touched, base)
    assert as_table(keys, supports, 2, base) == want


class FullCounts(apriori._Counts):
    """AA's counts recounted whole every round (no counts kept between rounds): the reference."""

    def update(self, node_of_item):
        self.counted = {}
        self.node_of_item = None
        return super().update(node_of_item)


@pytest.mark.parametrize("seed", SEEDS)
def test_aa_keeping_its_counts_between_rounds_decides_as_counting_afresh(seed, monkeypatch):
    tx, hierarchy = random_case(seed)
    rng = random.Random(seed)
    k, m = rng.randint(2, 4), rng.randint(1, 3)
    m = min(m, int(tx.distinct().lengths.max()))
    algorithm = ("apriori", "dynamic")[seed % 2]
    options = dict(algorithm=algorithm, hierarchy=hierarchy, suppress_at_root=seed % 4 == 1, label_joiner="; ")
    try:
        kept = anonymize_transactions(Transactions(tx.items, tx.offsets, tx.codes), k, m, **options)
    except UnsatisfiableError as exc:
        monkeypatch.setattr(apriori, "_Counts", FullCounts)
        with pytest.raises(UnsatisfiableError) as again:
            anonymize_transactions(Transactions(tx.items, tx.offsets, tx.codes), k, m, **options)
        assert str(again.value) == str(exc)
        return
    monkeypatch.setattr(apriori, "_Counts", FullCounts)
    fresh = anonymize_transactions(Transactions(tx.items, tx.offsets, tx.codes), k, m, **options)
    assert kept.records == fresh.records
    assert kept.recoding.rounds == fresh.recoding.rounds
    assert kept.recoding.node_of_item.tolist() == fresh.recoding.node_of_item.tolist()
    assert kept.report == dict(fresh.report, seconds=kept.report["seconds"])


@pytest.mark.parametrize("seed", SEEDS)
def test_aa_s_last_counts_are_the_release_s_and_its_first_the_input_s(seed):
    tx, hierarchy = random_case(seed)
    rng = random.Random(seed)
    k, m = rng.randint(2, 3), 2 if int(tx.distinct().lengths.max()) >= 2 else 1
    algorithm = ("apriori", "dynamic")[seed % 2]
    try:
        result = anonymize_transactions(tx, k, m, algorithm=algorithm, hierarchy=hierarchy,
                                        suppress_at_root=seed % 4 == 1)
    except UnsatisfiableError:
        return
    node_of_item = result.recoding.node_of_item
    generalized = [{int(node_of_item[c]) for c in rec if node_of_item[c] >= 0}
                   for rec in sets_of(tx.offsets, tx.codes)]
    if result.recoding.counted is not None:
        base, counted = result.recoding.counted
        for size, (keys, supports) in counted.items():
            assert as_table(keys, supports, size, base) == reference_supports(generalized, size)
    # whatever AA kept on the input as its own supports is exact (item codes, base = the items)
    inputs = sets_of(tx.offsets, tx.codes)
    for size, (keys, supports) in tx.__dict__.get("_supports", {}).items():
        assert as_table(keys, supports, size, len(tx.items)) == reference_supports(inputs, size)
    # the report's support error from AA's counts equals the one counted from the release afresh
    chosen = measures.top_itemsets(Transactions(tx.items, tx.offsets, tx.codes), min(m, 2))
    wanted = [names for _, names in chosen]
    assert measures.estimated_supports(tx, node_of_item, wanted, result.recoding.counted).tolist() == \
        measures.estimated_supports(tx, node_of_item, wanted).tolist()


def test_the_input_s_supports_are_kept_only_while_every_item_is_its_own_node():
    tx = Transactions.from_records([["a", "b"], ["a", "b"], ["a", "c"], ["b", "c"]])
    hierarchy = Hierarchy.from_rows([["a", "X", "*"], ["b", "X", "*"], ["c", "Y", "*"]], "h")
    anonymize_transactions(tx, 2, 2, hierarchy=hierarchy)
    # round 1 (each item its own node) counted 1-itemsets and 2-itemsets of the input: kept on it
    assert {s: (k.tolist(), v.tolist()) for s, (k, v) in tx.__dict__["_supports"].items()} == \
        {1: ([0, 1, 2], [3, 3, 2]), 2: ([1, 2, 5], [2, 1, 1])}


def gate_spec(tx: Transactions, m: int, k: int, hierarchy: Hierarchy, suppress: bool) -> RunSpec:
    return RunSpec.build(TransactionSet(tx, m, "apriori", hierarchy, suppress), k=k)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_gate_publishes_coded_records_as_it_publishes_lists(seed):
    tx, hierarchy = random_case(seed)
    rng = random.Random(seed)
    k, m = rng.randint(2, 3), 1
    try:
        result = anonymize_transactions(tx, k, m, hierarchy=hierarchy, suppress_at_root=seed % 2 == 0)
    except UnsatisfiableError:
        return
    spec = gate_spec(tx, m, k, hierarchy, seed % 2 == 0)
    rules, gone = result.recoding.rules, result.recoding.suppressed_items
    as_lists = publish_transactions(spec, [list(r) for r in result.records], rules, gone)
    as_codes = publish_transactions(spec, result.published, rules, gone)
    assert as_codes.table[ITEMS].tolist() == as_lists.table[ITEMS].tolist() == \
        [",".join(r) for r in result.records]
    assert as_codes.table.dtypes.tolist() == as_lists.table.dtypes.tolist()
    assert as_codes.km == as_lists.km
    assert list(joined_cells(result.published, ";")) == [";".join(r) for r in result.records]


MILK = Transactions.from_records([["chocolate milk", "graviera", "feta"], ["whole milk", "graviera"],
                                  ["whole milk", "graviera", "feta"], ["chocolate milk", "whole milk", "feta"]])
FOOD = Hierarchy.from_rows([["chocolate milk", "milk", "*"], ["whole milk", "milk", "*"],
                            ["graviera", "cheese", "*"], ["feta", "cheese", "*"]], "food")
MILK_RULES = {"milk": ["chocolate milk", "whole milk"]}


def coded(records: list[list[str]]) -> Transactions:
    """Records as codes, each record's items in the order given (from_records keeps it)."""
    return Transactions.from_records(records)


def test_the_gate_takes_a_record_s_items_in_any_order():
    spec = gate_spec(MILK, 1, 2, FOOD, False)
    published = [["milk", "graviera", "feta"], ["milk", "graviera"], ["feta", "graviera", "milk"],
                 ["milk", "feta"]]  # record 3 in another order than its input's: the sorted check decides
    publication = publish_transactions(spec, coded(published), MILK_RULES, [])
    assert publication.table[ITEMS].tolist() == ["milk,graviera,feta", "milk,graviera", "feta,graviera,milk",
                                                 "milk,feta"]
    assert publication.km["smallest_support"] == 3  # graviera and feta: 3 records each


@pytest.mark.parametrize("published,message", [
    ([["milk", "graviera", "feta"], ["milk", "graviera"], ["milk", "graviera", "feta"], ["milk", "milk", "feta"]],
     "record 4: an item is published twice"),
    ([["milk", "graviera", "feta"], ["milk", "graviera"], ["milk", "graviera", "feta"], ["milk"]],
     "record 4: item 'feta' is neither published nor suppressed"),
    ([["milk", "graviera", "feta"], ["milk", "graviera", "feta"], ["milk", "graviera", "feta"], ["milk", "feta"]],
     "record 2: published item 'feta' generalizes none of its items"),
])
def test_the_gate_refuses_tampered_coded_records(published, message):
    with pytest.raises(VerificationError) as exc:
        publish_transactions(gate_spec(MILK, 1, 1, FOOD, False), coded(published), MILK_RULES, [])
    assert str(exc.value) == message


def test_a_gated_run_leaves_the_check_to_the_gate_and_builds_lists_on_demand(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("verify called")

    monkeypatch.setattr(anonymize_module, "verify", refuse)
    result = anonymize_transactions(Transactions(MILK.items, MILK.offsets, MILK.codes), 2, 2, hierarchy=FOOD,
                                    gated=True)
    assert "records" not in result.__dict__  # not built yet
    # seed 002's worked example: the two milks generalized, 2^2-anonymous
    assert result.records == [["milk", "graviera", "feta"], ["milk", "graviera"], ["milk", "graviera", "feta"],
                              ["milk", "feta"]]
    assert result.report["metrics"]["km_smallest_support"] is None  # the gate's recount fills it in
    with pytest.raises(AssertionError):
        anonymize_transactions(Transactions(MILK.items, MILK.offsets, MILK.codes), 2, 2, hierarchy=FOOD)


def test_coded_records_holding_the_delimiter_are_refused_as_lists_are():
    from anonymizer_app.engine.errors import InputError

    spec = gate_spec(MILK, 1, 1, FOOD, False)
    with pytest.raises(InputError) as exc:
        publish_transactions(spec, coded([["a,b"]] * 4), {}, [])
    assert str(exc.value) == ("the published item 'a,b' contains the item delimiter ',' (or is empty); choose another "
                              "delimiter or hierarchy labels without it")


def test_a_record_whose_items_are_all_suppressed_is_published_empty():
    tx = Transactions.from_records([["a"], ["a"], ["b"]])
    hierarchy = Hierarchy.from_rows([["a", "*"], ["b", "*"]], "h")
    spec = gate_spec(tx, 1, 2, hierarchy, True)
    as_codes = publish_transactions(spec, Transactions(np.array(["a"], dtype=object), np.array([0, 1, 2, 2]),
                                                       np.array([0, 0])), {}, ["b"])
    as_lists = publish_transactions(spec, [["a"], ["a"], []], {}, ["b"])
    assert as_codes.table[ITEMS].tolist() == as_lists.table[ITEMS].tolist() == ["a", "a", ""]
    assert as_codes.km == as_lists.km == {"smallest_support": 2, "weakest_itemset": ["a"], "holds": True,
                                          "published_items": 1}
