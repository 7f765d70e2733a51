"""k^m-anonymization of set-valued records: search (AA), publish, measure, verify.

Repeated items: a record is published and checked as the set of its (generalized) items. k^m-anonymity
counts sets (docs/definitions.md); publishing a repetition would let an adversary who knows how often
an item occurs single records out, which the model does not cover. The report says how many records
held repetitions. Two different items generalized to one node likewise appear once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..errors import InputError, VerificationError
from ..model.hierarchy import Hierarchy
from . import itemsets, kernels, measures
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

    recoding: SetRecoding
    k: int
    m: int
    algorithm: str
    published: Transactions  # the published records as integer codes (CSR), items = the labels
    report: dict = field(default_factory=dict)

    @cached_property
    def records(self) -> list[list[str]]:
        """The published records (sets, input order of first appearance) as lists of item texts: built when
        first asked for (a million records as Python lists take a second and hundreds of MB; the pipeline's
        gate reads ``published``)."""
        return published_records(self.published)


def anonymize_transactions(tx: Transactions, k: int, m: int, *, algorithm: str = "apriori",
                           hierarchy: Hierarchy | None = None, suppress_at_root: bool = False,
                           numeric: bool | None = False, progress: Progress | None = None,
                           label_joiner: str = ", ", measure: bool = True, gated: bool = False) -> SetResult:
    """The k^m-anonymous release of ``tx`` by ``algorithm`` ("apriori": a cut of ``hierarchy``;
    "dynamic": hierarchies built from the data, items declared ``numeric`` as ranges, others as sets). ``measure=False`` leaves the
    report out (the mixed mode measures the whole column, not each class). ``gated=True``: the caller
    publishes ``result.published`` through the gate (engine.run.gate.publish_transactions), which makes
    :func:`verify`'s checks on the published cells themselves (each record the image of its input record,
    k^m recounted), so they are not made twice here; the report then reads the gate's recount."""
    started = time.perf_counter()
    if algorithm not in SET_ALGORITHMS:
        raise InputError(f"unknown set-valued algorithm {algorithm!r}; available: {', '.join(SET_ALGORITHMS)}")
    generalizer: HierarchyCut | DynamicGroups
    # the records as sets and their 1- (and 2-) itemset supports in one read (compiled loops only): the search
    # starts from these supports and the report lists them
    itemsets.count_with_sets(tx, m)
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
    if not gated:
        verify(tx, None, recoding, k, m, published=published)
    result = SetResult(recoding, k, m, algorithm, published)
    if measure:
        result.report = build_report(tx, result, generalizer, time.perf_counter() - started, gated)
    return result


def publish_sets(tx: Transactions, recoding: SetRecoding) -> Transactions:
    """Every record as the set of its published items (suppressed items left out), as codes: each record's
    nodes in the order of their first appearance, coded by the nodes' labels in sorted text order (the
    codes :meth:`Transactions.from_records` gives the same records)."""
    # from the records as sets (cached): a node can then repeat in a record only where two of its items
    # meet, so only the occurrences of nodes covering two items or more are sorted to find the repeats
    sets = tx.distinct()
    kernel = kernels.load(len(sets.codes))
    if kernel is not None:
        published = _publish_compiled(kernel, tx, recoding)
        if published is not None:
            return published
    nodes = recoding.node_of_item[sets.codes] if len(sets.codes) else np.zeros(0, dtype=np.int64)
    offsets = sets.offsets
    keep = nodes >= 0
    if not keep.all():
        offsets = _offsets_of(offsets, keep)
        nodes = nodes[keep]
    present = recoding.node_of_item[recoding.node_of_item >= 0]
    shared = np.bincount(present, minlength=max(len(recoding.labels), 1)) >= 2
    at = np.flatnonzero(shared[nodes]) if len(nodes) else np.zeros(0, dtype=np.int64)
    if len(at):
        base = max(len(recoding.labels), 1)
        keys = (np.searchsorted(offsets, at, side="right") - 1) * base + nodes[at]
        order = np.argsort(keys, kind="stable")  # stable: of equal keys the first is the first appearance
        ordered = keys[order]
        repeat = order[1:][ordered[1:] == ordered[:-1]]
        if len(repeat):
            keep = np.ones(len(nodes), dtype=bool)
            keep[at[repeat]] = False
            offsets = _offsets_of(offsets, keep)
            nodes = nodes[keep]
    # the nodes in use and each occurrence's rank among them (np.unique's return_inverse, without its sort of
    # every occurrence: node ids are small)
    used = np.flatnonzero(np.bincount(nodes, minlength=len(recoding.labels))) if len(nodes) else \
        np.zeros(0, dtype=np.int64)
    texts = np.array([recoding.labels[int(n)] for n in used], dtype=object)
    items, text_code = np.unique(texts, return_inverse=True) if len(texts) else (texts, np.zeros(0, dtype=np.int64))
    code_of_node = np.zeros(max(len(recoding.labels), 1), dtype=np.int64)
    code_of_node[used] = np.asarray(text_code, dtype=np.int64).reshape(-1)
    return Transactions(np.asarray(items, dtype=object), offsets, code_of_node[nodes].astype(np.int64))


