"""The generalization rules AA may add: a cut of a predefined item hierarchy, or dynamic groups.

Both keep ``node_of_item`` (input item code -> generalized node id, -1 when suppressed) and offer
``fix(violating, node_support, k)``: add rules for the violating itemsets of one round
(node-id tuples, lowest support first), skipping an itemset whose items a rule of this round already
changed; False when no rule could be added. Information loss is the NCP of docs/definitions.md,
counted over item occurrences (records as sets).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ..errors import InputError
from ..model.hierarchy import Hierarchy
from . import itemsets
from .apriori import SetRecoding
from .transactions import Transactions
from .triples import Violations

MAX_LISTED = 8
ROW_BLOCK = 4096  # violating itemsets screened at once against the items already touched in a round


def untouched_rows(violating: np.ndarray | Violations, touched: set[int]) -> Iterator[list[int]]:
    """The rows of ``violating`` in order as lists of ints, less those holding an item of ``touched``
    when their block of rows is reached. ``touched`` only grows while the caller adds rules, so a row
    left out here would have been skipped by the caller's own check; the caller still checks the rows
    given. A round can hold millions of violating itemsets, nearly all of them skipped: numpy skips them.
    3-itemsets come lazily, in the same order (:class:`.triples.Violations`)."""
    if isinstance(violating, Violations):
        yield from violating.rows(touched)
        return
    mask = np.zeros(int(violating.max(initial=-1)) + 1, dtype=bool)
    for start in range(0, len(violating), ROW_BLOCK):
        ids = np.fromiter(touched, dtype=np.int64, count=len(touched))
        mask[ids[ids < len(mask)]] = True
        block = violating[start:start + ROW_BLOCK]
        yield from block[~mask[block].any(axis=1)].tolist()


class HierarchyCut:
    """Global recoding by a cut of the item hierarchy: a rule generalizes a node's whole subtree to it."""

    def __init__(self, tx: Transactions, hierarchy: Hierarchy, suppress_at_root: bool = False):
        index = hierarchy.leaf_index
        missing = [str(x) for x in tx.items if str(x) not in index]
        if missing:
            shown = ", ".join(repr(x) for x in missing[:MAX_LISTED])
            more = f" and {len(missing) - MAX_LISTED} more" if len(missing) > MAX_LISTED else ""
            raise InputError(f"item hierarchy {hierarchy.name!r}: {len(missing)} item(s) of the data are not in it: "
                             f"{shown}{more}")
        self.hierarchy = hierarchy
        self.can_suppress = suppress_at_root
        self.leaf_of_item = np.array([index[str(x)] for x in tx.items], dtype=np.int64)
        self.maps = np.stack([np.asarray(mp, dtype=np.int64) for mp in hierarchy.maps])  # (levels, leaves)
        sizes = [len(lab) for lab in hierarchy.labels]
        self.node_base = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.node_count = int(sum(sizes))
        self.node_level = np.repeat(np.arange(len(sizes)), sizes)
        self.node_leaves = np.concatenate([hierarchy.leaf_counts(lv) for lv in range(len(sizes))]).astype(np.int64)
        self.first_leaf = np.concatenate([np.unique(self.maps[lv], return_index=True)[1]
                                          for lv in range(len(sizes))]).astype(np.int64)
        self.top = len(sizes) - 1
        self.level_of_leaf = np.zeros(len(hierarchy.leaves), dtype=np.int64)
        self.suppressed_leaf = np.zeros(len(hierarchy.leaves), dtype=bool)
        self.leaf_occurrences = np.zeros(len(hierarchy.leaves), dtype=np.int64)
        np.add.at(self.leaf_occurrences, self.leaf_of_item, itemsets.record_counts(tx))
        self.labels = [str(x) for lab in hierarchy.labels for x in lab]
        self.items = tx.items

    def _node_of_leaf(self) -> np.ndarray:
        leaves = np.arange(self.maps.shape[1])
        return self.node_base[self.level_of_leaf] + self.maps[self.level_of_leaf, leaves]

    @property
    def node_of_item(self) -> np.ndarray:
        nodes = self._node_of_leaf()[self.leaf_of_item]
        return np.where(self.suppressed_leaf[self.leaf_of_item], -1, nodes)

    def _parent(self, node: int) -> int:
        level = int(self.node_level[node])
        return int(self.node_base[level + 1] + self.maps[level + 1, self.first_leaf[node]])

    def _under(self, node: int) -> np.ndarray:
        level = int(self.node_level[node])
        return self.maps[level] == self.maps[level, self.first_leaf[node]]

    def _cost(self, parent: int, node_of_leaf: np.ndarray) -> float:
        """NCP added (over item occurrences) by generalizing the subtree of ``parent`` to it."""
        under = self._under(parent)
        now = self.node_leaves[node_of_leaf[under]]
        return float(np.sum(self.leaf_occurrences[under] * (self.node_leaves[parent] - now)))

    def fix(self, violating: np.ndarray | Violations, node_support: np.ndarray, k: int) -> bool:
        touched: set[int] = set()
        applied = False
        for row in untouched_rows(violating, touched):
            if not touched.isdisjoint(row):  # a rule of this round changed one of its items
                continue
            nodes = sorted(set(row))
            node_of_leaf = self._node_of_leaf()
            options = []
            for x in nodes:
                if self.node_level[x] < self.top:
                    parent = self._parent(x)
                    options.append((self._cost(parent, node_of_leaf), int(node_support[x]), x, parent))
            if not options:
                continue
            _, _, x, parent = min(options)
            if self.node_level[parent] == self.top and self.can_suppress:
                # generalizing to the root would blur every item: suppress the rarest item of J instead
                rarest = min(nodes, key=lambda n: (int(node_support[n]), n))
                self.suppressed_leaf[node_of_leaf == rarest] = True
                touched.add(rarest)
            else:
                under = self._under(parent)
                touched.update(int(n) for n in np.unique(node_of_leaf[under]))
                self.level_of_leaf[under] = self.node_level[parent]
            applied = True
        return applied

    def recoding(self, rounds: int) -> SetRecoding:
        node_of_item = self.node_of_item
        rules: dict[str, list[str]] = {}
        for item, node in zip(self.items, node_of_item):
            if node >= 0 and self.labels[node] != str(item):
                rules.setdefault(self.labels[node], []).append(str(item))
        suppressed = sorted(str(x) for x, n in zip(self.items, node_of_item) if n < 0)
        return SetRecoding(node_of_item, self.labels, {g: sorted(v) for g, v in rules.items()}, suppressed, rounds)

    def loss(self, node: np.ndarray) -> np.ndarray:
        """NCP of published items (node ids): leaves covered / all leaves, 0 for a leaf."""
        covered = self.node_leaves[node]
        return np.where(covered > 1, covered / max(len(self.hierarchy.leaves), 1), 0.0)


