"""Full-domain transformations: one hierarchy level per QI applied to every value of the column."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from .. import heap
from ..model.hierarchy import Hierarchy
from ..model.table import group_rows
from .persons import Judgement


def generalize_codes(codes: np.ndarray, hierarchies: list[Hierarchy], levels: list[int]) -> np.ndarray:
    """Leaf codes (rows x q) -> label codes at the given level of each QI."""
    out = np.empty_like(codes)
    for j, (h, lv) in enumerate(zip(hierarchies, levels)):
        out[:, j] = h.maps[lv][codes[:, j]]
    return out


def radices(hierarchies: list[Hierarchy], levels: list[int]) -> np.ndarray:
    return np.array([len(h.labels[lv]) for h, lv in zip(hierarchies, levels)], dtype=np.int64)


def equivalence_classes(
    codes: np.ndarray, counts: np.ndarray, hierarchies: list[Hierarchy], levels: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Classes of a transformation on a frequency set: (tuple -> class, class sizes)."""
    generalized = generalize_codes(codes, hierarchies, levels)
    _, inverse, _ = group_rows(generalized, radices(hierarchies, levels))
    sizes = np.bincount(inverse, weights=counts).astype(np.int64)
    return inverse, sizes


def label_columns(hierarchies: list[Hierarchy], levels: list[int]) -> list[np.ndarray]:
    """Per QI: the label (object array) of each leaf code at the chosen level."""
    return [h.labels[lv][h.maps[lv]] for h, lv in zip(hierarchies, levels)]


# ---- the generalization lattice and node evaluation on the frequency set --------------------------
# A node is one level per QI. Its equivalence classes are computed on the frequency set (distinct QI
# tuples with counts): each class is kept as (one representative tuple, size), so a node can also be
# computed from any evaluated specialization by grouping that node's classes instead of all tuples
# ("roll-up"): generalizing never splits a class.

# classes an evaluator groups with numpy before it loads the compiled kernel: about 1 s of numpy work,
# or 0.3 s on a large frequency set (LARGE_FREQUENCY_SET distinct tuples or more), where each grouping
# gains more (a sort is n log n) and a search that has come this far has far more to do (1M rows, 9
# QIs, 4%: 115M classes grouped; without suppression 2-4M)
KERNEL_AFTER = 20_000_000
KERNEL_AFTER_LARGE = 6_000_000
LARGE_FREQUENCY_SET = 65_536
# a node is grouped by counting (NodeEvaluator._group_dense) rather than sorting when it comes from at
# least DENSE_MIN classes and its levels' label counts multiply to at most DENSE_SPACE per class
DENSE_MIN = 512
DENSE_SPACE = 16
# ... and at most DENSE_SPACE_KERNEL per class once the compiled kernel groups (NodeEvaluator._kernel): its
# radix sort beats counting (1M rows, 9 QIs, 4%: 2.0x at 4-8 codes per class, about even at 1; the search
# 2.81 -> 2.66 s CPU, medians of 4, with 0 rather than 1), so it groups everything then
DENSE_SPACE_KERNEL = 0


def _load_kernel():
    """group_sorted of _group_kernel, or None where numba cannot be imported or set up (numpy then does it
    all): numba not installed (it is the optional `fast` extra), or no writable place for its cache (numba
    raises at the decorator then)."""
    try:
        from ._group_kernel import group_sorted
    except Exception:  # noqa: BLE001 - any failure only costs speed; the numpy path gives the same classes
        return None
    return group_sorted


# free heap bytes from which NodeEvaluator.release hands the pages back (glibc; large frequency sets only): a
# search's node arrays are small enough to come from the heap, whose freed pages stay resident beside the output
# built next (5M rows, 8 QIs, 4%: ~130 MB), too few for the run's own trim after the search (run.stages.TRIM_FREE_BYTES;
# Adult + 0.2-closeness: ~100 MB free at the release, a trim ~14 ms a call)
RELEASE_TRIM_BYTES = 64 << 20


def trim_freed(free_bytes: int = RELEASE_TRIM_BYTES) -> None:
    """heap.trim_freed at the release's threshold."""
    heap.trim_freed(free_bytes)


UNKNOWN, ANONYMOUS, NOT_ANONYMOUS = 0, 1, 2
PRUNED = 3  # not checked: its bound shows neither it nor a generalization can be optimal (lattice_search)