def _publish_compiled(kernel, tx: Transactions, recoding: SetRecoding) -> Transactions | None:
    """publish_sets in one read of the records: each item's published code found first (the nodes of the
    items that occur, coded by their labels' sorted texts), then every record's codes as a set in the order
    of first appearance (:func:`.kernels.image_sets`). None when two nodes in use share a label (publish_sets
    keeps them apart)."""
    node_of_item = recoding.node_of_item
    occurs = itemsets.record_counts(tx)[:len(node_of_item)] > 0
    nodes = node_of_item[occurs]
    used = np.flatnonzero(np.bincount(nodes[nodes >= 0], minlength=max(len(recoding.labels), 1)))
    texts = np.array([recoding.labels[int(n)] for n in used], dtype=object)
    items, text_code = np.unique(texts, return_inverse=True) if len(texts) else (texts, np.zeros(0, dtype=np.int64))
    if len(items) < len(texts):
        return None
    code_of_node = np.full(max(len(recoding.labels), 1), -1, dtype=np.int64)
    code_of_node[used] = np.asarray(text_code, dtype=np.int64).reshape(-1)
    image = np.where(node_of_item >= 0, code_of_node[np.maximum(node_of_item, 0)], -1)
    sets = tx.distinct()
    offsets, codes = kernels.image_sets(kernel, sets.offsets, sets.codes, image, len(items))
    return Transactions(np.asarray(items, dtype=object), offsets, codes)


def _offsets_of(offsets: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The offsets of the CSR records ``offsets`` once the occurrences not in ``keep`` are dropped."""
    kept = np.concatenate([[0], np.cumsum(keep)])
    return kept[offsets].astype(np.int64)


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
    return itemsets.records_are_images(tx, image, published)


def verify(tx: Transactions, records: list[list[str]] | None, recoding: SetRecoding, k: int, m: int, *,
           published: Transactions | None = None) -> None:
    """From the published records' texts: every record is the image of its input record under the
    rules (each published item covers an input item of that record, each input item is covered or
    suppressed), and every itemset of at most m items that occurs has support >= k. ``published``: the
    same records as codes (:func:`publish_sets`), to save coding their texts again. The vectorized
    check of :func:`images_match` passes a release at once; anything else goes through the per-record
    checks, which name the first record at fault. ``records`` None: the texts of ``published``."""
    if published is None:
        assert records is not None
        pub = Transactions.from_records(records)
    else:
        pub = published
    if not images_match(tx, pub, recoding.rules, recoding.suppressed_items):
        verify_records(tx, published_records(pub) if records is None else records, recoding)
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


def build_report(tx: Transactions, result: SetResult, generalizer, seconds: float, gated: bool = False) -> dict:
    """``gated``: the k^m figures are the gate's recount (engine.run.report.build_set_report sets them)."""
    pub = result.published
    smallest, where = itemsets.smallest_support_of(pub, result.m) if not gated else (None, None)
    ncp = measures.item_ncp(tx, result.recoding.node_of_item, generalizer.loss)
    error = measures.support_error(tx, result.recoding.node_of_item, min(result.m, 2),
                                   counted=result.recoding.counted)
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