def parse_number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


class DynamicGroups:
    """Dynamic hierarchies (seed 002): no predefined hierarchy; a rule merges the rarest item of a
    violating itemset with one other group: for items declared ``numeric`` the rarer adjacent range (so groups are ranges
    such as [20000-30500]), for other items the rarest group (sets such as {a, b}); ties go to the
    smaller loss. Only items in violating itemsets are ever merged, and the hierarchy built (item ->
    group -> '*') is published with the result."""

    can_suppress = False

    def __init__(self, tx: Transactions, numeric: bool | None = False, joiner: str = ", "):
        # items are nominal unless declared numeric: ids such as movie ids are digits, and a range such as
        # [1023-1032] would claim an order they lack (None: numeric when every item reads as a number)
        self.joiner = joiner  # between the items of a set label; never the cells' item delimiter
        self.items = [str(x) for x in tx.items]
        self.item_texts = set(self.items)
        values = [parse_number(x) for x in self.items]
        self.numeric = all(v is not None for v in values) if numeric is None else numeric
        if self.numeric and any(v is None for v in values):
            bad = next(x for x, v in zip(self.items, values) if v is None)
            raise InputError(f"numeric dynamic hierarchy: item {bad!r} is not a number")
        n = len(self.items)
        self.node_count = max(n, 1)
        self.values = np.array([v if v is not None else 0.0 for v in values], dtype=float)
        names = np.array(self.items, dtype=object).astype(str)
        self.order = np.lexsort((names, self.values)) if self.numeric else np.argsort(names, kind="stable")
        self.position = np.empty(n, dtype=np.int64)
        self.position[self.order] = np.arange(n)
        self.group = np.arange(n, dtype=np.int64)  # item code -> group id (one of its items)
        self.members: dict[int, list[int]] = {i: [i] for i in range(n)}
        # a group's first and last position in ``order`` (numeric groups are contiguous there)
        self.lo = {i: int(self.position[i]) for i in range(n)}
        self.hi = dict(self.lo)
        self.span = max(float(self.values.max() - self.values.min()), 0.0) if self.numeric and n else 0.0

    @property
    def node_of_item(self) -> np.ndarray:
        return self.group.copy()

    def _loss(self, items: list[int]) -> float:
        if len(items) < 2:
            return 0.0
        if self.numeric:
            v = self.values[items]
            return float(v.max() - v.min()) / self.span if self.span else 0.0
        return len(items) / len(self.items)

    def _partner(self, x: int, node_support: np.ndarray, by_support: list[int], touched: set[int]) -> int | None:
        if self.numeric:
            options = []
            if self.lo[x] > 0:
                options.append(int(self.group[self.order[self.lo[x] - 1]]))
            if self.hi[x] < len(self.items) - 1:
                options.append(int(self.group[self.order[self.hi[x] + 1]]))
            options = [h for h in options if h not in touched]
            if not options:
                return None
            return min(options, key=lambda h: (int(node_support[h]), self._loss(self.members[x] + self.members[h]), h))
        # the rarest other group (a merged group of u items costs u/|I| per occurrence: the rarest is cheapest)
        return next((h for h in by_support if h != x and h not in touched), None)

    def fix(self, violating: np.ndarray | Violations, node_support: np.ndarray, k: int) -> bool:
        touched: set[int] = set()
        applied = False
        live = list(self.members)
        by_support = [] if self.numeric else [live[i] for i in np.lexsort((np.array(live), node_support[live]))]
        for row in untouched_rows(violating, touched):
            if not touched.isdisjoint(row):
                continue
            groups = sorted(set(row))
            x = min(groups, key=lambda g: (int(node_support[g]), g))
            y = self._partner(x, node_support, by_support, touched)
            if y is None:
                continue
            keep, gone = min(x, y), max(x, y)
            moved = self.members.pop(gone)
            self.group[moved] = keep
            self.members[keep].extend(moved)
            self.lo[keep] = min(self.lo[keep], self.lo.pop(gone))
            self.hi[keep] = max(self.hi[keep], self.hi.pop(gone))
            touched.update((x, y))
            applied = True
        return applied

    @property
    def labels(self) -> list[str]:
        out = list(self.items)
        for g, items in self.members.items():
            if len(items) > 1:
                out[g] = self._label(items)
        return out

    def _label(self, items: list[int]) -> str:
        if self.numeric:
            lo = items[int(np.argmin(self.values[items]))]
            hi = items[int(np.argmax(self.values[items]))]
            return f"[{self.items[lo]}-{self.items[hi]}]"
        label = "{" + self.joiner.join(sorted(self.items[i] for i in items)) + "}"
        while label in self.item_texts:  # an item of the data reads so: the group must not pass for that item
            label += " (group)"
        return label

    def recoding(self, rounds: int) -> SetRecoding:
        labels = self.labels
        rules = {labels[g]: sorted(self.items[i] for i in items) for g, items in self.members.items() if len(items) > 1}
        rows = [[item, labels[int(self.group[i])], "*"] for i, item in enumerate(self.items)]
        return SetRecoding(self.group.copy(), labels, rules, [], rounds, hierarchy_rows=rows)

    def loss(self, node: np.ndarray) -> np.ndarray:
        table = np.zeros(self.node_count)
        for g, items in self.members.items():
            table[g] = self._loss(items)
        return table[node]
