"""Mondrian multidimensional partitioning (LeFevre, DeWitt & Ramakrishnan, ICDE 2006; seed 003 §2.4.3).

Runs on the frequency set (distinct QI tuples with their counts). A partition is split along the
dimension with the widest normalized range that has an *allowable* cut, and the halves are split
again until no partition has an allowable cut (strict multidimensional partitioning):

- numeric QIs: the cut at the median - among the thresholds between distinct values, the one that
  balances the two sides best (for k-anonymity, if the median cut is not allowable no cut is);
  normalized range = (max - min) / (max - min of the column);
- other QIs: along the hierarchy, top-down: the children (one level below the partition's lowest
  common ancestor) are divided into the two groups whose record counts are closest to equal (exact,
  by subset sums); normalized range = leaves under the LCA / all leaves.
- relaxed variant (option ``variant=relaxed``): numeric cuts put exactly half the records on each
  side, records with the median value going to both sides (their ranges may then overlap).

Attribute weights (option ``weights``, as the lattice searches take them; search/attribute_weights.py): the QI
to cut is the one with the largest factor x normalized width, a QI of weight 0 after every weighted one, so it
is cut only when no other QI has an allowable cut (:func:`cut_order`). ARX has no weighted Mondrian: this is
our rule. Equal weights, or none, keep the unweighted order.

A cut is allowable when the ``allowable`` predicate accepts both sides; the default checks the
privacy models on the two side sizes, and another predicate (l-diversity, t-closeness on the
sensitive values of each side) can be passed to :func:`partition`.
Output: numeric ranges ``[lo-hi]`` of the values in a partition, LCAs for the other QIs.

With a person id (definitions.md, "The unit counted: the person") the predicate counts persons: each side must
satisfy the models on its distinct persons (and, against the all-records adversary, every person cut must still share
all its partitions with k persons; :class:`PersonCuts`), and suppression is the persons' fixpoint (a person goes with
all its records). The relaxed variant, which splits a tuple's records by count, is refused then.

With the default predicate and models on class sizes alone (k-anonymity, k-map, average risk, ...),
the strict variant cuts all the regions of one depth at once with segmented numpy operations
(:func:`_partition_levels`); the result equals the one-region-at-a-time loop, partition numbers included.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import numpy as np

from ..errors import InputError, UnsatisfiableError
from ..model.hierarchy import ROOT
from ..privacy import Parameter
from ..search.attribute_weights import WEIGHTS, problem_factors
from ..search.persons import PersonCounter, persons_below_k
from ..search.recoding import QISpace, cells_from_groups, group_labels
from .base import AlgorithmInfo, CellRecoding, Problem, register

# (tuple indices, weights) of the left side, then of the right side -> may this cut be made?
Allowable = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], bool]


def default_allowable(problem: Problem) -> Allowable:
    if problem.needs_classes:  # both halves must satisfy the models on their sensitive values too
        inverse, n_tuples = problem.freq.inverse, len(problem.freq.counts)
        k_min = max((getattr(m, "k", 1) for m in problem.models), default=1)

        def ok_with_histograms(li, lw, ri, rw) -> bool:
            # (strict variant: every tuple lies whole in one half, so its own histogram is summed)
            sizes = np.array([lw.sum(), rw.sum()], dtype=np.int64)
            if sizes.min() < k_min:  # fails k before any histogram is built
                return False
            return not bool(problem.failing(
                sizes, counts=lambda dom: dom.from_tuple_sets(inverse, n_tuples, [li, ri])).any())
        return ok_with_histograms

    # without sensitive values the verdict depends on the two sizes alone: remembered per pair, since
    # the many small partitions near the leaves ask about the same few pairs again and again
    verdicts: dict[tuple[int, int], bool] = {}

    def ok_sizes(li, lw, ri, rw) -> bool:
        pair = (int(lw.sum()), int(rw.sum()))
        verdict = verdicts.get(pair)
        if verdict is None:
            verdict = verdicts[pair] = not bool(problem.failing(np.array(pair, dtype=np.int64)).any())
        return verdict
    return ok_sizes


class PersonCuts:
    """The allowable predicate when a run has a person id (definitions.md, "The unit counted: the person"): each side
    of a cut must satisfy the models counting distinct persons (sizes: the persons with a record in the side;
    sensitive counts: the persons with a record of each value in it). A person whose quasi-identifiers change
    between records may have records on both sides and counts on each.

    Against the all-records adversary a cut is also refused when a person with records in the cut partition would
    then share every partition it has records in with fewer than k persons. Only those persons' counts can change
    (a cut elsewhere leaves a person's partitions and the sets containing them alone) and a cut only lowers them,
    so checking each cut on the partitions of that moment keeps the final partitions exact: the starting one
    partition holds every person. The predicate keeps the current partition of every tuple for that check and
    learns of a cut when it accepts it: Mondrian's strict cut makes every cut its predicate accepts."""

    def __init__(self, problem: Problem, counter: PersonCounter):
        self.problem = problem
        self.counter = counter
        self.k = max((int(getattr(m, "k", 1)) for m in problem.models), default=1)
        n_tuples = len(problem.freq.counts)
        # the persons spread over several tuples ("movers"), their (tuple, person) pairs sorted by tuple and by person
        # (here: the counter's order is its own); the others are counted per tuple (counter.single)
        by_tuple = np.lexsort((counter.move_person, counter.move_tuple))
        self.tuple_person = counter.move_person[by_tuple]
        self.move_start = np.searchsorted(counter.move_tuple[by_tuple], np.arange(n_tuples + 1))
        by_person = np.lexsort((counter.move_tuple, counter.move_person))
        self.person_tuple = counter.move_tuple[by_person]
        self.person_start = np.searchsorted(counter.move_person[by_person], np.arange(counter.count + 1))
        self.all_records = counter.adversary == "all-records" and counter.k > 1
        self.region = np.zeros(n_tuples, dtype=np.int64)  # the partition each tuple is in now (all-records only)
        self.regions = 1
        self._rows = _TupleRows(problem.freq.inverse, n_tuples)
        self._pairs: dict[int, tuple[object, np.ndarray, np.ndarray]] = {}  # per domain: (person, value) per row

    def persons(self, tuples: np.ndarray) -> int:
        """Distinct persons with a record in these tuples."""
        movers = self.tuple_person[_gather(self.move_start, tuples)]
        return int(round(float(self.counter.single[tuples].sum()))) + len(np.unique(movers))

    def value_persons(self, dom, sets: list[np.ndarray]) -> np.ndarray:
        """len(sets) x values: the distinct persons of each set of tuples with a record of each value."""
        pv, value_of = self._person_values(dom)
        out = np.zeros((len(sets), dom.m), dtype=np.int64)
        for i, tuples in enumerate(sets):
            seen = np.unique(pv[self._rows.of(tuples)])
            out[i] = np.bincount(value_of[seen], minlength=dom.m)
        return out

    def _person_values(self, dom) -> tuple[np.ndarray, np.ndarray]:
        """Per row its (person, value) pair as one number, and each pair's value (cached per domain)."""
        hit = self._pairs.get(id(dom))
        if hit is None or hit[0] is not dom:
            V = max(dom.m, 1)
            uniq, pv = np.unique(self.counter.person * V + np.asarray(dom.codes), return_inverse=True)
            hit = self._pairs[id(dom)] = (dom, pv.reshape(-1).astype(np.int64), (uniq % V).astype(np.int64))
        return hit[1], hit[2]

    def __call__(self, li: np.ndarray, lw: np.ndarray, ri: np.ndarray, rw: np.ndarray) -> bool:
        if min(int(lw.sum()), int(rw.sum())) < self.k:  # each person has a record: fewer records, fewer persons
            return False
        sizes = np.array([self.persons(li), self.persons(ri)], dtype=np.int64)
        if sizes.min() < self.k:
            return False
        if self.problem.failing(sizes, counts=lambda dom: self.value_persons(dom, [li, ri])).any():
            return False
        if self.all_records and not self._shared_enough(li, ri):
            return False
        if self.all_records:  # the cut is made (see the class's docstring): the two sides become partitions
            self.region[li], self.region[ri] = self.regions, self.regions + 1
            self.regions += 2
        return True

    def _shared_enough(self, li: np.ndarray, ri: np.ndarray) -> bool:
        """After this cut, does every person with records in several partitions, one of them a side of the cut,
        share all its partitions with at least k persons (the persons that can share them all: the movers with a
        record in the cut partition)?"""
        touched = np.unique(self.tuple_person[_gather(self.move_start, np.concatenate([li, ri]))])
        if not len(touched):
            return True
        before = self.region[li[0]]
        self.region[li], self.region[ri] = self.regions, self.regions + 1  # as if cut, put back below
        try:
            at = _gather(self.person_start, touched)
            local = np.repeat(np.arange(len(touched)), self.person_start[touched + 1] - self.person_start[touched])
            cls = self.region[self.person_tuple[at]]
            pairs = np.unique(cls * len(touched) + local)
            return not persons_below_k(pairs // len(touched), pairs % len(touched), len(touched),
                                       self.counter.k).any()
        finally:
            self.region[li] = self.region[ri] = before


class _TupleRows:
    """The rows of each frequency-set tuple, for gathering the rows of a set of tuples."""

    def __init__(self, inverse: np.ndarray, n_tuples: int):
        self.order = np.argsort(inverse, kind="stable")
        self.start = np.searchsorted(np.asarray(inverse)[self.order], np.arange(n_tuples + 1))

    def of(self, tuples: np.ndarray) -> np.ndarray:
        return self.order[_gather(self.start, tuples)]


def _gather(start: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Positions of the items of ``keys`` in a layout where key i's items are start[i]..start[i+1]-1."""
    keys = np.asarray(keys, dtype=np.int64)
    lo = start[keys]
    lens = start[keys + 1] - lo
    ends = np.cumsum(lens)
    return np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64) + np.repeat(lo - (ends - lens), lens)


def balanced_subset(weights: np.ndarray) -> np.ndarray:
    """Mask of the children going left: the group whose total is closest to half (not above it)."""
    c = len(weights)
    take = np.zeros(c, dtype=bool)
    if c == 2:
        take[int(np.argmin(weights))] = True
        return take
    w = [int(x) for x in weights]
    total = sum(w)
    if c > 64 or total > 50_000_000:  # greedy: heaviest first to the lighter side
        left = right = 0
        for i in np.argsort(-weights, kind="stable"):
            if left + w[i] <= right + w[i] and left <= right:
                take[i] = True
                left += w[i]
            else:
                right += w[i]
        if take.all() or not take.any():
            take[:] = False
            take[int(np.argmin(weights))] = True
        return take
    reach = [1]
    for x in w:
        reach.append(reach[-1] | (reach[-1] << x))
    half = total // 2
    s = (reach[-1] & ((1 << (half + 1)) - 1)).bit_length() - 1
    for i in range(c - 1, -1, -1):
        if (reach[i] >> s) & 1:
            continue
        take[i] = True
        s -= w[i]
    if not take.any():
        take[int(np.argmin(weights))] = True
    return take


SUBSET_CHILDREN = 8  # up to this many children, balanced_subset for many regions at once by enumeration
_SUBSETS = (np.arange(1 << SUBSET_CHILDREN)[:, None] >> np.arange(SUBSET_CHILDREN)) & 1  # subset x child


def _balanced_subsets(weights: np.ndarray) -> np.ndarray:
    """balanced_subset of each row of ``weights`` (regions x SUBSET_CHILDREN, absent children weighing 0;
    totals within balanced_subset's exact range): of the subsets whose total is the largest not above half,
    the one balanced_subset's walk back through the reachable sums keeps - it leaves out the last child
    whenever it can, then the one before: the smallest subset number (bit i: child i); none: the lightest."""
    sums = weights @ _SUBSETS.T  # regions x subsets, subsets in ascending number
    half = weights.sum(1) // 2
    best = np.argmax(np.where(sums <= half[:, None], sums, -1), axis=1)  # the first maximum: the smallest
    take = _SUBSETS[best].astype(bool)
    empty = best == 0
    if empty.any():
        lightest = np.argmin(np.where(weights[empty] > 0, weights[empty], np.iinfo(np.int64).max), axis=1)
        take[np.flatnonzero(empty), lightest] = True
    return take


class Space:
    """Tuple-level matrices for fast partition statistics."""

    def __init__(self, space: QISpace, codes: np.ndarray):
        self.space = space
        self.codes = codes
        self.num = [j for j in range(space.q) if space.numeric[j]]
        self.cat = [j for j in range(space.q) if not space.numeric[j]]
        # a missing value sorts above every number (QISpace.sortable_values): a cut can set it apart
        self.vals = {j: space.sortable_values(j)[codes[:, j]] for j in self.num}
        self.V = np.stack([self.vals[j] for j in self.num], axis=1) if self.num else np.zeros((len(codes), 0))
        blocks, seg = [], []
        col = 0
        for j in self.cat:
            a = space.anc[j][codes[:, j]]
            blocks.append(a)
            seg.append(col)
            col += a.shape[1]
        self.G = np.concatenate(blocks, axis=1) if blocks else np.zeros((len(codes), 0), dtype=np.int32)
        self.seg = np.array(seg, dtype=np.int64)
        self.col_of = {j: s for j, s in zip(self.cat, seg)}
        self.share = {j: [space.hierarchies[j].leaf_counts(lv) / len(space.hierarchies[j].leaves)
                          for lv in range(space.hierarchies[j].level_count)] for j in self.cat}
        self.span = np.array([space.span[j] or 1.0 for j in self.num])
        # numeric QIs as dense ranks of their values (equal values, equal rank): a median cut counts the
        # weight per rank with bincount instead of sorting the partition's tuples
        self.rank = {j: np.unique(self.vals[j], return_inverse=True)[1].reshape(-1).astype(np.int64)
                     for j in self.num}
        # numbers and ancestor codes side by side (codes are small integers, exact in float64): one
        # gather and one min/max pass per partition for all QIs
        self.M = np.concatenate([self.V.astype(np.float64), self.G.astype(np.float64)], axis=1)
        self.n_num = len(self.num)

    def widths(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Normalized width per QI and, for categorical QIs, the LCA level (else 0)."""
        q = self.space.q
        width = np.zeros(q)
        lca = np.zeros(q, dtype=np.int64)
        m = self.M[idx]
        lo, hi = m.min(0), m.max(0)
        p = self.n_num
        if p:
            width[self.num] = (hi[:p] - lo[:p]) / self.span
        if self.cat:
            mn = lo[p:].astype(np.int64)
            varying = lo[p:] != hi[p:]
            levels = np.add.reduceat(varying, self.seg)
            for t, j in enumerate(self.cat):
                lv = int(levels[t])
                lca[j] = lv
                if lv:
                    width[j] = self.share[j][lv][mn[self.seg[t] + lv]]
        return width, lca


def cut_order(width: np.ndarray, factors: np.ndarray | None) -> np.ndarray:
    """The QIs to try cutting a partition along, in order: those of positive normalized ``width``, the widest
    first (the first on a tie); with weight ``factors``, the largest factor x width first, then the wider, then
    the first, so that QIs of weight 0 come last."""
    if factors is None:
        order = np.argsort(-width, kind="stable")
    else:
        order = np.lexsort((-width, -(width * factors)))
    return order[width[order] > 0]


def _phase_text(final: int, to_split: int) -> str:
    return f"Mondrian: {final} partition(s) final, {to_split} to split"


def partition(problem: Problem, relaxed: bool = False, allowable: Allowable | None = None):
    """Mondrian's partitions of the frequency set: (tuple index, partition, weight) per piece."""
    freq = problem.freq
    space = QISpace(problem.hierarchies, [problem.table.is_numeric(c) for c in problem.table.qi], problem.codes)
    sp = Space(space, freq.codes)
    k_min = max((getattr(m, "k", 1) for m in problem.models), default=1)
    factors = problem_factors(problem)
    if allowable is None and not relaxed and not problem.needs_classes:
        return _partition_levels(problem, sp, k_min, factors)
    allowable = allowable or default_allowable(problem)
    q = space.q
    cuts = np.zeros(q, dtype=np.int64)
    stack = [(np.arange(len(freq.counts)), freq.counts.astype(np.int64))]
    done_idx, done_w, done_len = [], [], []  # partition numbers are repeated once, at the end
    n_parts = 0
    processed = 0
    total_records = int(freq.counts.sum())
    finished_records = 0
    while stack:
        idx, w = stack.pop()
        total = int(w.sum())
        split = None
        if total >= 2 * k_min and (len(idx) > 1 or relaxed):
            width, lca = sp.widths(idx)
            for j in cut_order(width, factors):
                split = cut(sp, int(j), idx, w, lca, relaxed, allowable)
                if split is not None:
                    cuts[j] += 1
                    break
        if split is None:
            done_idx.append(idx)
            done_w.append(w)
            done_len.append(len(idx))
            n_parts += 1
            finished_records += total
        else:
            stack.extend(split)
        processed += 1
        # the phase text is built only when a heartbeat is due (called from this iteration)
        problem.heartbeat(finished_records / max(total_records, 1), partial(_phase_text, n_parts, len(stack)))
    if not done_idx:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), cuts, 0
    done_part = np.repeat(np.arange(n_parts, dtype=np.int64), done_len)
    return np.concatenate(done_idx), done_part, np.concatenate(done_w), cuts, n_parts

def _size_verdicts(problem: Problem) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """default_allowable's verdict on (left size, right size) pairs, many at a time (models on sizes only)."""
    if not any(getattr(m, "whole_table", False) for m in problem.models):
        # every model judges each class by itself: all the sides in one call
        def each(left: np.ndarray, right: np.ndarray) -> np.ndarray:
            bad = problem.failing(np.stack([left, right], axis=1).reshape(-1))
            return ~(bad[0::2] | bad[1::2])
        return each
    verdicts: dict[tuple[int, int], bool] = {}  # a model on the whole table: each pair as the loop asks it

    def ok(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        span = int(right.max()) + 1 if len(right) else 1
        pairs, inv = np.unique(left * span + right, return_inverse=True)  # one integer per pair
        out = np.empty(len(pairs), dtype=bool)
        for i, (a, b) in enumerate(zip((pairs // span).tolist(), (pairs % span).tolist())):
            verdict = verdicts.get((a, b))
            if verdict is None:
                verdict = verdicts[(a, b)] = not bool(problem.failing(np.array((a, b), dtype=np.int64)).any())
            out[i] = verdict
        return out[inv.reshape(-1)]
    return ok


def _first_per_segment(positions: np.ndarray, segment: np.ndarray) -> np.ndarray:
    """Of ascending ``positions`` labelled by ascending ``segment``, the first one of each segment."""
    head = np.ones(len(positions), dtype=bool)
    head[1:] = segment[1:] != segment[:-1]
    return positions[head]


def _partition_levels(problem: Problem, sp: Space, k_min: int, factors: np.ndarray | None = None):
    """partition() for the strict variant with models on class sizes alone, all the regions of one depth
    of the recursion at a time (segmented numpy operations instead of one Python step per region).

    Each region is cut exactly as the loop does (widest normalized range first, the same median and
    hierarchy splits and allowable verdicts): a region's cut depends on the region alone, so the order
    in which regions are cut changes nothing but the partitions' numbers, which are then given in the
    loop's order (depth first, the right half of each cut first)."""
    freq = problem.freq
    space = sp.space
    q = space.q
    counts = freq.counts.astype(np.int64)
    n_tuples = len(counts)
    ok = _size_verdicts(problem)
    cuts = np.zeros(q, dtype=np.int64)
    p = sp.n_num
    # per QI, its column in KM: numbers as dense ranks, categories as ancestor codes (+ the level's offset)
    blocks = [sp.rank[j].reshape(-1, 1) for j in sp.num] + ([sp.G.astype(np.int64)] if sp.cat else [])
    KM = np.concatenate(blocks, axis=1) if blocks else np.zeros((n_tuples, 0), dtype=np.int64)
    key_span = int(KM.max()) + 1 if KM.size else 1
    base_col = np.zeros(q, dtype=np.int64)
    is_num = np.zeros(q, dtype=bool)
    for t, j in enumerate(sp.num):
        base_col[j] = t
        is_num[j] = True
    for j in sp.cat:
        base_col[j] = p + sp.col_of[j] - 1  # + the LCA level: the children one level below it
    # share of the leaves under each ancestor, per level, as one padded matrix per categorical QI
    share = {}
    for j in sp.cat:
        per_level = sp.share[j]
        mat = np.zeros((len(per_level), max(len(s) for s in per_level)))
        for level, s in enumerate(per_level):
            mat[level, :len(s)] = s
        share[j] = mat
    block_len = {j: space.anc[j].shape[1] for j in sp.cat}
    # the widths' minima and maxima: only over the columns that vary in the table (not the hierarchies'
    # roots), one row per column (a region's values of a column side by side: faster segmented reductions)
    m_low, m_high = (sp.M.min(0), sp.M.max(0)) if n_tuples else (np.zeros(sp.M.shape[1]),) * 2
    live = np.flatnonzero(m_low != m_high)
    live_t = np.ascontiguousarray(sp.M[:, live].T)

    # the regions of the current depth: tuples grouped by region (contiguous), the region's tree node
    tt = np.arange(n_tuples, dtype=np.int64)
    starts = np.zeros(1, dtype=np.int64)
    node = np.zeros(1, dtype=np.int64)
    n_nodes = 1
    final_nodes: list[np.ndarray] = []
    final_tuples: list[np.ndarray] = []
    final_lens: list[np.ndarray] = []
    splits: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per depth: (parent, left, right) nodes
    total_records = int(counts.sum())
    finished_records = 0
    n_final = 0
    while len(starts):
        n_regions = len(starts)
        lens = np.diff(np.append(starts, len(tt)))
        reg = np.repeat(np.arange(n_regions), lens)
        wt = counts[tt]
        W = np.add.reduceat(wt, starts)
        pending = np.flatnonzero((W >= 2 * k_min) & (lens > 1))
        side = np.zeros(len(tt), dtype=np.int8)  # 0: final, 1: left, 2: right
        region_split = np.zeros(n_regions, dtype=bool)
        if len(pending):
            mark = np.zeros(n_regions, dtype=bool)
            mark[pending] = True
            mt = live_t[:, tt[mark[reg]]]
            seg_starts = np.concatenate([[0], np.cumsum(lens[pending])[:-1]])
            lo = np.repeat(m_low[None, :], len(pending), axis=0)
            hi = np.repeat(m_high[None, :], len(pending), axis=0)
            lo[:, live] = np.minimum.reduceat(mt, seg_starts, axis=1).T
            hi[:, live] = np.maximum.reduceat(mt, seg_starts, axis=1).T
            width = np.zeros((len(pending), q))
            lca = np.zeros((len(pending), q), dtype=np.int64)
            if p:
                width[:, sp.num] = (hi[:, :p] - lo[:, :p]) / sp.span
            if sp.cat:
                varying = lo[:, p:] != hi[:, p:]
                levels = np.add.reduceat(varying, sp.seg, axis=1)
                rows = np.arange(len(pending))
                for t, j in enumerate(sp.cat):
                    lv = levels[:, t].astype(np.int64)
                    lca[:, j] = lv
                    code = lo[rows, p + sp.seg[t] + np.minimum(lv, block_len[j] - 1)].astype(np.int64)
                    width[:, j] = np.where(lv > 0, share[j][lv, code], 0.0)
            if factors is None:
                order = np.argsort(-width, axis=1, kind="stable")
            else:  # cut_order's weighted order, row by row
                order = np.lexsort((-width, -(width * factors)), axis=1)
            trying = np.arange(len(pending))  # rows of `pending` still without a cut
            for t in range(q):
                dims = order[trying, t]
                trying = trying[width[trying, dims] > 0]
                dims = order[trying, t]
                if not len(trying):
                    break
                regions = pending[trying]
                left_pos, left_local, lw, made = _cut_regions(regions, dims, lca[trying, dims], starts, lens, tt, wt, KM,
                                                     base_col, is_num, key_span)
                rw = W[regions] - lw
                made &= ok(lw, rw)
                if made.any():
                    done = regions[made]
                    region_split[done] = True
                    np.add.at(cuts, dims[made], 1)
                    mark = np.zeros(n_regions, dtype=bool)
                    mark[done] = True
                    side[mark[reg]] = 2
                    side[left_pos[made[left_local]]] = 1
                trying = trying[~made]
        final = ~region_split
        fin = np.flatnonzero(final)
        if len(fin):
            fin_mask = final[reg]
            final_nodes.append(node[fin])
            final_tuples.append(tt[fin_mask])
            final_lens.append(lens[fin])
            if problem.progress is not None:  # a heartbeat per partition made final, as the loop gives
                to_split = int(region_split.sum())
                for i, records in enumerate(np.cumsum(W[fin]).tolist(), start=1):
                    last = problem.last_report
                    problem.heartbeat((finished_records + records) / max(total_records, 1),
                                      partial(_phase_text, n_final + i, to_split))
                    if problem.last_report == last:  # not due: nor would the next ones be, microseconds later
                        break
            n_final += len(fin)
            finished_records += int(W[fin].sum())
        done = np.flatnonzero(region_split)
        if not len(done):
            break
        # the next depth: each cut region's left then right half; new tree nodes
        parent = node[done]
        left_node = n_nodes + 2 * np.arange(len(done))
        splits.append((parent, left_node, left_node + 1))
        n_nodes += 2 * len(done)
        child = np.full(n_regions, -1, dtype=np.int64)
        child[done] = 2 * np.arange(len(done))
        keep = side > 0
        label = child[reg[keep]] + (side[keep] == 2)
        order_next = np.argsort(label, kind="stable")  # nearly sorted already: timsort runs
        tt = tt[keep][order_next]
        label = label[order_next]
        starts = np.flatnonzero(np.r_[True, label[1:] != label[:-1]])
        node = n_nodes - 2 * len(done) + label[starts]
        problem.heartbeat(finished_records / max(total_records, 1), partial(_phase_text, n_final, len(starts)))
    if not final_nodes:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), cuts, 0
    # the loop's numbering: depth first, the right half of each cut first
    leaves = np.zeros(n_nodes, dtype=np.int64)
    leaf_nodes = np.concatenate(final_nodes)
    leaves[leaf_nodes] = 1
    for parent, left, right in reversed(splits):
        leaves[parent] = leaves[left] + leaves[right]
    offset = np.zeros(n_nodes, dtype=np.int64)
    for parent, left, right in splits:
        offset[right] = offset[parent]
        offset[left] = offset[parent] + leaves[right]
    part = np.repeat(offset[leaf_nodes], np.concatenate(final_lens))
    tup = np.concatenate(final_tuples)
    order = np.lexsort((tup, part))
    tup, part = tup[order], part[order]
    return tup, part, counts[tup], cuts, n_final


def _cut_regions(regions, dims, lca, starts, lens, tt, wt, KM, base_col, is_num, key_span):
    """cut (strict) of each region along its QI: (positions in ``tt`` of the left halves' tuples, their
    region (index into ``regions``), left weight per region, has a cut per region); the allowable verdict
    is left to the caller."""
    r = len(regions)
    rl = lens[regions]
    local = np.repeat(np.arange(r), rl)
    # positions in tt of the regions' tuples
    pos = np.repeat(starts[regions] - np.concatenate([[0], np.cumsum(rl)[:-1]]), rl) + np.arange(int(rl.sum()))
    col = base_col[dims] + np.where(is_num[dims], 0, lca)
    key = KM[tt[pos], col[local]]
    order = np.argsort(local * key_span + key, kind="stable")  # sorted by region already: timsort runs
    pos, local, key = pos[order], local[order], key[order]
    w = wt[pos]
    # runs of equal (region, key): the distinct values (numbers) or children (categories) per region
    head = np.ones(len(key), dtype=bool)
    head[1:] = (key[1:] != key[:-1]) | (local[1:] != local[:-1])
    run_start = np.flatnonzero(head)
    run_of = np.cumsum(head) - 1
    run_w = np.add.reduceat(w, run_start)
    run_reg = local[run_start]
    reg_first_run = np.searchsorted(run_reg, np.arange(r))
    n_runs = np.diff(np.append(reg_first_run, len(run_start)))
    made = n_runs > 1
    total = np.add.reduceat(w, np.concatenate([[0], np.cumsum(rl)[:-1]]))
    left_run = np.zeros(len(run_start), dtype=bool)
    num_r = is_num[dims]
    # numbers: the cut after the distinct value whose cumulated weight is closest to half (the first such)
    cum = np.cumsum(run_w)
    cum -= np.repeat(cum[reg_first_run] - run_w[reg_first_run], n_runs)
    last = reg_first_run + n_runs - 1
    gap = np.abs(cum * 2 - np.repeat(total, n_runs))
    gap[last] = np.iinfo(np.int64).max
    best_gap = np.minimum.reduceat(gap, reg_first_run)
    hits = np.flatnonzero(gap == np.repeat(best_gap, n_runs))
    best = _first_per_segment(hits, run_reg[hits])  # one per region (every region has a last run)
    upto = np.repeat(best, n_runs)
    left_run_num = np.arange(len(run_start)) <= upto
    # categories: balanced_subset of the children's weights (two children: the lighter, the first on a tie)
    left_run_cat = np.zeros(len(run_start), dtype=bool)
    two = ~num_r & (n_runs == 2)
    if two.any():
        f = reg_first_run[two]
        lighter = np.where(run_w[f + 1] < run_w[f], f + 1, f)
        left_run_cat[lighter] = True
    few = ~num_r & (n_runs > 2) & (n_runs <= SUBSET_CHILDREN) & (total <= 50_000_000)
    if few.any():
        f, c = reg_first_run[few], n_runs[few]
        slot = np.arange(SUBSET_CHILDREN)
        present = slot < c[:, None]
        at = np.where(present, f[:, None] + slot, 0)
        left_run_cat[at[present]] = _balanced_subsets(np.where(present, run_w[at], 0))[present]
    for i in np.flatnonzero(~num_r & (n_runs > 2) & ~few):
        a = reg_first_run[i]
        left_run_cat[a:a + n_runs[i]] = balanced_subset(run_w[a:a + n_runs[i]])
    left_run = np.where(np.repeat(num_r, n_runs), left_run_num, left_run_cat)
    left = left_run[run_of]
    lw = np.bincount(local[left], weights=w[left], minlength=r).astype(np.int64)
    return pos[left], local[left], lw, made



def cut(sp: Space, j: int, idx, w, lca, relaxed, allowable):
    if j in sp.col_of:  # along the hierarchy, one level below the LCA
        child = sp.G[idx, sp.col_of[j] + int(lca[j]) - 1]
        low, high = int(child.min()), int(child.max())
        if high == low:
            return None
        if high - low < 4 * len(child) + 256:  # codes in a small range: count them, no sort
            shifted = child - low
            per_code = np.bincount(shifted, weights=w)
            # the children holding a tuple (a weight may be 0: a tuple without research records, research.py)
            present = np.bincount(shifted) > 0
            inv = (np.cumsum(present) - 1)[shifted]
            weights = per_code[present].astype(np.int64)
        else:
            _, inv = np.unique(child, return_inverse=True)
            inv = inv.reshape(-1)
            weights = np.bincount(inv, weights=w).astype(np.int64)
        left = balanced_subset(weights)[inv]
    elif not relaxed:
        # the strict median cut, by counting: weight per distinct value (dense rank), cumulated; the cut
        # after the distinct value whose cumulated weight is closest to half (the first such), as the
        # sorted search below would choose
        r = sp.rank[j][idx]
        low, high = int(r.min()), int(r.max())
        if high == low:
            return None
        if high - low < 4 * len(r) + 256:
            per_rank = np.bincount(r - low, weights=w)
            ranks = np.flatnonzero(np.bincount(r - low) > 0)  # the values present (a weight may be 0)
            cum = np.cumsum(per_rank[ranks])
            total = int(cum[-1])
            best = int(np.argmin(np.abs(cum[:-1] * 2 - total)))
            left = r <= ranks[best] + low
        else:
            order = np.argsort(r, kind="stable")
            rs = r[order]
            cum = np.cumsum(w[order])
            total = int(cum[-1])
            change = np.flatnonzero(rs[1:] != rs[:-1])
            best = int(change[np.argmin(np.abs(cum[change] * 2 - total))])
            left = r <= rs[best]
    else:
        v = sp.vals[j][idx]
        order = np.argsort(v, kind="stable")
        vs, ws = v[order], w[order]
        cum = np.cumsum(ws)
        total = int(cum[-1])
        if relaxed:
            half = total // 2
            pos = int(np.searchsorted(cum, half, side="left"))  # item holding the half-th record
            before = int(cum[pos - 1]) if pos else 0
            lw = ws.copy()
            lw[pos + 1:] = 0
            lw[pos] = half - before
            rw = ws - lw
            li, ri = idx[order][lw > 0], idx[order][rw > 0]
            lw, rw = lw[lw > 0], rw[rw > 0]
            if not (len(lw) and len(rw)) or not allowable(li, lw, ri, rw):
                return None
            return [(li, lw), (ri, rw)]
        change = np.flatnonzero(vs[1:] != vs[:-1])  # cut after position `change`
        if not len(change):
            return None
        best = change[np.argmin(np.abs(cum[change] * 2 - total))]
        left = np.zeros(len(idx), dtype=bool)
        left[order[: best + 1]] = True
    li, lw, ri, rw = idx[left], w[left], idx[~left], w[~left]
    if not allowable(li, lw, ri, rw):
        return None
    return [(li, lw), (ri, rw)]


def _tuple_cells(space: QISpace, freq, tuple_group: np.ndarray, failing: np.ndarray) -> list[np.ndarray]:
    """cells_from_groups for partitions of whole tuples: the labels from the distinct tuples (in tuple
    order within each group, the items cells_from_groups takes), then one gather per QI from the rows'
    tuples; a suppressed partition's rows are '*'."""
    kept = ~failing[tuple_group]
    items = np.flatnonzero(kept)
    labels = group_labels(space, freq.codes[items], tuple_group[items], len(failing))
    cells = []
    for lab in labels:
        lab = np.append(lab, ROOT)  # position -1: a suppressed tuple
        per_tuple = lab[np.where(kept, tuple_group, -1)]
        cells.append(per_tuple[freq.inverse])
    return cells


def mondrian(problem: Problem) -> CellRecoding:
    relaxed = problem.options.get("variant", "strict") == "relaxed"
    if relaxed and problem.research is not None:
        raise InputError("Mondrian's relaxed variant splits records of one QI tuple between partitions by their "
                         "count, which with a research subset counts research records only; use the strict "
                         "variant")
    if relaxed and problem.needs_classes:
        raise InputError("Mondrian's relaxed variant splits records of one QI tuple between partitions, so "
                         "it cannot check models on sensitive values; use the strict variant")
    if relaxed and problem.persons is not None:
        raise InputError(f"Mondrian's relaxed variant splits records of one QI tuple between partitions by their "
                         f"count, not by person: with the person id {problem.table.person!r} use the strict variant")
    freq = problem.freq
    n = problem.table.n
    problem.report(0.0, "Mondrian: partitioning")
    allowable = None if problem.persons is None else PersonCuts(problem, problem.persons)
    tup, part, weight, cuts, n_parts = partition(problem, relaxed, allowable)
    if relaxed:
        # rows of each tuple go, in order, to the partitions holding pieces of it
        order = np.lexsort((part, tup))
        rows_by_tuple = np.argsort(freq.inverse, kind="stable")
        group = np.empty(n, dtype=np.int64)
        group[rows_by_tuple] = np.repeat(part[order], weight[order])
    else:  # every tuple whole in one partition
        tuple_group = np.empty(len(freq.counts), dtype=np.int64)
        tuple_group[tup] = part
        group = tuple_group[freq.inverse]
    if problem.persons is None:
        sizes = problem.row_sizes(group, n_parts)  # research records with a population table
        failing = problem.failing(sizes, row_class=group)
        suppressed = failing[group]
        cost = problem.suppressed_records(suppressed)
    else:  # the persons' fixpoint: a person with a record in a failing partition is suppressed with all its records
        judged = problem.persons.judge(tuple_group, n_parts, problem.failing)
        failing, cost = judged.failing, judged.cost
        suppressed = problem.persons.suppressed_rows(tuple_group, judged)
    if cost > problem.budget:
        unit = "record" if problem.persons is None else "person"
        raise UnsatisfiableError(
            f"{cost} {unit}(s) cannot be grouped into classes that satisfy the privacy model (the table is too small "
            f"for it), more than the suppression limit allows ({problem.budget})")
    group[suppressed] = -1
    space = QISpace(problem.hierarchies, [problem.table.is_numeric(c) for c in problem.table.qi], problem.codes)
    if relaxed:
        cells = cells_from_groups(space, problem.codes, group, None)
    else:
        cells = _tuple_cells(space, freq, tuple_group, failing)
    names = problem.table.qi
    info: dict[str, object] = {"partitions": int(n_parts), "variant": "relaxed" if relaxed else "strict",
            "cuts": {names[j]: int(c) for j, c in enumerate(cuts)}}
    factors = problem_factors(problem)
    if factors is not None:  # (an unweighted run's info is as before)
        info["weight_factors"] = {names[j]: float(f) for j, f in enumerate(factors)}
    problem.report(1.0, f"Mondrian done: {n_parts} partition(s)")
    return CellRecoding(cells, suppressed, "multidimensional", group, [], [], info)


register(
    AlgorithmInfo(
        name="mondrian",
        label="Mondrian",
        summary="Multidimensional partitioning: split the records at the median of the widest QI (along the "
        "hierarchy for categories) while both halves satisfy the privacy model; numbers become ranges "
        "[lo-hi], categories their lowest common ancestor (LeFevre et al. 2006).",
        run=mondrian,
        recoding="multidimensional",
        options=(Parameter("variant", str, "strict", "strict: a value never goes to both sides of a cut; "
                           "relaxed: records with the median value may be split between the two sides",
                           choices=("strict", "relaxed")), WEIGHTS),
        reference="K. LeFevre, D. J. DeWitt, R. Ramakrishnan, Mondrian multidimensional k-anonymity, ICDE 2006",
        cluster=True,
        person_level=True,  # in memory (PersonCuts); a cluster run with a person id is refused (run/pipeline.py)
    )
)
