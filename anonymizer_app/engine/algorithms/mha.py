"""MHA (Amiri 2020, seed 004): privacy against background knowledge with k-anonymity and enhanced β-likeness.

The privacy model has three parameters: within an equivalence class the Jensen-Shannon divergence
(base-2 logarithm, so 0..1) between any two owners' background-knowledge (BK) distributions is at
most ``l``; every class holds at least ``k`` records; every class satisfies enhanced β-likeness,
q_i <= f(p_i) = (1 + min(β, -ln p_i))·p_i (p_i: share of value i among all N records, q_i: in the class).

Background knowledge, P(sensitive | QI), estimated from the data
    The paper takes the attacker's BK from Riboni et al. 2012 (a model learnt from data). Here, for a
    distinct QI tuple q, BK(q) is the sensitive distribution of the records in q's *neighbourhood*,
    the records whose QI values share q's ancestor one level up in every QI hierarchy (level
    min(L, height), L = 1), shrunk toward the table's distribution P_T by a Dirichlet prior of
    strength α = m pseudo-records (m = number of sensitive values):
        BK(q) = (counts_G(q) + α·P_T) / (|G(q)| + α).
    Why: the per-tuple empirical distribution is a point mass for the many tuples seen once (every
    pair of unique tuples would sit at divergence ~1 and nothing would cluster); the hierarchy one
    level up is the product's own notion of "similar individuals", so the neighbourhood is a kernel
    estimate with the hierarchy as kernel, and the prior keeps small neighbourhoods from producing
    extreme beliefs (an m-estimate). Tuples with equal BK are one clustering unit. If more than
    ``MAX_UNITS`` distinct distributions come out, L is raised (coarser neighbourhoods) until they fit,
    and the search info says so (``bk_level``).

Algorithm
    1. Complete-linkage agglomerative clustering of the units by JS divergence (nearest-neighbour
       chain, exact), cut at ``l``: in every cluster every pair of BK distributions differs by at most l
       (``info["max_js_within_clusters"]`` rechecks it). Clusters below k records are not published
       (suppressed).
    2. β-k-Utility per cluster:
       - β-partition (after Cao & Karras 2012): values by ascending table share; a bucket takes the next
         value while its share of the cluster stays <= f(smallest table share in the bucket). Since f
         is increasing, any class whose bucket shares obey this satisfies enhanced β-likeness for
         every value. A value whose share of the cluster alone exceeds f(p) cannot be published in
         full: the fewest records of it are suppressed ("β surplus") so the rest fits.
       - β-split (:func:`beta_split`, a pure function): the root is the bucket counts; a node splits
         into floor/ceil halves of every count while both halves hold >= k records and keep every
         bucket share <= its bound; top-down, breadth first; the leaves are the class compositions.
       - Record selection: records sorted by the Hilbert index of their QI point (numeric QIs scaled
         to [0, 1], categories at their depth-first position in the hierarchy) per bucket; per leaf, a
         random record (``seed`` option) of the first bucket it draws from, then, by binary search on
         the Hilbert keys, the records nearest to it in every bucket, as many as the leaf asks.
    3. Refinement: each record moves to the nearest class of its cluster (seed-003 record/centroid
       distance) when that is nearer than its own class and neither k nor β-likeness breaks in the
       two classes; passes repeat until nothing moves (at most ``REFINE_PASSES``). With attribute weights
       (the ``weights`` option, issue 30) this distance is the weighted one of k-member and OKA
       (search/attribute_weights.py); the grouping of steps 1-2 uses no per-QI loss (JS divergence of
       the sensitive distributions, β-likeness, the Hilbert order as a locality index) and takes none.
    4. Published classes: every class's QIs are generalized to its range / lowest common ancestor
       (local recoding). Classes whose labels coincide are ONE class in the output (rows with identical
       published QI tuples), and classes of different BK clusters can coincide, so the bound is
       enforced on the published classes, not on the algorithm's (:func:`separate_published`): a
       merge is kept only when the merged class still has every pair of BK distributions within l
       (k and enhanced β-likeness always survive a merge: sizes add up, and the shares of a union are
       weighted means of shares that each respect f(p)). Otherwise the classes under that label are
       split by complete linkage into compatible sets; the set with the most records keeps the label,
       every other set is generalized further, one QI one hierarchy level at a time (the cheapest in
       leaves first), until its label tuple is unused or names a class it may merge with; a set that
       reaches the top without that is suppressed (counted against the suppression limit).
       ``info["max_js_published"]`` is the worst pairwise divergence within a published class, and
       :func:`check_published`, registered for the publishing gate, recomputes it from the input.

Figures in ``info``: max_js_within_clusters, max_js_published, published_classes, published_merged
(published classes holding several algorithm classes), published_relabelled (sets generalized further
to stay apart), suppressed_published_conflicts (records suppressed because they could not), and the
metrics GCP = sum over records of the record NCP (mean over QIs; suppressed records 1),
and record linkage RL = Σ_r P_RL(r) / N with P_RL(r) = 1/|E| when r's nearest class (its original
QI values against the class centroids) is its own class E, else 0 (suppressed records 0). Above 256
classes the nearest class is looked up with the engine's space-filling-curve index (approximate).

Options: ``js l`` (the JS threshold l; flag ``--js-l``), ``mha beta`` (β when the run has no β-likeness
model; flag ``--mha-beta``), ``seed``. The names avoid the CLI's model flags ``--l``/``--beta``. When
the run has a β-likeness model its β and column are used (MHA enforces the enhanced bound, which
implies the basic one); otherwise an enhanced β-likeness model on the table's sensitive column is
added to the run's models so the result reports it and ``verify()`` rechecks it.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Callable, Sequence

import numpy as np

from ..errors import InputError, UnsatisfiableError, VerificationError
from ..measure.metrics import cell_loss_figures
from ..model.hierarchy import ROOT
from ..privacy import BetaLikeness, Parameter
from ..search.attribute_weights import WEIGHTS, problem_factors
from ..search.clustering import SEED, k_of, space_of
from ..search.distance import Centroids, Encoded, nearest
from ..search.recoding import cells_from_groups
from .base import AlgorithmInfo, CellRecoding, Problem, PublishedClasses, register

EPS = 1e-9
MAX_UNITS = 3000
REFINE_PASSES = 5

JS_L = Parameter("js l", float, 0.5, "MHA's l: largest Jensen-Shannon divergence (base 2, 0..1) between the "
                 "background-knowledge distributions of two records of one class", minimum=0.0, maximum=1.0)
MHA_BETA = Parameter("mha beta", float, 1.0, "MHA's β when the run has no β-likeness model: enhanced "
                     "β-likeness, q <= (1 + min(β, -ln p))·p", minimum=0.0)


# -- formulas --------------------------------------------------------------------------------------
def enhanced_bound(p: np.ndarray | float, beta: float) -> np.ndarray:
    """f(p) = (1 + min(β, -ln p))·p (0 for p = 0)."""
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore"):
        gain = np.minimum(beta, -np.log(np.where(p > 0, p, 1.0)))
    return np.where(p > 0, (1 + gain) * p, 0.0)


def _entropy2(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0).sum(axis=-1)


def js_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen-Shannon divergence with base-2 logarithms (0..1), broadcast over leading axes."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    return np.maximum(_entropy2((p + q) / 2) - (_entropy2(p) + _entropy2(q)) / 2, 0.0)


def js_matrix(dist: np.ndarray, block: int = 256) -> np.ndarray:
    """Pairwise JS divergences of the rows of ``dist``."""
    n = len(dist)
    out = np.empty((n, n))
    h = _entropy2(dist)
    for s in range(0, n, block):
        mid = (dist[s:s + block, None, :] + dist[None, :, :]) / 2
        out[s:s + block] = np.maximum(_entropy2(mid) - (h[s:s + block, None] + h[None, :]) / 2, 0.0)
    return out


def complete_linkage(D: np.ndarray, threshold: float) -> np.ndarray:
    """Complete-linkage agglomerative clustering cut at ``threshold`` (nearest-neighbour chain).

    Clusters merge only at a linkage distance (largest pairwise distance) <= threshold, so within a
    returned cluster every pair is within it. Returns a cluster label per item (0..C-1)."""
    n = len(D)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    D = np.array(D, dtype=float)
    np.fill_diagonal(D, np.inf)
    active = np.ones(n, dtype=bool)
    owner = np.arange(n)
    chain: list[int] = []
    n_active = n
    while n_active > 1:
        if not chain:
            chain.append(int(np.flatnonzero(active)[0]))
        a = chain[-1]
        row = np.where(active, D[a], np.inf)
        b = int(np.argmin(row))
        d = row[b]
        if not d <= threshold + EPS:  # a's nearest is too far: with max-linkage it stays so forever
            active[a] = False
            n_active -= 1
            chain.pop()
            continue
        if len(chain) > 1 and row[chain[-2]] <= d:
            b = chain[-2]
        if len(chain) > 1 and b == chain[-2]:
            chain.pop()
            chain.pop()
            merged = np.maximum(D[a], D[b])
            D[a, :] = merged
            D[:, a] = merged
            D[a, a] = np.inf
            active[b] = False
            n_active -= 1
            owner[owner == b] = a
        else:
            chain.append(b)
    _, labels = np.unique(owner, return_inverse=True)
    return labels.astype(np.int64)


def beta_partition(counts: np.ndarray, p: np.ndarray, beta: float) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """β-partition of one cluster's sensitive values.

    ``counts``: the cluster's records per value; ``p``: the table's shares. Returns (buckets: arrays of
    value indices, bucket bounds f(min p), kept counts per value after removing the β surplus)."""
    f = enhanced_bound(p, beta)
    kept = np.asarray(counts, dtype=np.int64).copy()
    while True:
        total = kept.sum()
        if total == 0:
            break
        over = kept / total > f + EPS
        if not over.any():
            break
        v = int(np.argmax(np.where(over, kept / total - f, -np.inf)))
        rest = total - kept[v]
        kept[v] = int(math.floor(f[v] * rest / (1 - f[v]) + EPS)) if f[v] < 1 else kept[v]
    present = np.flatnonzero(kept > 0)
    order = present[np.lexsort((present, p[present]))]
    total = kept.sum()
    buckets: list[np.ndarray] = []
    bounds: list[float] = []
    cur: list[int] = []
    for v in order:
        if cur and (kept[cur].sum() + kept[v]) / total > f[cur[0]] + EPS:
            buckets.append(np.array(cur))
            bounds.append(f[cur[0]])
            cur = []
        cur.append(int(v))
    if cur:
        buckets.append(np.array(cur))
        bounds.append(f[cur[0]])
    return buckets, np.array(bounds, dtype=float), kept


def beta_split(root: Sequence[int], bounds: Sequence[float], k: int) -> list[list[int]]:
    """β-split of seed 004: split the node of bucket counts top-down (breadth first) into
    floor(c/2) / c - floor(c/2) halves while both halves hold >= k records and every bucket's share of
    each half is <= its bound; returns the leaves (class compositions) in breadth-first order."""
    def eligible(node: list[int]) -> bool:
        size = sum(node)
        return size >= k and all(c <= b * size + EPS for c, b in zip(node, bounds))

    leaves: list[list[int]] = []
    queue = deque([list(int(c) for c in root)])
    while queue:
        node = queue.popleft()
        left = [c // 2 for c in node]
        right = [c - c // 2 for c in node]
        if eligible(left) and eligible(right):
            queue.append(left)
            queue.append(right)
        else:
            leaves.append(node)
    return leaves


def hilbert_keys(points: np.ndarray) -> np.ndarray:
    """Hilbert index (Skilling 2004) of points in [0, 1]^d, as int64."""
    n, d = points.shape
    if d == 0 or n == 0:
        return np.zeros(n, dtype=np.int64)
    bits = max(1, min(16, 62 // d))
    scale = (1 << bits) - 1
    X = [np.clip(np.rint(points[:, j] * scale), 0, scale).astype(np.int64) for j in range(d)]
    M = 1 << (bits - 1)
    Q = M
    while Q > 1:
        P = Q - 1
        for i in range(d):
            hit = (X[i] & Q) != 0
            X[0] = np.where(hit, X[0] ^ P, X[0])
            t = np.where(hit, 0, (X[0] ^ X[i]) & P)
            X[0] ^= t
            X[i] ^= t
        Q >>= 1
    for i in range(1, d):
        X[i] ^= X[i - 1]
    t = np.zeros(n, dtype=np.int64)
    Q = M
    while Q > 1:
        t = np.where((X[d - 1] & Q) != 0, t ^ (Q - 1), t)
        Q >>= 1
    for i in range(d):
        X[i] ^= t
    key = np.zeros(n, dtype=np.int64)
    for b in range(bits - 1, -1, -1):
        for i in range(d):
            key = (key << 1) | ((X[i] >> b) & 1)
    return key


# -- steps -----------------------------------------------------------------------------------------
def background_knowledge(problem: Problem, codes_v: np.ndarray, p: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray]:
    """(BK unit of every distinct QI tuple, the units' distributions) with neighbourhoods at ``level``."""
    return bk_units(problem.hierarchies, problem.freq, codes_v, p, level)


def bk_units(hierarchies: Sequence, freq, codes_v: np.ndarray, p: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`background_knowledge` from the QI hierarchies (QI order) and the frequency set."""
    m = len(p)
    cols = []
    for j, h in enumerate(hierarchies):
        lv = min(level, h.height)
        cols.append(np.asarray(h.maps[lv])[freq.codes[:, j]].astype(np.int64))
    hood_of_tuple = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)[1].reshape(-1)
    n_hood = int(hood_of_tuple.max()) + 1
    hood_of_row = hood_of_tuple[freq.inverse]
    counts = np.bincount(hood_of_row * m + codes_v, minlength=n_hood * m).reshape(n_hood, m).astype(float)
    alpha = float(m)
    bk = (counts + alpha * p[None, :]) / (counts.sum(axis=1, keepdims=True) + alpha)
    uniq, unit_of_hood = np.unique(np.round(bk, 12), axis=0, return_inverse=True)
    return unit_of_hood.reshape(-1)[hood_of_tuple], uniq


def choose_bk(hierarchies: Sequence, freq, codes_v: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The BK units at level 1, raised (coarser neighbourhoods) until at most MAX_UNITS distributions
    remain: (unit of every distinct QI tuple, the units' distributions, the level)."""
    level = 1
    max_height = max((h.height for h in hierarchies), default=0)
    while True:
        unit_of_tuple, bk = bk_units(hierarchies, freq, codes_v, p, level)
        if len(bk) <= MAX_UNITS or level >= max_height:
            return unit_of_tuple, bk, level
        level += 1


def _take_nearest(keys: np.ndarray, key0: int, a: int) -> np.ndarray:
    """Positions of the ``a`` entries of sorted ``keys`` nearest to key0 (a contiguous run)."""
    pos = int(np.searchsorted(keys, key0))
    lo, hi = max(0, pos - a), min(len(keys), pos + a)
    cand = np.arange(lo, hi)
    order = np.argsort(np.abs(keys[cand] - key0), kind="stable")[:a]
    return np.sort(cand[order])


def select_records(rows_by_bucket: list[np.ndarray], keys_by_bucket: list[np.ndarray], leaves: list[list[int]],
                   rng: np.random.Generator) -> list[np.ndarray]:
    """Fill one class per leaf: a random record of the first bucket the leaf draws from, then the
    records nearest to it in Hilbert order from every bucket (binary search on the sorted keys)."""
    rows = [r.copy() for r in rows_by_bucket]
    keys = [k.copy() for k in keys_by_bucket]
    out = []
    for leaf in leaves:
        first = next(i for i, a in enumerate(leaf) if a > 0)
        key0 = int(keys[first][int(rng.integers(len(keys[first])))])
        members = []
        for i, a in enumerate(leaf):
            if a <= 0:
                continue
            pos = _take_nearest(keys[i], key0, a)
            members.append(rows[i][pos])
            keep = np.ones(len(rows[i]), dtype=bool)
            keep[pos] = False
            rows[i], keys[i] = rows[i][keep], keys[i][keep]
        out.append(np.concatenate(members))
    return out


def _fits(counts: np.ndarray, size: int, bound: np.ndarray, k: int) -> bool:
    return size >= k and bool((counts <= bound * size + EPS).all())


def refine(enc: Encoded, items: np.ndarray, group: np.ndarray, cluster_of_class: np.ndarray, values: np.ndarray,
           bound: np.ndarray, k: int, m: int, tick: Callable[[], None] | None = None) -> tuple[np.ndarray, int]:
    """Move records to the nearest class of their cluster while k and β-likeness keep holding; ``tick()`` (if
    given) at every cluster searched and every 1,024 moves tried."""
    group = group.copy()
    n_classes = len(cluster_of_class)
    moves = 0
    kept = np.flatnonzero(group >= 0)
    for _ in range(REFINE_PASSES):
        counts = np.bincount(group[kept] * m + values[kept], minlength=n_classes * m).reshape(n_classes, m)
        sizes = counts.sum(axis=1)
        cent = Centroids(enc, np.zeros(n_classes, dtype=np.int64))
        cent.rebuild(group[kept], items[kept], np.arange(n_classes))
        own = enc.distance_pairs(items[kept], cent, group[kept])
        best = group[kept].copy()
        best_d = own.copy()
        cl_of_row = cluster_of_class[group[kept]]
        for c in np.unique(cl_of_row):
            if tick is not None:
                tick()
            allowed = cluster_of_class == c
            if allowed.sum() < 2:
                continue
            sel = np.flatnonzero(cl_of_row == c)
            b, d = nearest(enc, cent, items[kept[sel]], allowed)
            best[sel], best_d[sel] = b, d
        cand = np.flatnonzero((best != group[kept]) & (best_d < own - 1e-12))
        cand = cand[np.argsort(best_d[cand] - own[cand], kind="stable")]
        moved = 0
        for tried, i in enumerate(cand):
            if tick is not None and tried % 1024 == 0:
                tick()
            r = kept[i]
            src, dst, v = group[r], best[i], values[r]
            counts[src, v] -= 1
            counts[dst, v] += 1
            if _fits(counts[src], sizes[src] - 1, bound, k) and _fits(counts[dst], sizes[dst] + 1, bound, k):
                sizes[src] -= 1
                sizes[dst] += 1
                group[r] = dst
                moved += 1
            else:
                counts[src, v] += 1
                counts[dst, v] -= 1
        moves += moved
        if not moved:
            break
    return group, moves


def record_linkage(enc: Encoded, items: np.ndarray, group: np.ndarray) -> float:
    """RL = Σ_r P_RL(r) / N: 1/|E| when r's nearest class centroid is its own class's (ties count)."""
    n = len(group)
    kept = np.flatnonzero(group >= 0)
    if not len(kept):
        return 0.0
    n_classes = int(group.max()) + 1
    cent = Centroids(enc, np.zeros(n_classes, dtype=np.int64))
    cent.rebuild(group[kept], items[kept], np.arange(n_classes))
    own = enc.distance_pairs(items[kept], cent, group[kept])
    _, best_d = nearest(enc, cent, items[kept])
    sizes = np.bincount(group[kept], minlength=n_classes)
    linked = own <= best_d + 1e-12
    return float(np.sum(linked / sizes[group[kept]]) / n)


# -- published classes -----------------------------------------------------------------------------
def _worst_js(D: np.ndarray, units: np.ndarray) -> float:
    return float(D[np.ix_(units, units)].max()) if len(units) > 1 else 0.0


def _ancestor_chain(space, codes: np.ndarray, rows: np.ndarray, j: int, label: object) -> list[tuple[int, object]]:
    """(level, node) of the hierarchy nodes coarser than ``label`` that every value of ``rows`` in QI j
    generalizes to, finest first: from the values' lowest common ancestor (a numeric range's label is
    finer than it) up to the root, each node once."""
    h = space.hierarchies[j]
    leaves = np.unique(codes[rows, j])
    chain: list[tuple[int, object]] = []
    seen = {label}
    for lv in range(h.level_count):
        anc = np.unique(np.asarray(h.maps[lv])[leaves])
        if len(anc) != 1:
            continue
        node = h.labels[lv][anc[0]]
        if node == label:  # the label is this node: only coarser ones
            chain = []
        elif node not in seen:
            seen.add(node)
            chain.append((lv, node))
    return chain


def separate_published(cells: list[np.ndarray], group: np.ndarray, unit_of_row: np.ndarray, D: np.ndarray,
                       values: np.ndarray, m: int, bound: np.ndarray, k: int, l_js: float, space,
                       codes: np.ndarray) -> dict:
    """Make the PUBLISHED classes (rows with identical output QI cells) meet the JS bound, in place.

    Classes of different BK clusters can get identical labels (their ranges / lowest common ancestors
    coincide) and then form one published class. A merge is kept when the merged class still has
    every pair of BK distributions within l (k and enhanced β-likeness survive any merge: sizes add
    up, and shares of a union are weighted means of shares that each respect f(p)). Otherwise the
    algorithm classes under that label are split by complete linkage (distance of two classes: the
    largest JS between their distributions) into compatible sets; the set with the most records keeps
    the label and every other set is generalized further, one QI one hierarchy level at a time
    (cheapest first, by the share of leaves under the new node), until its labels are unused or
    name a class it may merge with; a set that reaches the top without that is suppressed.
    Returns figures: worst published JS, published classes, merged classes, relabelled sets and
    suppressed records; ``cells`` and ``group`` (-1: suppressed) are updated."""
    n_groups = int(group.max()) + 1 if (group >= 0).any() else 0
    q = len(cells)
    stats = {"max_js": 0.0, "classes": 0, "merged": 0, "relabelled": 0, "suppressed": 0}
    if not n_groups:
        return stats
    rows_sorted = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[rows_sorted], np.arange(n_groups + 1))
    rows_of = [rows_sorted[starts[g]:starts[g + 1]] for g in range(n_groups)]
    units_of = [np.unique(unit_of_row[r]) for r in rows_of]
    counts_of = [np.bincount(values[r], minlength=m) for r in rows_of]
    label_of = [tuple(cells[j][r[0]] for j in range(q)) for r in rows_of]
    occupants: dict[tuple, list[int]] = {}
    for g in range(n_groups):
        occupants.setdefault(label_of[g], []).append(g)

    def units(gs: list[int]) -> np.ndarray:
        return np.unique(np.concatenate([units_of[g] for g in gs]))

    def fits(gs: list[int]) -> bool:
        counts = np.sum([counts_of[g] for g in gs], axis=0)
        size = int(counts.sum())
        return _worst_js(D, units(gs)) <= l_js + EPS and _fits(counts, size, bound, k)

    pending: list[list[int]] = []
    for label in list(occupants):
        gs = occupants[label]
        if len(gs) < 2 or fits(gs):
            continue
        G = np.array([[_worst_js(D, np.union1d(units_of[a], units_of[b])) for b in gs] for a in gs])
        parts = complete_linkage(G, l_js)
        sets = [[gs[i] for i in np.flatnonzero(parts == c)] for c in range(int(parts.max()) + 1)]
        sets.sort(key=lambda s: -sum(len(rows_of[g]) for g in s))
        occupants[label] = sets[0]
        pending.extend(sets[1:])

    for gs in pending:
        rows = np.concatenate([rows_of[g] for g in gs])
        current = list(label_of[gs[0]])
        chains = [_ancestor_chain(space, codes, rows, j, current[j]) for j in range(q)]
        step = [0] * q
        placed = None
        while placed is None:
            options = []
            for j in range(q):
                if step[j] < len(chains[j]):
                    h = space.hierarchies[j]
                    level, node = chains[j][step[j]]
                    share = h.leaf_counts(level)[h.label_code(level, node)] / len(h.leaves)
                    options.append((share, j))
            if not options:
                break
            options.sort()
            for _, j in options:
                trial = current.copy()
                trial[j] = chains[j][step[j]][1]
                there = occupants.get(tuple(trial), [])
                if not there or fits(there + gs):
                    placed = tuple(trial)
                    break
            if placed is None:  # every one-step label is taken by a class too far away: go up the cheapest
                _, j = options[0]
                current[j] = chains[j][step[j]][1]
                step[j] += 1
        if placed is None:
            group[rows] = -1
            for j in range(q):
                cells[j][rows] = ROOT
            stats["suppressed"] += int(len(rows))
            continue
        for j in range(q):
            cells[j][rows] = placed[j]
        occupants.setdefault(placed, []).extend(gs)
        stats["relabelled"] += 1

    for gs in occupants.values():
        if gs:
            stats["classes"] += 1
            stats["merged"] += len(gs) > 1
            stats["max_js"] = max(stats["max_js"], _worst_js(D, units(gs)))
    return stats


def _published_frequency(pc: PublishedClasses):
    """(QI hierarchies in QI order, frequency set of the input's QI codes, sensitive domain) as MHA saw them."""
    from ..model.table import frequency_set
    from ..privacy.distributions import sensitive_domain

    table = pc.table
    hs = table.hierarchies({c: h for c, h in (pc.hierarchies or {}).items() if c in table.qi})
    ordered = [hs[c] for c in table.qi]
    codes = table.encode(hs)
    betas = [mdl for mdl in pc.models if getattr(mdl, "name", "") == "beta-likeness"]
    column = betas[0].column if betas else (table.sensitive[0] if table.sensitive else None)
    if column is None:
        raise VerificationError("MHA: the publication has no sensitive column to check the background knowledge on")
    return ordered, frequency_set(codes, np.array([len(h.leaves) for h in ordered], dtype=np.int64)), \
        sensitive_domain(table.frame, column)


def check_published(pc: PublishedClasses) -> None:
    """MHA's own guarantee on what is published: in every published class (identical published QI
    tuples) the Jensen-Shannon divergence between any two records' BK distributions is at most l.
    The BK is recomputed from the input with the algorithm's estimator; raises VerificationError
    naming the first class (in publication order) above l."""
    l_js = float((pc.options or {}).get("js l", JS_L.default))
    if not len(pc.rows):
        return
    ordered, freq, dom = _published_frequency(pc)
    unit_of_tuple, bk, _ = choose_bk(ordered, freq, dom.codes, dom.table_distribution)
    unit_of_row = unit_of_tuple[freq.inverse]
    rows = np.asarray(pc.rows, dtype=np.int64)
    classes = np.asarray(pc.class_of_row, dtype=np.int64)
    key = classes * len(bk) + unit_of_row[rows]
    pairs = np.unique(key)
    cls, unit = pairs // len(bk), pairs % len(bk)
    starts = np.flatnonzero(np.r_[True, cls[1:] != cls[:-1]])
    ends = np.r_[starts[1:], len(cls)]
    worst = np.zeros(int(classes.max()) + 1 if len(classes) else 0)
    for a, b in zip(starts, ends):
        if b - a > 1:
            worst[cls[a]] = float(js_matrix(bk[unit[a:b]]).max())
    over = np.flatnonzero(worst > l_js + 1e-9)
    if len(over):
        first = {int(c): i for i, c in reversed(list(enumerate(classes)))}
        c = min(over, key=lambda x: first[int(x)])
        at = first[int(c)]
        qi = list(pc.table.qi)
        shown = ", ".join(f"{col}={pc.output[col].iloc[at]!s}" for col in qi if col in pc.output.columns)
        raise VerificationError(
            f"MHA: published class {int(c)} ({shown}; {int(np.sum(classes == c))} record(s)) has two records whose "
            f"background-knowledge distributions are {worst[c]:.4f} apart (Jensen-Shannon), above l = {l_js:g}"
        )


# -- the algorithm ---------------------------------------------------------------------------------
def _beta_model(problem: Problem):
    betas = [m for m in problem.models if isinstance(m, BetaLikeness)]
    if betas:
        cols = {m.column for m in betas}
        if len(cols) != 1:
            raise InputError("MHA protects one sensitive column; give its β-likeness models the same column")
        return min(float(m.beta) for m in betas), cols.pop(), []
    sens = problem.table.sensitive
    if not sens:
        raise InputError("MHA needs a sensitive column: mark one as sensitive or add a β-likeness model")
    beta = float(problem.options.get("mha beta", MHA_BETA.default))
    model = BetaLikeness(beta, "enhanced", sens[0])
    problem.models.append(model)  # the run's model list: reported with the result, rechecked by verify()
    return beta, sens[0], [f"MHA added {model.describe()} (option mha beta) to the run's privacy models"]


def mha(problem: Problem) -> CellRecoding:
    k = k_of(problem)
    factors = problem_factors(problem)  # checked first: bad weights are refused before any work
    beta, column, notes = _beta_model(problem)
    l_js = float(problem.options.get("js l", JS_L.default))
    rng = np.random.default_rng(int(problem.options.get("seed", 0)))
    dom = problem.domain(column)
    p = dom.table_distribution
    m = dom.m
    values = dom.codes
    n = problem.table.n
    freq = problem.freq

    problem.report(0.0, "MHA: background-knowledge distributions")
    unit_of_tuple, bk, level = choose_bk(problem.hierarchies, freq, values, p)
    if len(bk) > MAX_UNITS:
        raise UnsatisfiableError(f"MHA: {len(bk)} distinct background-knowledge distributions even at the "
                                 f"hierarchies' top; at most {MAX_UNITS} can be clustered")
    unit_of_row = unit_of_tuple[freq.inverse]
    problem.report(0.1, f"MHA: complete-linkage clustering of {len(bk)} distribution(s)")
    D = js_matrix(bk)
    unit_cluster = complete_linkage(D, l_js)
    n_clusters = int(unit_cluster.max()) + 1 if len(unit_cluster) else 0
    max_js = 0.0
    for c in range(n_clusters):
        u = np.flatnonzero(unit_cluster == c)
        if len(u) > 1:
            max_js = max(max_js, float(D[np.ix_(u, u)].max()))
    cluster_of_row = unit_cluster[unit_of_row]

    enc = Encoded(space_of(problem), freq.codes)
    keys_of_tuple = hilbert_keys(enc.embed_items(np.arange(len(freq.codes))))
    row_keys = keys_of_tuple[freq.inverse]
    f = enhanced_bound(p, beta)
    group = np.full(n, -1, dtype=np.int64)
    cluster_of_class: list[int] = []
    small_rows = surplus_rows = 0
    published = 0
    order_rows = np.argsort(cluster_of_row, kind="stable")
    starts = np.searchsorted(cluster_of_row[order_rows], np.arange(n_clusters + 1))
    for c in range(n_clusters):
        rows = order_rows[starts[c]:starts[c + 1]]
        if len(rows) < k:
            small_rows += len(rows)
            continue
        counts = np.bincount(values[rows], minlength=m)
        buckets, bounds, kept_counts = beta_partition(counts, p, beta)
        if kept_counts.sum() < k:
            surplus_rows += len(rows)
            continue
        rows_by_bucket, keys_by_bucket = [], []
        for b in buckets:
            parts = []
            for v in b:
                rv = rows[values[rows] == v]
                rv = rv[np.argsort(row_keys[rv], kind="stable")]
                if kept_counts[v] < len(rv):  # β surplus: drop records at random
                    rv = np.sort(rng.choice(rv, int(kept_counts[v]), replace=False))
                    rv = rv[np.argsort(row_keys[rv], kind="stable")]
                parts.append(rv)
            rb = np.concatenate(parts)
            rb = rb[np.argsort(row_keys[rb], kind="stable")]
            rows_by_bucket.append(rb)
            keys_by_bucket.append(row_keys[rb])
        surplus_rows += len(rows) - int(kept_counts.sum())
        leaves = beta_split([len(r) for r in rows_by_bucket], list(bounds), k)
        for members in select_records(rows_by_bucket, keys_by_bucket, leaves, rng):
            group[members] = len(cluster_of_class)
            cluster_of_class.append(c)
        published += 1
        problem.heartbeat(0.2 + 0.5 * c / max(n_clusters, 1), f"MHA: β-k-utility, cluster {c + 1} of {n_clusters}")

    problem.report(0.75, "MHA: refinement")
    moves = 0
    if cluster_of_class:
        # the refinement's record/centroid distance takes the attribute weights (the record-linkage figure
        # below stays an unweighted attacker's distance)
        enc_w = enc if factors is None else Encoded(space_of(problem), freq.codes, factors)
        group, moves = refine(enc_w, freq.inverse, group, np.array(cluster_of_class), values, f, k, m,
                              tick=lambda: problem.heartbeat(0.8, "MHA: refinement"))
    suppressed = group < 0
    if int(suppressed.sum()) > problem.budget:
        raise UnsatisfiableError(
            f"MHA cannot publish {int(suppressed.sum())} record(s) ({small_rows} in background-knowledge clusters "
            f"below k={k}, {surplus_rows} over the β-likeness bound of their cluster), more than the suppression "
            f"limit allows ({problem.budget}); raise js l, β or the suppression limit")
    # renumber classes 0..C-1 (refinement cannot empty a class: k keeps holding)
    _, dense = np.unique(group[~suppressed], return_inverse=True)
    group[~suppressed] = dense
    problem.report(0.9, "MHA: generalizing the classes")
    space = space_of(problem)
    cells = cells_from_groups(space, problem.codes, group, freq.inverse)
    # classes that get identical labels merge in the output: keep the published classes within l
    sep = separate_published(cells, group, unit_of_row, D, values, m, f, k, l_js, space, problem.codes)
    suppressed = group < 0
    if int(suppressed.sum()) > problem.budget:
        raise UnsatisfiableError(
            f"MHA cannot publish {int(suppressed.sum())} record(s) ({small_rows} in background-knowledge clusters "
            f"below k={k}, {surplus_rows} over the β-likeness bound of their cluster, {sep['suppressed']} in classes "
            f"whose labels could only merge with classes too far in background knowledge), more than the "
            f"suppression limit allows ({problem.budget}); raise js l, β or the suppression limit")
    if sep["suppressed"]:
        _, dense = np.unique(group[~suppressed], return_inverse=True)
        group[~suppressed] = dense
    numeric = [problem.table.is_numeric(col) for col in problem.table.qi]
    ncp = cell_loss_figures(problem.hierarchies, numeric, problem.codes, cells, suppressed)["ncp"]
    sizes = np.bincount(group[~suppressed]) if (~suppressed).any() else np.zeros(0, dtype=np.int64)
    info = {
        "js_l": l_js, "beta": beta, "sensitive": column, "bk_level": level, "bk_units": int(len(bk)),
        "bk_clusters": n_clusters, "bk_clusters_published": published,
        "max_js_within_clusters": round(max_js, 6),
        "classes": int(len(sizes)), "smallest_class": int(sizes.min()) if len(sizes) else 0,
        "largest_class": int(sizes.max()) if len(sizes) else 0,
        "suppressed_small_clusters": int(small_rows), "suppressed_beta_surplus": int(surplus_rows),
        "refinement_moves": int(moves),
        "max_js_published": round(sep["max_js"], 6), "published_classes": sep["classes"],
        "published_merged": sep["merged"], "published_relabelled": sep["relabelled"],
        "suppressed_published_conflicts": sep["suppressed"],
        "gcp": float(ncp * n), "gcp_normalized": float(ncp),
        "record_linkage": record_linkage(enc, freq.inverse, group),
    }
    return CellRecoding(cells, suppressed, "local", group, [], notes, info)


register(
    AlgorithmInfo(
        name="mha",
        label="MHA (background knowledge, k + β-likeness)",
        summary="Seed 004: complete-linkage clustering of records by the Jensen-Shannon divergence of their "
        "background-knowledge distributions (cut at l), then per cluster β-partition, β-split and Hilbert-order "
        "record selection into k-anonymous, enhanced β-like classes, and refinement; local recoding.",
        run=mha,
        honours=("k-anonymity", "beta-likeness"),
        recoding="local",
        options=(JS_L, MHA_BETA, SEED, WEIGHTS),
        reference="Amiri 2020 (seed 004); β-partition after Cao & Karras, Publishing microdata with a robust "
        "privacy guarantee, VLDB 2012",
        check_published=check_published,
    )
)
