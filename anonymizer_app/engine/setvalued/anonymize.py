"""k^m-anonymization of set-valued records: search (AA), publish, measure, verify.

Repeated items: a record is published and checked as the set of its (generalized) items. k^m-anonymity
counts sets (docs/definitions.md); publishing a repetition would let an adversary who knows how often
an item occurs single records out, which the model does not cover. The report says how many records
held repetitions. Two different items generalized to one node likewise appear once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..errors import InputError, VerificationError
from ..model.hierarchy import Hierarchy
from . import itemsets, measures
from .apriori import Progress, SetRecoding, run_apriori
from .generalizers import DynamicGroups, HierarchyCut
from .transactions import Transactions


@dataclass(frozen=True)
class SetAlgorithm:
    """A registry entry: the short label shown in job lists and titles, and what it does."""

    name: str
    label: str
    summary: str

    def __str__(self) -> str:
        return self.summary


SET_ALGORITHMS = {a.name: a for a in (
    SetAlgorithm("apriori", "Apriori (AA)", "Apriori-based anonymization (AA) with an item hierarchy"),
    SetAlgorithm("dynamic", "Dynamic hierarchies",
                 "Apriori with dynamic hierarchies (only the items that break k^m are merged)"),
)}


@dataclass
class SetResult:
    """A verified k^m-anonymous release of set-valued records."""

    records: list[list[str]]  # published records (sets, input order of first appearance)
    recoding: SetRecoding
    k: int
    m: int
    algorithm: str
    report: dict = field(default_factory=dict)


def anonymize_transactions(tx: Transactions, k: int, m: int, *, algorithm: str = "apriori",
                           hierarchy: Hierarchy | None = None, suppress_at_root: bool = False,
                           numeric: bool | None = False, progress: Progress | None = None,
                           label_joiner: str = ", ", measure: bool = True) -> SetResult:
    """The k^m-anonymous release of ``tx`` by ``algorithm`` ("apriori": a cut of ``hierarchy``;
    "dynamic": hierarchies built from the data, items declared ``numeric`` as ranges, others as sets). ``measure=False`` leaves the
    report out (the mixed mode measures the whole column, not each class)."""
    started = time.perf_counter()
    if algorithm not in SET_ALGORITHMS:
        raise InputError(f"unknown set-valued algorithm {algorithm!r}; available: {', '.join(SET_ALGORITHMS)}")
    generalizer: HierarchyCut | DynamicGroups
    if algorithm == "apriori":
        if hierarchy is None:
            raise InputError("Apriori needs an item hierarchy (or choose dynamic hierarchies)")
        generalizer = HierarchyCut(tx, hierarchy, suppress_at_root)
    else:
        generalizer = DynamicGroups(tx, numeric, label_joiner)
    recoding = run_apriori(tx, k, m, generalizer, progress)
    if progress is not None:
        progress(0.9, "publishing and verifying")
    records = publish(tx, recoding)
    verify(tx, records, recoding, k, m)
    result = SetResult(records, recoding, k, m, algorithm)
    if measure:
        result.report = build_report(tx, result, generalizer, time.perf_counter() - started)
    return result


def publish(tx: Transactions, recoding: SetRecoding) -> list[list[str]]:
    """Every record as the set of its published items (suppressed items left out)."""
    labels = recoding.labels
    out = []
    for r in range(tx.n):
        nodes = recoding.node_of_item[tx.codes[tx.offsets[r]:tx.offsets[r + 1]]]
        out.append([labels[n] for n in dict.fromkeys(int(x) for x in nodes if x >= 0)])
    return out


def verify(tx: Transactions, records: list[list[str]], recoding: SetRecoding, k: int, m: int) -> None:
    """From the published records' texts: every record is the image of its input record under the
    rules (each published item covers an input item of that record, each input item is covered or
    suppressed), and every itemset of at most m items that occurs has support >= k."""
    covers: dict[str, set[str]] = {label: set(items) for label, items in recoding.rules.items()}
    suppressed = set(recoding.suppressed_items)
    for r, published in enumerate(records):
        source = set(tx.record(r))
        if len(set(published)) != len(published):
            raise VerificationError(f"record {r + 1}: an item is published twice")
        for item in published:
            if not (covers.get(item, {item}) & source):
                raise VerificationError(f"record {r + 1}: published item {item!r} covers none of its items")
        covered = set(published).union(*(covers[p] for p in published if p in covers))
        for item in source - suppressed - covered:
            raise VerificationError(f"record {r + 1}: item {item!r} is neither published nor suppressed")
    pub = Transactions.from_records(records)
    smallest, where = itemsets.smallest_support(pub.offsets, pub.codes, m)
    if smallest is not None and smallest < k:
        shown = ", ".join(str(pub.items[c]) for c in where or ())
        raise VerificationError(f"k^m-anonymity (k={k}, m={m}) fails: {{{shown}}} occurs in {smallest} record(s)")


def build_report(tx: Transactions, result: SetResult, generalizer, seconds: float) -> dict:
    pub = Transactions.from_records(result.records)
    smallest, where = itemsets.smallest_support(pub.offsets, pub.codes, result.m)
    ncp = measures.item_ncp(tx, result.recoding.node_of_item, generalizer.loss)
    error = measures.support_error(tx, result.recoding.node_of_item, min(result.m, 2))
    distinct = tx.distinct()
    return {
        "kind": "set-valued",
        "algorithm": result.algorithm,
        "k": result.k,
        "m": result.m,
        "records": tx.n,
        "items": int(len(tx.items)),
        "item_occurrences": int(len(distinct.codes)),
        "records_with_repeated_items": tx.repeated_records(),
        "repeated_items_rule": "a record is published and checked as the set of its items",
        "generalization_rules": result.recoding.rules,
        "suppressed_items": result.recoding.suppressed_items,
        "rounds": result.recoding.rounds,
        "metrics": {"ncp": ncp["ncp"], "support_error": error["mean_relative_error"],
                    "support_error_itemsets": error["itemsets"],
                    "changed_occurrences": measures.changed_occurrences(tx, result.recoding.node_of_item,
                                                                        result.recoding.labels),
                    "generalized_items": int(sum(len(v) for v in result.recoding.rules.values())),
                    "km_smallest_support": smallest,
                    "km_weakest_itemset": [str(pub.items[c]) for c in where or ()]},
        "item_loss": ncp["item_loss"],
        "support_compared": error["compared"],
        "hierarchy_rows": result.recoding.hierarchy_rows,
        "verified": True,
        "seconds": seconds,
    }


def km_holds(records: list[list[str]], k: int, m: int) -> bool:
    """Whether the records (as sets) are k^m-anonymous."""
    tx = Transactions.from_records(records)
    smallest, _ = itemsets.smallest_support(tx.offsets, tx.codes, m)
    return smallest is None or smallest >= k


__all__ = ["SET_ALGORITHMS", "SetAlgorithm", "SetResult", "anonymize_transactions", "km_holds", "publish", "verify"]