class Lattice:
    """Shape and numbering of the full-domain lattice: node index = C-order index of its levels."""

    def __init__(self, hierarchies: list[Hierarchy]):
        self.heights = np.array([h.height for h in hierarchies], dtype=np.int64)
        self.shape = tuple(int(x) + 1 for x in self.heights)
        self.q = len(self.shape)
        self.size = int(np.prod(np.array(self.shape, dtype=float))) if self.shape else 1
        self.max_rank = int(self.heights.sum())
        self._all: np.ndarray | None = None
        self._ranks: np.ndarray | None = None
        strides, s = [], 1
        for dim in reversed(self.shape):
            strides.append(s)
            s *= dim
        self.strides = tuple(reversed(strides))  # C order, in nodes
        # per QI and level the slices of above() and below()
        self._above = [[slice(lv, None) for lv in range(dim)] for dim in self.shape]
        self._below = [[slice(0, lv + 1) for lv in range(dim)] for dim in self.shape]

    def index(self, levels) -> int:
        return sum(int(x) * s for x, s in zip(levels, self.strides))

    def levels(self, index: int) -> tuple[int, ...]:
        index = int(index)
        out = []
        for s in self.strides:
            lv, index = divmod(index, s)
            out.append(lv)
        return tuple(out)

    def all_levels(self) -> np.ndarray:
        """size x q matrix of every node's levels, in index order."""
        if self._all is None:
            grids = np.indices(self.shape, dtype=np.int16).reshape(self.q, -1)
            self._all = np.ascontiguousarray(grids.T)
        return self._all

    def ranks(self) -> np.ndarray:
        """Per node (index order) the sum of its levels (read-only; made once, by broadcasting)."""
        if self._ranks is None:
            ranks = np.zeros(self.shape, dtype=np.int64)
            for j, dim in enumerate(self.shape):
                shape = [1] * self.q
                shape[j] = dim
                ranks += np.arange(dim, dtype=np.int64).reshape(shape)
            ranks = ranks.reshape(-1)
            ranks.flags.writeable = False
            self._ranks = ranks
        return self._ranks

    def successors(self, levels) -> list[tuple[int, ...]]:
        """Direct generalizations: one QI one level up."""
        out = []
        for j, lv in enumerate(levels):
            if lv < self.heights[j]:
                out.append(tuple(levels[:j]) + (lv + 1,) + tuple(levels[j + 1:]))
        return out

    def predecessors(self, levels) -> list[tuple[int, ...]]:
        """Direct specializations: one QI one level down."""
        out = []
        for j, lv in enumerate(levels):
            if lv > 0:
                out.append(tuple(levels[:j]) + (lv - 1,) + tuple(levels[j + 1:]))
        return out

    def above(self, levels) -> tuple[slice, ...]:
        """Index of all generalizations (the node included) in a lattice-shaped array."""
        return tuple(map(list.__getitem__, self._above, levels))

    def below(self, levels) -> tuple[slice, ...]:
        """Index of all specializations (the node included) in a lattice-shaped array."""
        return tuple(map(list.__getitem__, self._below, levels))


class NodeClasses:
    """Equivalence classes of one node: a representative frequency-set row and the size of each."""

    __slots__ = ("levels", "reps", "sizes", "key", "failing", "outliers", "cost", "kept", "parent", "parent_map",
                 "hist", "charged", "skipped")

    def __init__(self, levels: tuple[int, ...], reps: np.ndarray, sizes: np.ndarray, key: np.ndarray | None = None):
        self.levels = levels
        self.reps = reps
        self.sizes = sizes
        # per class, its generalized QI codes as one number in the evaluator's fixed mixed-radix layout
        # (None when that layout does not fit an int64): lets a node be grouped from any specialization
        # by changing only the digits of the QIs whose level differs
        self.key = key
        self.failing: np.ndarray | None = None
        self.outliers = 0  # records of the failing classes (what the metrics count)
        self.cost = 0  # what the suppression budget counts: the outliers, or the persons suppressed (judge)
        # with a person id: per class the records published (its persons left); outliers are then every record of
        # the persons suppressed, some in classes that stay
        self.kept: np.ndarray | None = None
        # sensitive histograms (class-level models): the node it was grouped from and, per class of that
        # node, the class here (dropped once the node is checked), and per sensitive domain the sparse
        # classes x values counts (class, value, count), rolled up from the parent's
        self.parent: NodeClasses | None = None
        self.parent_map: np.ndarray | None = None
        self.hist: dict | None = None
        self.charged = 0  # pairs of hist counted against the evaluator's budget while cached
        # over the budget on its sizes alone (NodeEvaluator._over_on_sizes): failing holds only the classes
        # failing on their sizes, no histogram was made, and the link to the parent is kept
        self.skipped = False


class _LevelColumns:
    """One QI's columns over the frequency-set rows, one per level, each made on first use: a search
    without suppression visits few levels of each QI, and building them all took as long as its checks."""

    __slots__ = ("_make", "_cols")

    def __init__(self, levels: int, make: Callable[[int], np.ndarray]):
        self._make = make
        self._cols: list[np.ndarray | None] = [None] * levels

    def __getitem__(self, lv: int) -> np.ndarray:
        col = self._cols[lv]
        if col is None:
            col = self._cols[lv] = self._make(lv)
        return col

    def __len__(self) -> int:
        return len(self._cols)

    def clear(self) -> None:
        """Forget the columns made (they are made again when used)."""
        self._cols = [None] * len(self._cols)

    def __iter__(self):
        return (self[lv] for lv in range(len(self._cols)))


def _generalizer(h: Hierarchy, leaf: np.ndarray) -> Callable[[int], np.ndarray]:
    """Level -> the codes of the leaves ``leaf`` (int64) at that level of ``h`` (int64; at a level that maps
    each leaf to itself, ``leaf``: the columns are only read). An int64 index gathers about twice as fast
    as the frequency set's int32 codes."""
    def make(lv: int) -> np.ndarray:
        m = h.maps[lv]
        if lv == 0 and np.array_equal(m, np.arange(len(m))):
            return leaf
        return np.take(m.astype(np.int64), leaf)
    return make


