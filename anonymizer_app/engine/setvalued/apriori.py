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
from . import itemsets, kernels, triples
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
    # (base, size -> (keys, supports)): the generalized records' itemsets under ``node_of_item`` as AA counted
    # them last; the report's release supports reuse them instead of counting again
    counted: tuple[int, dict[int, tuple[np.ndarray, np.ndarray]]] | None = field(default=None, repr=False,
                                                                                 compare=False)


def _generalized(tx: Transactions, node_of_item: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The records as sorted sets of node ids (suppressed items dropped)."""
    tx = tx.distinct()  # cached: fewer occurrences to sort where records repeat items
    nodes = node_of_item[tx.codes]
    keep = nodes >= 0
    if keep.all():
        return itemsets.sorted_sets(tx.offsets, nodes)
    lengths = np.bincount(tx.record_of[keep], minlength=tx.n)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return itemsets.sorted_sets(offsets, nodes[keep])


class _Counts:
    """The generalized records and their itemset supports under the rules found so far, kept between
    rounds: after a round's rules only the itemsets holding a node the rules touched change support (a node
    no rule touched covers the same items, so its itemsets lie in the same records), so 2-itemsets are
    recounted only for those (:func:`.itemsets.pairs_touching`), and the rest keep their counts. With the
    compiled loops (:mod:`.kernels`) the 1- and 2-itemsets are counted together from the input's records
    as sets, their items read as nodes, in one pass without a sort (cheaper than the numpy recount of the
    touched ones); the generalized records themselves are built only for 3-itemsets."""

    def __init__(self, tx: Transactions, base: int, m: int = 2):
        self.tx, self.base, self.m = tx, base, m
        self.node_of_item: np.ndarray | None = None
        self._sets: tuple[np.ndarray, np.ndarray] | None = None
        self.counted: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.kernel = kernels.load(len(tx.distinct().codes))
        self.compiled = self.kernel is not None and kernels.can_count(tx.n, base, min(m, 2))
        # 2-itemset counts of an earlier mapping, and the nodes touched since: recounted when next asked for
        # (size-3 rounds never ask)
        self.stale: tuple[np.ndarray, np.ndarray] | None = None
        self.touched = np.zeros(base, dtype=bool)

    def update(self, node_of_item: np.ndarray) -> None:
        """The generalized records under ``node_of_item`` from now on."""
        if self.node_of_item is not None and np.array_equal(node_of_item, self.node_of_item):
            return
        before, self.node_of_item = self.node_of_item, node_of_item.copy()
        self._sets = None
        if 2 in self.counted and not self.compiled:
            self.stale = self.counted[2]
            self.touched = np.zeros(self.base, dtype=bool)
        self.counted = {}
        if self.stale is not None and before is not None:
            moved = before != node_of_item
            self.touched[before[moved][before[moved] >= 0]] = True
            self.touched[node_of_item[moved][node_of_item[moved] >= 0]] = True

    def sets(self) -> tuple[np.ndarray, np.ndarray]:
        """The generalized records as sorted sets of node ids (suppressed items dropped)."""
        assert self.node_of_item is not None
        if self._sets is None:
            if self.kernel is not None:
                d = self.tx.distinct()
                self._sets = kernels.image_sets(self.kernel, d.offsets, d.codes, self.node_of_item, self.base,
                                                ordered=True)
            else:
                self._sets = _generalized(self.tx, self.node_of_item)
        return self._sets

    def supports(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        if size not in self.counted:
            if self.compiled and size <= 2:
                for s in range(1, min(self.m, 2) + 1):
                    found = self._from_input(s)
                    if found is not None:
                        self.counted[s] = found
                if size not in self.counted:
                    self.counted.update(self._compiled_counts())
                    for s in range(1, min(self.m, 2) + 1):
                        self._seed_input(s)
            elif size == 2 and self.stale is not None:
                keys, support = self.stale
                untouched = ~(self.touched[keys // self.base] | self.touched[keys % self.base])
                new_keys, new_support = itemsets.pairs_touching(*self.sets(), self.touched, self.base)
                self.counted[2] = itemsets.merge_disjoint(keys[untouched], support[untouched], new_keys, new_support)
            else:
                self.counted[size] = itemsets.supports(*self.sets(), size, self.base)
                self._seed_input(size)
        return self.counted[size]

    def _compiled_counts(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """The 1- and 2-itemset supports of the generalized records by the compiled loop, counted over the
        nodes in use renumbered 0..u-1 (a smaller table, held in cache) and keyed back in node ids (the
        renumbering keeps their order, so the keys stay ascending)."""
        assert self.node_of_item is not None and self.kernel is not None
        d = self.tx.distinct()
        nodes = self.node_of_item
        used = np.flatnonzero(np.bincount(nodes[nodes >= 0], minlength=self.base))
        compact = np.full(self.base, -1, dtype=np.int64)
        compact[used] = np.arange(len(used), dtype=np.int64)
        image = np.where(nodes >= 0, compact[np.maximum(nodes, 0)], -1)
        found = kernels.counts(self.kernel, d.offsets, d.codes, image, len(used), min(self.m, 2))
        u = max(len(used), 1)
        out = {1: (used[found[1][0]], found[1][1])}
        if 2 in found:
            keys, support = found[2]
            out[2] = (used[keys // u] * self.base + used[keys % u], support)
        return out

    def _from_input(self, size: int) -> tuple[np.ndarray, np.ndarray] | None:
        """While no rule has merged or suppressed an item (each item its own node), the supports are the
        input's own (counted with its records as sets, :func:`.itemsets.itemset_supports`) with the items
        renamed; None when they are not at hand or the items are not their own nodes."""
        nodes = self.node_of_item
        cache = self.tx.__dict__.get("_supports", {})
        if nodes is None or size not in cache or (nodes < 0).any() or len(np.unique(nodes)) != len(nodes):
            return None
        keys, support = cache[size]
        named = nodes[itemsets.decode(keys, size, max(len(self.tx.items), 1))]
        if size == 2:  # each pair's nodes in order (np.sort along rows, without its per-row sort)
            node_keys = np.minimum(named[:, 0], named[:, 1]) * self.base + np.maximum(named[:, 0], named[:, 1])
        else:
            node_keys = np.sort(named, axis=1) @ (self.base ** np.arange(size - 1, -1, -1, dtype=np.int64))
        if len(node_keys) < 2 or (node_keys[1:] > node_keys[:-1]).all():
            return node_keys, support  # nodes numbered in the items' order: no sort needed
        order = np.argsort(node_keys, kind="stable")
        return node_keys[order], support[order]

    def _seed_input(self, size: int) -> None:
        """While no rule has merged or suppressed an item (each item its own node), the counts are the
        input's own itemset supports with the items renamed: kept on the input as
        :func:`.itemsets.itemset_supports` keeps them, so the report does not count the input again."""
        nodes = self.node_of_item
        cache = self.tx.__dict__.setdefault("_supports", {})
        if nodes is None or size in cache or not len(nodes) or (nodes < 0).any():
            return
        item_of_node = np.full(self.base, -1, dtype=np.int64)
        item_of_node[nodes] = np.arange(len(nodes), dtype=np.int64)
        if np.count_nonzero(item_of_node >= 0) != len(nodes):
            return  # two items share a node
        keys, support = self.counted[size]
        items = np.sort(item_of_node[itemsets.decode(keys, size, self.base)], axis=1)
        weights = max(len(self.tx.items), 1) ** np.arange(size - 1, -1, -1, dtype=np.int64)
        item_keys = items @ weights
        order = np.argsort(item_keys, kind="stable")
        cache[size] = (item_keys[order], support[order])


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
    counts = _Counts(tx, generalizer.node_count, m)
    for size in range(1, m + 1):
        while True:
            rounds += 1
            if progress is not None and progress((size - 1) / m, f"counting {size}-itemsets (round {rounds})") is False:
                raise Cancelled("cancelled")
            counts.update(generalizer.node_of_item)
            base = generalizer.node_count
            single_keys, single_support = counts.supports(1)
            node_support = np.zeros(base, dtype=np.int64)
            node_support[single_keys] = single_support
            if size == 3 and LAZY_TRIPLES:
                # found lazily while the rules are added: no table of all 3-itemsets (see .triples)
                lazy = triples.Violations(*counts.sets(), base, k)
                found = lazy.first()
                if found is None:
                    break
                violating: np.ndarray | triples.Violations = lazy
                first_row, first_support = found
            else:
                keys, support = counts.supports(size)
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
    recoding = generalizer.recoding(rounds)
    if counts.node_of_item is not None and np.array_equal(counts.node_of_item, recoding.node_of_item):
        recoding.counted = (counts.base, dict(counts.counted))
    return recoding
