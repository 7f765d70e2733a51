"""k^m-anonymization of set-valued records: search (AA), publish, measure, verify.

Repeated items: a record is published and checked as the set of its (generalized) items. k^m-anonymity
counts sets (docs/definitions.md); publishing a repetition would let an adversary who knows how often
an item occurs single records out, which the model does not cover. The report says how many records
held repetitions. Two different items generalized to one node likewise appear once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError, VerificationError
from ..model.hierarchy import Hierarchy
from ..model.table import sorted_unique
from . import itemsets, measures
from .apriori import Progress, SetRecoding, run_apriori
from .generalizers import DynamicGroups, HierarchyCut
from .transactions import Transactions, dedupe_records


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
    published: Transactions | None = None  # the same records as integer codes (CSR), items = the labels


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
    published = publish_sets(tx, recoding)
    records = published_records(published)
    verify(tx, records, recoding, k, m, published=published)
    result = SetResult(records, recoding, k, m, algorithm, published=published)
    if measure:
        result.report = build_report(tx, result, generalizer, time.perf_counter() - started)
    return result


def publish_sets(tx: Transactions, recoding: SetRecoding) -> Transactions:
    """Every record as the set of its published items (suppressed items left out), as codes: each record's
    nodes in the order of their first appearance, coded by the nodes' labels in sorted text order (the
    codes :meth:`Transactions.from_records` gives the same records)."""
    nodes = recoding.node_of_item[tx.codes] if len(tx.codes) else np.zeros(0, dtype=np.int64)
    keep = nodes >= 0
    lengths = np.bincount(tx.record_of[keep], minlength=tx.n)
    offsets, nodes = dedupe_records(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), nodes[keep])
    used, inverse = np.unique(nodes, return_inverse=True)
    texts = np.array([recoding.labels[int(n)] for n in used], dtype=object)
    items, text_code = np.unique(texts, return_inverse=True) if len(texts) else (texts, np.zeros(0, dtype=np.int64))
    codes = np.asarray(text_code, dtype=np.int64).reshape(-1)[np.asarray(inverse).reshape(-1)]
    return Transactions(np.asarray(items, dtype=object), offsets, codes.astype(np.int64))


def published_records(published: Transactions) -> list[list[str]]:
    """The records of a :func:`publish_sets` release as lists of item texts."""
    flat = published.items[published.codes].tolist()
    bounds = published.offsets.tolist()
    return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def publish(tx: Transactions, recoding: SetRecoding) -> list[list[str]]:
    """Every record as the set of its published items (suppressed items left out)."""
    return published_records(publish_sets(tx, recoding))


def images_match(tx: Transactions, published: Transactions, rules: dict[str, list[str]],
                 suppressed_items: list[str]) -> bool:
    """Vectorized: is every published record exactly the set of its input items' images under the rules
    (an item in a rule -> the rule's label, a suppressed item -> nothing, any other item -> itself)?
    When it is, :func:`verify`'s per-record checks hold too, unless an item outside the rules reads as a
    rule's label (then the label's items, not the item, decide): False then, and the per-record checks decide."""
    label_of = {item: label for label, items in rules.items() for item in items}
    gone = set(suppressed_items)
    texts = [str(x) for x in tx.items]
    if any(x in rules and x not in label_of and x not in gone for x in texts):
        return False
    index = {str(x): i for i, x in enumerate(published.items)}
    # input item -> published item code; -1 suppressed; -2 an image no record shows (a mismatch wherever it occurs)
    image = np.array([-1 if x in gone else index.get(label_of.get(x, x), -2) for x in texts], dtype=np.int64)
    sets = tx.distinct()
    mapped = image[sets.codes] if len(sets.codes) else np.zeros(0, dtype=np.int64)
    if (mapped == -2).any():
        return False
    base = max(len(published.items), 1)
    keep = mapped >= 0
    expected = sorted_unique(sets.record_of[keep] * base + mapped[keep])
    shown = np.sort(published.record_of * base + published.codes)
    return not (shown[1:] == shown[:-1]).any() and np.array_equal(expected, shown)


def verify(tx: Transactions, records: list[list[str]], recoding: SetRecoding, k: int, m: int, *,
           published: Transactions | None = None) -> None:
    """From the published records' texts: every record is the image of its input record under the
    rules (each published item covers an input item of that record, each input item is covered or
    suppressed), and every itemset of at most m items that occurs has support >= k. ``published``: the
    same records as codes (:func:`publish_sets`), to save coding their texts again. The vectorized
    check of :func:`images_match` passes a release at once; anything else goes through the per-record
    checks, which name the first record at fault."""
    pub = Transactions.from_records(records) if published is None else published
    if not images_match(tx, pub, recoding.rules, recoding.suppressed_items):
        verify_records(tx, records, recoding)
    smallest, where = itemsets.smallest_support_of(pub, m)
    if smallest is not None and smallest < k:
        shown = ", ".join(str(pub.items[c]) for c in where or ())
        raise VerificationError(f"k^m-anonymity (k={k}, m={m}) fails: {{{shown}}} occurs in {smallest} record(s)")


def verify_records(tx: Transactions, records: list[list[str]], recoding: SetRecoding) -> None:
    """verify's per-record checks in plain Python, raising at the first record at fault."""
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


def build_report(tx: Transactions, result: SetResult, generalizer, seconds: float) -> dict:
    pub = Transactions.from_records(result.records) if result.published is None else result.published
    smallest, where = itemsets.smallest_support_of(pub, result.m)
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


__all__ = ["SET_ALGORITHMS", "SetAlgorithm", "SetResult", "anonymize_transactions", "km_holds", "publish", "publish_sets",
           "published_records", "verify"]