class NodeEvaluator:
    """Classes of any node, with a small LRU cache of evaluated nodes used as roll-up sources."""

    def __init__(self, freq, hierarchies: list[Hierarchy], failing=None, cache_size: int | None = None):
        self.hierarchies = hierarchies
        self.freq_codes = freq.codes
        self.freq_inverse = getattr(freq, "inverse", None)  # row -> tuple, for sensitive histograms
        self.counts = np.asarray(freq.counts, dtype=np.int64)
        self.m = len(self.counts)
        self.q = len(hierarchies)
        self.failing_fn = failing
        # generalized codes of every frequency-set row, per QI and level (made on first use), and the
        # level's radix
        self.gcols = [_LevelColumns(h.level_count, _generalizer(h, freq.codes[:, j].astype(np.int64)))
                      for j, h in enumerate(hierarchies)]
        self.radix = [[max(len(h.labels[lv]), 1) for lv in range(h.level_count)] for h in hierarchies]
        # fixed mixed-radix layout: digit j has the largest label count of QI j at any level, so one
        # layout serves every node and a node's key differs from a specialization's only in the digits
        # of the QIs generalized further
        digit = [max(r) for r in self.radix]
        space = 1.0
        for r in digit:
            space *= r
        self.fixed = space < 2.0**62
        bottom_key = None
        if self.fixed:
            weights, w = [], 1
            for r in reversed(digit):
                weights.append(w)
                w *= r
            weights.reverse()
            self.key_weights = weights
            bottom_key = np.zeros(self.m, dtype=np.int64)
            for j in range(self.q):
                bottom_key += self.gcols[j][0] * weights[j]
        self.bottom = NodeClasses(tuple([0] * self.q), np.arange(self.m, dtype=np.int64), self.counts, bottom_key)
        # the frequency set's tuples are the classes of the node with level 0 everywhere only when level 0 maps
        # every leaf to itself; a hierarchy whose level 0 groups leaves has that node grouped like any other
        self.bottom_exact = all(np.array_equal(h.maps[0], np.arange(len(h.maps[0]))) for h in hierarchies)
        self.positions = np.arange(self.m, dtype=np.int64)
        self.back_positions = self.positions[::-1].copy()  # m-1 ... 0, for _group_dense's scatter
        self.float_counts = self.counts.astype(np.float64)  # bincount's weights from the bottom
        # tuples counting 0 records (a population table's rows outside the research subset: the frequency set
        # counts research records) still form classes: the membership domain (δ-presence, k-map) counts their
        # rows, and the histograms' roll-ups map every tuple to a class, so classes are told present by their
        # tuples, not by their totals
        self.empty_tuples = bool(len(self.counts)) and not bool(self.counts.all())
        self.deltas: dict[tuple[int, int, int], np.ndarray] = {}
        self.label_steps: dict[tuple[int, int, int], np.ndarray] = {}
        self.delta_room = max(0, 16_000_000 // max(self.m, 1))  # arrays of m int64 kept: at most ~128 MB
        # more roll-up sources pay off: up to 1,024 nodes, evicted (least recently used first) once they
        # hold more than ~10M classes together (~240 MB; at least 48 nodes of the frequency set's size),
        # so that the many small nodes stay while the few large ones (hubs, near the bottom) come and go
        if cache_size is None:
            cache_size = 1024
        self.cache_size = cache_size
        self.class_budget = max(10_000_000, 48 * self.m)
        self.cache_total = 0  # classes held by the cached nodes
        self.hist_room = 4_000_000  # (class, value) pairs of sensitive histograms kept on cached nodes
        self.cache_levels = np.zeros((cache_size, self.q), dtype=np.int64)
        # levels in unary, one bit field per QI (level l: its l lowest bits set), when they fit 63 bits:
        # a cached node is a specialization of a node iff it has no bit the node lacks
        widths = [h.height for h in hierarchies]
        self.unary = sum(widths) <= 63
        self.unary_offsets = np.cumsum([0] + widths[:-1]).tolist() if widths else []
        # per QI and level its bit field (_bits sums one entry per QI)
        self.unary_table = [[((1 << lv) - 1) << off for lv in range(w + 1)]
                            for w, off in zip(widths, self.unary_offsets)]
        self.cache_bits = np.zeros(cache_size, dtype=np.int64)
        # per slot its node's index in the lattice (C order of the levels), for the sweep of the nodes no longer needed
        self.node_strides = [int(np.prod([h.height + 1 for h in hierarchies[j + 1:]], dtype=np.int64))
                             for j in range(self.q)]
        self.cache_index = np.zeros(cache_size, dtype=np.int64)
        # set by a search that knows which nodes it may still evaluate (LatticeSearch.needed_sources): a lattice-shaped
        # bool array, True where the node or some generalization of it may still be evaluated. A cached node for
        # which it is False can never be a roll-up source again (sources are specializations): it is evicted at
        # the next sweep (every sweep_step classes cached), whatever its last use
        self.needed: Callable[[], np.ndarray] | None = None
        self.sweep_step = 0
        self.next_sweep = 0
        self.cache_nodes: list[NodeClasses | None] = [None] * cache_size
        self.cache_used = np.zeros(cache_size, dtype=np.int64)  # last use (0 = empty slot)
        self.cache_classes = np.zeros(cache_size, dtype=np.int64)  # number of classes of the node
        self.cache_filled = 0
        self.clock = 0
        self.evaluations = 0
        self.rollups = 0
        # classes grouped so far: past KERNEL_AFTER the compiled kernel takes over (see _kernel)
        self.grouped = 0
        self.kernel: Callable | Literal[False] | None = None  # False: numba could not be imported

    # -- classes -------------------------------------------------------------------------------
    class_level = False  # set when the failing function needs tuple -> class (l-diversity, t-closeness...)
    # set (with class_level) when the failing function takes ``counts`` (domain -> classes x values
    # counts, Problem.failing): histograms are then rolled up from the node's source like the sizes
    histograms = False
    # set by searches that check few nodes (Flash without suppression): a node the frequency set rolls up
    # to by counting (_group_dense) is grouped from it directly, not through a hub made for later nodes
    few_checks = False
    # with histograms: the classes failing on their sizes alone (algorithms.base.Problem.failing_on_sizes)
    # and the suppression budget, to skip the sensitive models on nodes already over the budget
    size_failing: Callable | None = None
    budget: int | None = None
    # a run with a person id: (record sizes, tuple -> class) -> the persons' fixpoint (search/persons.Judgement):
    # the node's cost is then its persons suppressed, its outliers their records
    judge: Callable[[np.ndarray, np.ndarray], Judgement] | None = None

    def tuple_class(self, node: NodeClasses) -> np.ndarray:
        """The class (index into node.sizes) of every frequency-set tuple."""
        cols = [self.gcols[j][lv] for j, lv in enumerate(node.levels) if self.radix[j][lv] > 1]
        if not cols:
            return np.zeros(self.m, dtype=np.int64)
        product = 1.0
        for j, lv in enumerate(node.levels):
            product *= self.radix[j][lv]
        if product < 2.0**62:
            key = np.zeros(self.m, dtype=np.int64)
            for j, lv in enumerate(node.levels):
                if self.radix[j][lv] > 1:
                    key = key * self.radix[j][lv] + self.gcols[j][lv]
        else:
            key = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)[1].reshape(-1)
        rep_key = key[node.reps]
        order = np.argsort(rep_key, kind="stable")
        return order[np.searchsorted(rep_key[order], key)]

    def source_for(self, levels, bits: int | None = None) -> NodeClasses:
        """The cached specialization of ``levels`` (``bits``: their _bits, when known) with the fewest
        classes (the bottom if none)."""
        if self.clock == 0:
            return self.bottom
        filled = self.cache_filled
        if self.unary:
            ok = (self.cache_bits[:filled] & ~(self._bits(levels) if bits is None else bits)) == 0
        else:
            ok = (self.cache_levels[:filled] <= np.array(levels, dtype=np.int64)).all(axis=1)
        slots = ok.nonzero()[0]
        if not len(slots):
            return self.bottom
        classes = self.cache_classes[slots]
        at = classes.argmin()  # the first slot of the fewest classes
        if classes[at] > self.m:  # emptied slots only
            return self.bottom
        slot = int(slots[at])
        self.rollups += 1
        self.clock += 1
        self.cache_used[slot] = self.clock  # used: the last to be evicted
        cached = self.cache_nodes[slot]
        assert cached is not None  # a filled slot
        return cached

    def classes(self, levels, source: NodeClasses | None = None, cache: bool = True) -> NodeClasses:
        return self.evaluate(tuple(int(x) for x in levels), source, cache)

    def evaluate(self, levels: tuple[int, ...], source: NodeClasses | None = None, cache: bool = True) -> NodeClasses:
        """classes() of levels given as a tuple of Python ints."""
        bits = self._bits(levels) if self.unary else None
        if source is None:
            source = self.source_for(levels, bits)
            if source is self.bottom and self.clock and source.key is not None:
                source = self._hub(levels)
        if source.levels == levels and (source is not self.bottom or self.bottom_exact):
            node = source
        else:
            node = self._group(levels, source)
        if self.judge is not None and node.failing is None:  # persons counted (search/persons.py)
            judged = self.judge(node.sizes, self.tuple_class(node))
            node.failing, node.cost, node.kept = judged.failing, judged.cost, judged.kept
            # the records of the persons suppressed; without kept counts (none suppressed, or a node over a 0 budget,
            # whose metric and bounds are not read) those of the classes failing
            node.outliers = int(np.add.reduce(node.sizes[judged.failing])) if judged.kept is None else \
                int(np.add.reduce(node.sizes)) - int(np.add.reduce(judged.kept))
        elif self.failing_fn is not None and node.failing is None:
            if self.class_level and self.histograms and self.freq_inverse is not None:
                if not self._over_on_sizes(node):
                    node.failing = self.failing_fn(node.sizes,
                                                   counts=lambda dom, node=node: self.histogram(node, dom))
            elif self.class_level:  # models on sensitive values: pass which class each tuple is in
                node.failing = self.failing_fn(node.sizes, tuple_class=self.tuple_class(node))
            else:
                node.failing = self.failing_fn(node.sizes)
            node.outliers = node.cost = int(np.add.reduce(node.sizes[node.failing]))
            if not node.skipped:
                node.parent = node.parent_map = None
        if cache and node is not self.bottom:
            self._remember(node, bits)
        self.evaluations += 1
        return node

    def _hub(self, levels: tuple[int, ...]) -> NodeClasses:
        """A roll-up source for a node with no evaluated specialization: the node with level 1 on the
        QIs the node generalizes and 0 elsewhere (itself rolled up from a smaller hub when one is
        cached). Grouping the whole frequency set once per such support instead of once per node pays
        off because searches like Flash check many nodes with the same generalized QIs."""
        hub = tuple(min(x, 1) for x in levels)
        if hub == levels or not any(hub) or (self.few_checks and self._countable(levels, self.m)):
            return self.bottom
        node = self._group_fixed(hub, self.source_for(hub))
        self._remember(node)
        return node

    def _group(self, levels: tuple[int, ...], source: NodeClasses) -> NodeClasses:
        if source.key is not None:
            return self._group_fixed(levels, source)
        reps, weights = source.reps, source.sizes
        n = len(reps)
        product = 1.0
        for j, lv in enumerate(levels):
            product *= self.radix[j][lv]
        if product >= 2.0**62:  # keys do not fit an int64: group lexicographically
            cols = np.stack([self.gcols[j][lv][reps] for j, lv in enumerate(levels)], axis=1)
            _, first, inverse = np.unique(cols, axis=0, return_index=True, return_inverse=True)
            sizes = np.bincount(inverse.reshape(-1), weights=weights, minlength=len(first)).astype(np.int64)
            return NodeClasses(levels, reps[first], sizes)
        key = None
        for j, lv in enumerate(levels):
            r = self.radix[j][lv]
            if r == 1:
                continue
            col = self.gcols[j][lv][reps]
            key = col if key is None else key * r + col
        if key is None:  # every QI at a one-label level: one class
            return NodeClasses(levels, reps[:1], np.array([int(weights.sum())], dtype=np.int64))
        space = int(product)
        if space <= 4 * n + 4096:
            total = np.bincount(key, weights=weights, minlength=space)
            present = np.flatnonzero(np.bincount(key, minlength=space) if self.empty_tuples else total)
            first = np.empty(space, dtype=np.int64)
            first[key[::-1]] = reps[::-1]
            return NodeClasses(levels, first[present], total[present].astype(np.int64))
        order = np.argsort(key, kind="stable")
        sk = key[order]
        starts = np.flatnonzero(np.concatenate(([True], sk[1:] != sk[:-1])))
        sizes = np.add.reduceat(weights[order], starts).astype(np.int64)
        return NodeClasses(levels, reps[order[starts]], sizes)

    def _group_fixed(self, levels: tuple[int, ...], source: NodeClasses) -> NodeClasses:
        """Group the source's classes by their key with the changed QIs' digits replaced."""
        reps, key = source.reps, source.key
        assert key is not None  # only called with the fixed layout (keys present)
        bottom = source is self.bottom  # its reps are 0..m-1: no gather needed
        n = len(key)
        # a long search counts every grouping towards loading the kernel; one checking few nodes (Flash
        # without suppression) only the sorted ones, so that it seldom pays the kernel's load
        counted = n > 1 and not self.few_checks
        kernel = self._kernel(n) if counted else (self.kernel if callable(self.kernel) else None)
        if n >= DENSE_MIN:
            space = self._countable(levels, n, DENSE_SPACE if kernel is None else DENSE_SPACE_KERNEL)
            if space:
                return self._group_dense(levels, source, space)
        for j, (new, old) in enumerate(zip(levels, source.levels)):
            if new != old:
                if self.few_checks and not bottom:  # from the source's classes: no delta over all tuples made
                    key = key + self._label_step(j, old, new)[self.gcols[j][old][reps]]
                    continue
                delta = self._delta(j, old, new)
                key = key + (delta if bottom else delta[reps])
        n = len(key)
        if n <= 1:
            return self._linked(NodeClasses(levels, reps, source.sizes, key), source, None, None)
        if not counted:
            kernel = self._kernel(n)
        if kernel is not None:
            members = self.histograms and self.class_level  # _linked needs each source class's class
            first, sizes, sk, member_class = kernel(key, source.sizes, members)
            node = NodeClasses(levels, first if bottom else reps[first], sizes, sk)
            return self._linked(node, source, None, None, member_class if members else None)
        # a stable sort: each class's first member is its smallest position. Timsort runs on the runs the
        # keys keep from the source's order (sorted by its key, a few digits changed): 2-3x faster than
        # sorting the key and position packed together (1M rows, 9 QIs, 0%: 274 -> 132 ms on its 380
        # groupings; Adult 9 QIs 4%: 108 -> 77 ms)
        order = key.argsort(kind="stable")
        sk = key[order]
        head = np.empty(n, dtype=bool)
        head[0] = True
        np.not_equal(sk[1:], sk[:-1], out=head[1:])
        starts = head.nonzero()[0]
        if len(starts) == n:  # nothing merged
            return self._linked(NodeClasses(levels, reps[order], source.sizes[order], sk), source, order, None)
        sizes = np.add.reduceat(source.sizes[order], starts)
        return self._linked(NodeClasses(levels, reps[order[starts]], sizes, sk[starts]), source, order, head)

    def _label_step(self, j: int, old: int, new: int) -> np.ndarray:
        """Per label of QI j at level old: the change of a key when that label goes to its generalization
        at level new (cached; small: one entry per label)."""
        found = self.label_steps.get((j, old, new))
        if found is None:
            maps = self.hierarchies[j].maps
            up = np.zeros(self.radix[j][old], dtype=np.int64)
            up[maps[old]] = maps[new]  # a hierarchy maps every leaf of a label to the same generalization
            found = (up - np.arange(len(up), dtype=np.int64)) * self.key_weights[j]
            self.label_steps[(j, old, new)] = found
        return found

    def _countable(self, levels: tuple[int, ...], n: int, per_class: int = DENSE_SPACE) -> int:
        """The node's code space (product of its levels' label counts) where n source classes are grouped
        by counting (at most per_class codes per class), else 0."""
        space = 1
        for j, lv in enumerate(levels):
            space *= self.radix[j][lv]
        return space if space <= per_class * n else 0

    def _group_dense(self, levels: tuple[int, ...], source: NodeClasses, space: int) -> NodeClasses:
        """_group_fixed's classes, counted instead of sorted where the node's own mixed-radix codes (its
        levels' label counts as radices) span at most DENSE_SPACE codes per source class: a bincount and
        a scatter in O(n + space) rather than an n log n sort. The classes come out exactly as sorted:
        ascending code is ascending fixed-layout key (both order the QIs' labels lexicographically), and
        each class's first member is its smallest source position (the last write of a reversed scatter)."""
        reps = source.reps
        assert source.key is not None  # the fixed layout
        bottom = source is self.bottom
        n = len(reps)
        radix = self.radix
        gcols = self.gcols
        active = [j for j, lv in enumerate(levels) if radix[j][lv] > 1]  # the others: one label, code 0
        code = None
        owned = False  # code is an array of its own (not a column of gcols, which are only read)
        for j in active:
            lv = levels[j]
            col = gcols[j][lv] if bottom else gcols[j][lv][reps]
            if code is None:
                code, owned = col, not bottom
            elif owned:
                code *= radix[j][lv]
                code += col
            else:  # the first product makes the array: no copy of the first column
                code = code * radix[j][lv]
                code += col
                owned = True
        if code is None:  # every QI at a one-label level: one class, its first member the first
            present = np.zeros(1, dtype=np.int64)
            totals = np.array([source.sizes.sum()])
            code = np.zeros(n, dtype=np.int64)
            at = present
        else:
            totals = np.bincount(code, weights=self.float_counts if bottom else source.sizes, minlength=space)
            present = (np.bincount(code, minlength=space) if self.empty_tuples else totals).nonzero()[0]
            totals = totals[present]
            # the codes back to front (last source class first): the last write of the scatter is each
            # class's smallest position (one reversed copy: the scatter reads two contiguous arrays)
            first = np.empty(space, dtype=np.int64)
            first[code[::-1].copy()] = self.back_positions[self.m - n:]  # n-1 ... 0
            at = first[present]  # per class, its first source class
        rows = at if bottom else reps[at]  # ... and that class's representative frequency-set row
        changed = [j for j, (new, old) in enumerate(zip(levels, source.levels)) if new != old]
        weights = self.key_weights
        if 3 * len(active) < 1 + 3 * len(changed):
            # the key from the classes' rows directly: the sum of the active QIs' weighted codes
            key = None
            for j in active:
                part = gcols[j][levels[j]][rows] * weights[j]
                if key is None:
                    key = part
                else:
                    key += part
            if key is None:
                key = np.zeros(len(rows), dtype=np.int64)
        else:
            key = source.key[at]
            for j in changed:  # on the classes' rows only (a delta over all tuples would be made for a few)
                old = source.levels[j]
                key += self._label_step(j, old, levels[j])[gcols[j][old][rows]]
        node = NodeClasses(levels, rows, totals.astype(np.int64), key)
        mapping = None
        if self.histograms and self.class_level:
            lookup = np.empty(space, dtype=np.int64)
            lookup[present] = np.arange(len(present), dtype=np.int64)
            mapping = lookup[code]
        return self._linked(node, source, None, None, mapping)

    def _kernel(self, n: int):
        """The compiled grouping (_group_kernel.group_sorted) once this evaluator has grouped
        KERNEL_AFTER(_LARGE) classes, else None: loading it costs about 0.6 s per process, which a short
        search (Adult, or 1M rows without suppression) would not win back, while long suppression
        searches group a hundred million classes and more, at 2-4x numpy's speed."""
        if self.kernel is None:
            self.grouped += n
            if self.grouped < (KERNEL_AFTER_LARGE if self.m >= LARGE_FREQUENCY_SET else KERNEL_AFTER):
                return None
            self.kernel = _load_kernel() or False
        return self.kernel or None

    def _linked(self, node: NodeClasses, source: NodeClasses, order, head, mapping=None) -> NodeClasses:
        """With histograms: remember the source and the class of each source class in the node (the
        source's classes sorted by ``order``, a new class at every ``head``; or ``mapping`` given)."""
        if self.histograms and self.class_level:
            n = len(source.sizes)
            if mapping is None:
                mapping = np.empty(n, dtype=np.int64)
                if order is None:
                    mapping[:] = np.arange(n) if len(node.sizes) == n else 0
                elif head is None:
                    mapping[order] = self.positions[:n]
                else:
                    mapping[order] = np.cumsum(head) - 1
            node.parent, node.parent_map = source, mapping
        return node

    # -- sensitive histograms (class-level models) ----------------------------------------------------
    def _over_on_sizes(self, node: NodeClasses) -> bool:
        """Is the node over the suppression budget on its class sizes alone (k-anonymity)? The models on
        sensitive values only add failing classes, so it is not anonymous whatever they say: its failing
        classes are left as those, its histograms are never made (most nodes of an exhaustive search,
        t-closeness with suppression), and its link is kept, moved down to the nearest node not skipped,
        for the nodes rolled up from it."""
        if self.size_failing is None or self.budget is None:
            return False
        failing = self.size_failing(node.sizes)
        if failing is None or int(node.sizes[failing].sum()) <= self.budget:
            return False
        node.failing, node.skipped = failing, True
        node.parent, node.parent_map = self._past_skipped(node.parent, node.parent_map)
        return True

    @staticmethod
    def _past_skipped(parent: NodeClasses | None, pmap: np.ndarray | None):
        """(ancestor, map) with the skipped nodes between composed away: their histograms are not made."""
        while parent is not None and pmap is not None and parent.skipped and parent.parent is not None:
            assert parent.parent_map is not None  # kept with the parent
            parent, pmap = parent.parent, pmap[parent.parent_map]
        return parent, pmap

    def histogram(self, node: NodeClasses, dom) -> np.ndarray:
        """classes x values counts of the node on a sensitive domain, rolled up from the sparse
        histogram of the node it was grouped from (else summed from the frequency-set tuples)."""
        V = dom.m
        n = len(node.sizes)
        if node.parent is not None:
            parent, pmap = self._past_skipped(node.parent, node.parent_map)
            assert parent is not None and pmap is not None  # set with the parent
            pc, pv, pn = self._sparse(parent, dom)
            cls = pmap[pc]
        else:
            pc, pv, pn = dom.tuple_triplets(self.freq_inverse)
            cls = pc if node is self.bottom else self.tuple_class(node)[pc]
        flat = cls * V + pv
        dense = np.bincount(flat, weights=pn, minlength=n * V).reshape(n, V)
        if node is not self.bottom:  # keep it sparse for the node's own roll-ups
            nz = np.flatnonzero(dense)
            c = nz // V
            if node.hist is None:
                node.hist = {}
            node.hist[id(dom)] = (dom, c, nz - c * V, dense.reshape(-1)[nz])
        return dense.astype(np.int64)

    def _sparse(self, node: NodeClasses, dom) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if node is self.bottom:
            return dom.tuple_triplets(self.freq_inverse)
        found = node.hist.get(id(dom)) if node.hist is not None else None
        if found is None or found[0] is not dom:
            self.histogram(node, dom)
            assert node.hist is not None  # histogram() stores it
            found = node.hist[id(dom)]
        return found[1], found[2], found[3]

    def _delta(self, j: int, old: int, new: int) -> np.ndarray:
        """Per frequency-set row: the change of its key when QI j goes from level old to new (cached)."""
        found = self.deltas.get((j, old, new))
        if found is None:
            # from the codes, not from weighted codes kept per level (m int64 each: 38 MB at 5M rows, 8 QIs)
            found = self.gcols[j][new] - self.gcols[j][old]
            found *= self.key_weights[j]
            if self.delta_room > 0:
                self.deltas[(j, old, new)] = found
                self.delta_room -= 1
        return found

    def _remember(self, node: NodeClasses, bits: int | None = None) -> None:
        self.clock += 1
        if self.cache_filled < self.cache_size:
            slot = self.cache_filled
            self.cache_filled += 1
        else:
            slot = int(np.argmin(self.cache_used))  # an emptied slot (0) or the least recently used
            self._evict(slot)
        if node.hist is not None and not node.charged:
            pairs = sum(len(h[1]) for h in node.hist.values()) or 1
            if pairs <= self.hist_room:
                self.hist_room -= pairs
                node.charged = pairs
            else:
                node.hist = None
        if node.skipped and node.parent_map is not None and not node.charged:  # its link, likewise
            if len(node.parent_map) <= self.hist_room:
                self.hist_room -= len(node.parent_map)
                node.charged = len(node.parent_map)
            else:
                node.parent = node.parent_map = None
        if self.unary:  # source_for reads the bits, else the levels
            self.cache_bits[slot] = self._bits(node.levels) if bits is None else bits
        else:
            self.cache_levels[slot] = node.levels
        self.cache_nodes[slot] = node
        self.cache_used[slot] = self.clock
        self.cache_classes[slot] = len(node.sizes)
        self.cache_total += len(node.sizes)
        self.cache_index[slot] = sum(map(int.__mul__, node.levels, self.node_strides))
        if self.needed is not None and self.cache_total >= self.next_sweep:
            self._sweep(slot)
        while self.cache_total > self.class_budget:
            used = self.cache_used[:self.cache_filled]
            victim = int(np.argmin(np.where(used > 0, used, np.iinfo(np.int64).max)))
            if victim == slot:  # the node just cached is kept, alone if need be
                break
            self._evict(victim)

    def _sweep(self, keep: int) -> None:
        """Evict the cached nodes that no node still to be evaluated can roll up from (``needed``), but
        the one in slot ``keep`` (just cached)."""
        assert self.needed is not None
        filled = self.cache_filled
        if filled <= 1:  # the node just cached alone (the first sweep): nothing to evict, needed() not made
            self.next_sweep = self.cache_total + self.sweep_step
            return
        needed = self.needed().reshape(-1)
        idle = np.flatnonzero(~needed[self.cache_index[:filled]] & (self.cache_used[:filled] > 0))
        for slot in idle.tolist():
            if slot != keep:
                self._evict(slot)
        self.next_sweep = self.cache_total + self.sweep_step

    def release(self) -> None:
        """Empty the cache, the deltas and the level columns, and drop ``needed`` (which refers to the search that
        holds this evaluator: the pair would otherwise wait for the garbage collector): a search calls it once it
        has its optimum, so that their memory is freed before the output is built. The evaluator stays usable
        (what it needs is made again)."""
        self.needed = None
        for slot in range(self.cache_filled):
            self._evict(slot)
        self.deltas.clear()
        self.delta_room = max(0, 16_000_000 // max(self.m, 1))
        for cols in self.gcols:
            cols.clear()
        if self.m >= LARGE_FREQUENCY_SET:  # small searches free little; a trim's pages cost faults when used again
            trim_freed()

    def _evict(self, slot: int) -> None:
        evicted = self.cache_nodes[slot]
        if evicted is None:
            return
        if evicted.charged:  # its histograms go with it
            self.hist_room += evicted.charged
            evicted.charged = 0
            evicted.hist = None
            if evicted.skipped:
                evicted.parent = evicted.parent_map = None
        self.cache_total -= int(self.cache_classes[slot])
        self.cache_nodes[slot] = None
        self.cache_used[slot] = 0
        self.cache_classes[slot] = self.m + 1  # never chosen as a source (source_for)

    def _bits(self, levels) -> int:
        return sum(map(list.__getitem__, self.unary_table, levels))

    def labels(self, node: NodeClasses, j: int, which: np.ndarray | None = None) -> np.ndarray:
        """Label code at the node's level of QI j, per class (or per selected class)."""
        reps = node.reps if which is None else node.reps[which]
        return self.gcols[j][node.levels[j]][reps]

    def labels_of(self, reps: np.ndarray, j: int, level: int) -> np.ndarray:
        """Label code at ``level`` of QI j of the frequency-set tuples ``reps`` (classes' representatives taken
        once for every QI)."""
        return self.gcols[j][level][reps]

    def iterate_all(self, lattice: Lattice, order: list[int] | None = None):
        """Every node once, each rolled up from a neighbour just evaluated (odometer order).

        ``order`` is the QI order of the odometer (the last one changes fastest); nodes are yielded
        as NodeClasses whose levels are in the original QI order.
        """
        q = self.q
        if q == 0:
            yield self.classes((), source=self.bottom, cache=False)
            return
        order = list(range(q)) if order is None else list(order)
        dims = [lattice.shape[j] for j in order]
        stack: list[NodeClasses] = [self.bottom] * q  # stack[d]: node with positions > d at 0
        pos = [0] * q
        prev = self.bottom
        while True:
            levels = [0] * q
            for d, j in enumerate(order):
                levels[j] = pos[d]
            if all(p == 0 for p in pos):
                node = self.classes(tuple(levels), source=self.bottom, cache=False)
            elif pos[-1] > 0:
                node = self.classes(tuple(levels), source=prev, cache=False)
            else:
                d = max(i for i in range(q) if pos[i] > 0)
                node = self.classes(tuple(levels), source=stack[d], cache=False)
            # the node is the latest one with zeros after its last nonzero position
            last = max((i for i in range(q) if pos[i] > 0), default=-1)
            for d in range(max(last, 0), q):
                stack[d] = node
            prev = node
            yield node
            # advance the odometer
            d = q - 1
            while d >= 0:
                pos[d] += 1
                if pos[d] < dims[d]:
                    break
                pos[d] = 0
                d -= 1
            if d < 0:
                return
