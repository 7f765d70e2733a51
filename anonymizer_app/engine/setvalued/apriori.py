"""Apriori-based anonymization (AA) to k^m-anonymity (Terrovitis, Mamoulis & Kalnis, VLDB 2008; seed
003 Algorithm 1), with a predefined item hierarchy or with dynamic hierarchies (seed 002).

The loop is AA's: for i = 1..m, count the supports of the i-itemsets of the records generalized by the
rules found so far (the count tree of the paper is a sorted array of integer keys here, see
:mod:`.itemsets`), and while some i-itemset J has support below k, add generalization rules that
raise its support, then count again. Rules only merge items (global recoding: every occurrence of an
item is replaced), so the support of any itemset can only grow and the itemsets of sizes below i that
were fixed stay fixed (the Apriori principle the algorithm relies on). Records are counted as sets.

Which rule fixes J is the generalizer's choice (:class:`.generalizers.HierarchyCut`: the parent of one
of J's items, cheapest in information loss, the whole subtree generalized: a cut of the hierarchy;
:class:`.generalizers.DynamicGroups`: merge J's rarest item with the rarest adjacent value or group).
Within one round, the violating itemsets are handled from the lowest support up, and an itemset whose
items a rule of this round already changed waits for the next count (it may already be fixed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import Cancelled, InputError, UnsatisfiableError
from . import itemsets, triples
from .transactions import Transactions

Progress = Callable[[float, str], bool]
LAZY_TRIPLES = True  # 3-itemsets found lazily (.triples); False: the whole table counted (the tests compare both)


@dataclass
class SetRecoding:
    """What AA found: the generalized item (node) of every input item, -1 for a suppressed item."""

    node_of_item: np.ndarray
    labels: list[str]  # node id -> published label
    rules: dict[str, list[str]]  # published label -> the input items it covers (only labels covering 2+)
    suppressed_items: list[str]
    rounds: int
    hierarchy_rows: list[list[str]] = field(default_factory=list)  # dynamic: item, group, '*'


def _generalized(tx: Transactions, node_of_item: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The records as sorted sets of node ids (suppressed items dropped)."""
    nodes = node_of_item[tx.codes]
    keep = nodes >= 0
    lengths = np.bincount(tx.record_of[keep], minlength=tx.n)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return itemsets.sorted_sets(offsets, nodes[keep])


def run_apriori(tx: Transactions, k: int, m: int, generalizer, progress: Progress | None = None) -> SetRecoding:
    """AA on ``tx`` (records as sets) with the rules of ``generalizer``."""
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if m < 1:
        raise InputError(f"m must be at least 1, got {m}")
    longest = int(tx.distinct().lengths.max()) if tx.n else 0
    if m > longest:
        raise InputError(f"m={m} is larger than the longest record ({longest} distinct items): no itemset of "
                         f"{m} items can occur; choose m <= {longest}")
    if tx.n < k:
        raise UnsatisfiableError(f"k={k} is larger than the {tx.n} records")
    rounds = 0
    for size in range(1, m + 1):
        while True:
            rounds += 1
            if progress is not None and progress((size - 1) / m, f"counting {size}-itemsets (round {rounds})") is False:
                raise Cancelled("cancelled")
            offsets, codes = _generalized(tx, generalizer.node_of_item)
            base = generalizer.node_count
            single_keys, single_support = itemsets.supports(offsets, codes, 1, base)
            node_support = np.zeros(base, dtype=np.int64)
            node_support[single_keys] = single_support
            if size == 3 and LAZY_TRIPLES:
                # found lazily while the rules are added: no table of all 3-itemsets (see .triples)
                lazy = triples.Violations(offsets, codes, base, k)
                found = lazy.first()
                if found is None:
                    break
                violating: np.ndarray | triples.Violations = lazy
                first_row, first_support = found
            else:
                keys, support = itemsets.supports(offsets, codes, size, base)
                bad = support < k
                if not bad.any():
                    break
                order = np.argsort(support[bad], kind="stable")
                violating = itemsets.decode(keys[bad][order], size, base)
                first_row, first_support = violating[0].tolist(), int(support[bad][order][0])
            if not generalizer.fix(violating, node_support, k):
                first = ", ".join(generalizer.labels[int(c)] for c in first_row)
                raise UnsatisfiableError(
                    f"k^m-anonymity with k={k}, m={m} cannot be reached: the itemset {{{first}}} occurs in "
                    f"{first_support} record(s) and its items cannot be generalized further"
                    + ("" if generalizer.can_suppress else "; allow item suppression or lower k"))
    return generalizer.recoding(rounds)
