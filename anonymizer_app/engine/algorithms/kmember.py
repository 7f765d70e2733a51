"""Greedy k-member clustering (Byun, Kamra, Bertino & Li 2007), with the distance of seed 003 §3.2.3.

Records of a QI tuple seen at least k times first form clusters of identical records (no loss).
For the others: from a random record r, the record farthest from r seeds a cluster, which then takes
the record nearest to its centroid until it holds k records (records of one distinct tuple join
together, as many as the cluster still needs); the seed becomes the next r. The fewer than k records
left at the end join the nearest cluster that has room (below 2k-1 records). Local recoding.
O(n^2 / k) distance evaluations, vectorized per step over the distinct tuples still unplaced; within a
cluster each candidate's values and LCA distances with the seed are gathered once.

With a person id the units clustered are persons (search/clustering.py, units_of): a cluster is complete when
it holds k distinct persons, and all of a person's records go to its cluster.
"""

from __future__ import annotations

import numpy as np

from ..search.attribute_weights import WEIGHTS, problem_factors
from ..search.clustering import SEED, finish, identical_clusters, k_of, place_leftovers, space_of, units_of
from ..search.distance import Encoded
from .base import AlgorithmInfo, CellRecoding, Problem, register


def kmember(problem: Problem) -> CellRecoding:
    k = k_of(problem)
    freq = problem.freq
    rng = np.random.default_rng(int(problem.options.get("seed", 0)))
    units = units_of(problem)  # records, or persons with a person id: the clusters hold k of them
    group, n_ident = identical_clusters(units.item, units.counts, k)
    rest = np.flatnonzero(group < 0)
    enc = Encoded(space_of(problem), freq.codes, problem_factors(problem))  # weighted distances
    tuples, remaining = np.unique(units.item[rest], return_counts=True)
    remaining = remaining.astype(np.int64)
    total = int(remaining.sum())
    pieces_t, pieces_c, pieces_n = [], [], []
    alive = np.arange(len(tuples))
    cluster_id = n_ident
    r = int(rng.integers(len(tuples))) if len(tuples) else 0
    left = total
    dist = np.zeros(len(tuples))  # distance of each tuple to the tuple dist_from (the last seed)
    dist_from = -1
    if _use_kernel(enc, len(tuples), total, k):
        pieces = _grow_compiled(problem, enc, tuples, remaining, r, total, k, cluster_id)
        pieces_t, pieces_c, pieces_n = pieces[:, 0].tolist(), pieces[:, 1].tolist(), pieces[:, 2].tolist()
        left = 0  # the loop below has nothing left to do
    while left >= k:
        if len(alive) > 64 and (remaining[alive] == 0).mean() > 0.3:
            alive = alive[remaining[alive] > 0]
        live = alive[remaining[alive] > 0]
        items = tuples[live]
        if dist_from == r:  # the distances to r were computed with r's cluster (same values)
            to_r = dist[live]
        else:
            to_r = enc.distance_to_item(items, tuples[r])
        s = int(live[int(np.argmax(to_r))])
        take = int(min(remaining[s], k))
        remaining[s] -= take
        size = take
        pieces_t.append(s)
        pieces_c.append(cluster_id)
        pieces_n.append(take)
        if size < k:
            # the cluster's centroid as distance.Centroids keeps it (numeric sums and count, per
            # categorical QI the level of the LCA of its leaves with the seed's leaf, which stays the
            # representative); per candidate its numeric values and its LCA distance with the seed's
            # leaf are gathered once for the whole cluster. Same arithmetic, in the same order, as
            # Encoded.distance_pairs, so the choices (and ties) are those of the per-step version.
            seed_item = tuples[s]
            rem = remaining[live]
            xs = enc.X[items]
            sums = enc.X[seed_item] * take
            count = take
            lcas = [enc.lca(t, enc.L[items, t], enc.L[seed_item, t]) for t in range(len(enc.cat))]
            cat_d = [lv / enc.H[t] for t, lv in enumerate(lcas)]
            # the distance of every candidate to the seed (as Encoded.distance_to_item computes it):
            # the next cluster's seed is the farthest from this one's
            to_s = np.abs(xs - enc.X[seed_item]).sum(axis=1) if enc.num else np.zeros(len(live))
            for col in cat_d:
                to_s += col
            dist[live] = to_s
            dist_from = s
            level = np.zeros(len(enc.cat), dtype=np.int64)
            while size < k:
                if enc.num:
                    d = np.abs(xs - sums / max(count, 1)).sum(axis=-1)
                else:
                    d = np.zeros(len(live))
                for t, col in enumerate(cat_d):
                    d += np.maximum(col, level[t] / enc.H[t]) if level[t] else col
                d[rem == 0] = np.inf
                i = int(np.argmin(d))
                p = int(live[i])
                take = int(min(rem[i], k - size))
                count += take
                item = int(items[i])
                xp = enc.X[item]
                for _ in range(take):
                    sums = sums + xp
                for t, lv in enumerate(lcas):
                    level[t] = max(level[t], int(lv[i]))
                remaining[p] -= take
                rem[i] -= take
                size += take
                pieces_t.append(p)
                pieces_c.append(cluster_id)
                pieces_n.append(take)
        cluster_id += 1
        left -= k
        r = s
        problem.heartbeat(1 - left / max(total, 1), f"k-member: {cluster_id} cluster(s)")
    # rows of each tuple go, in order, to the clusters holding pieces of it; the rest stay unplaced
    if pieces_t:
        pt = tuples[np.array(pieces_t)]
        pc, pn = np.array(pieces_c), np.array(pieces_n)
        left_t = np.flatnonzero(remaining > 0)
        pt = np.concatenate([pt, tuples[left_t]])
        pc = np.concatenate([pc, np.full(len(left_t), -1)])
        pn = np.concatenate([pn, remaining[left_t]])
        order = np.lexsort((-pc, pt))  # per tuple: clusters first, the unplaced last
        rest_sorted = rest[np.argsort(units.item[rest], kind="stable")]
        group[rest_sorted] = np.repeat(pc[order], pn[order])
    leftover = np.flatnonzero(group < 0)
    group = place_leftovers(enc, units.item, group, leftover, k)
    return finish(problem, units.rows(group), "local", {"identical_clusters": n_ident})


# the compiled loop (engine/search/_kmember_kernel.py) from this much work (distinct tuples x clusters): below it
# numba's import and the load of its cached code (about 0.6 s) cost more than they save
KERNEL_MIN_WORK = 50_000_000


def _load_kernel():
    """_kmember_kernel.grow, or None where numba cannot be imported or set up (the numpy loop of kmember() then
    does it all, with the same choices): numba not installed (it is the optional `fast` extra), or no writable
    place for its cache (numba raises at the decorator then)."""
    try:
        from ..search._kmember_kernel import grow
    except Exception:  # noqa: BLE001 - any failure only costs speed; the numpy loop makes the same choices
        return None
    return grow


def _use_kernel(enc: Encoded, n_tuples: int, total: int, k: int) -> bool:
    # the kernel reads the LCA tables (hierarchies up to 2,048 leaves) and sums the numeric terms one after
    # the other, as numpy does below 8 columns (its pairwise summation starts at 8); numba is loaded last, only
    # when the work repays it
    # (not with attribute weights: the kernel's bounds take each QI's term as at most 1)
    return (enc.factors is None and n_tuples * (total // max(k, 1)) >= KERNEL_MIN_WORK and len(enc.num) < 8
            and all(t is not None for t in enc.lca_table) and _load_kernel() is not None)


def _grow_compiled(problem: Problem, enc: Encoded, tuples: np.ndarray, remaining: np.ndarray, r: int, total: int,
                   k: int, first_cluster: int) -> np.ndarray:
    """The loop of kmember() compiled, same choices; returns its pieces (tuple position, cluster, records)."""
    grow = _load_kernel()
    assert grow is not None, "k-member: the compiled loop without numba (_use_kernel checks it)"
    tables = [np.ascontiguousarray(t, dtype=np.int16).reshape(-1) for t in enc.lca_table]
    size = np.array([int(np.sqrt(len(t))) for t in tables], dtype=np.int64)
    off = (np.cumsum([0] + [len(t) for t in tables[:-1]]) if tables else np.zeros(0)).astype(np.int64)
    flat = np.concatenate(tables) if tables else np.zeros(0, dtype=np.int16)
    n = len(tuples)
    X0 = np.ascontiguousarray(enc.X[tuples], dtype=np.float64)
    L0 = enc.L[tuples]
    # leaf codes as int16 when they fit (hierarchies of at most 2,048 leaves: always): fewer bytes to read
    L0 = np.ascontiguousarray(L0, dtype=np.int16 if L0.size == 0 or int(L0.max()) < 2**15 else np.int64)
    H = np.ascontiguousarray(enc.H, dtype=np.float64)
    # the candidates grouped by their categorical codes (the categorical terms of a distance are the group's),
    # the groups by supergroup (see _supergroups), each group's members in ascending tuple position
    c = L0.shape[1]
    if c:
        gL, grp = np.unique(L0, axis=0, return_inverse=True)
        grp = grp.reshape(-1).astype(np.int64)
    else:
        gL, grp = np.zeros((1 if n else 0, 0), dtype=L0.dtype), np.zeros(n, dtype=np.int64)
    usemask = (size <= MASK_LEAVES).astype(np.uint8)
    sg_of = _supergroups(gL, size)
    g_order = np.argsort(sg_of, kind="stable")  # groups renumbered supergroup by supergroup
    renum = np.empty(len(gL), dtype=np.int64)
    renum[g_order] = np.arange(len(gL))
    gL, gsg, grp = np.ascontiguousarray(gL[g_order]), sg_of[g_order].astype(np.int64), renum[grp]
    order = np.argsort(grp, kind="stable")
    mgrp = grp[order]
    G, NS = len(gL), int(gsg.max()) + 1 if len(gsg) else 0
    gcnt = np.bincount(mgrp, minlength=G).astype(np.int64)
    gs = (np.cumsum(gcnt) - gcnt).astype(np.int64)
    mpos, mX, mrem = order.astype(np.int64), np.ascontiguousarray(X0[order]), remaining[order].astype(np.int64)
    glive = np.bincount(mgrp, weights=mrem > 0, minlength=G).astype(np.int64)
    p = X0.shape[1]
    if n and p:
        gmin, gmax = np.minimum.reduceat(mX, gs, axis=0), np.maximum.reduceat(mX, gs, axis=0)
    else:
        gmin, gmax = np.zeros((G, p)), np.zeros((G, p))
    gmin, gmax = np.ascontiguousarray(gmin), np.ascontiguousarray(gmax)  # updated in place by the kernel
    gdirty = (glive < gcnt).astype(np.uint8)  # members without records leave when their group is next opened
    sgn = np.bincount(gsg, minlength=NS).astype(np.int64)
    sgs = (np.cumsum(sgn) - sgn).astype(np.int64)
    sglive = np.bincount(gsg, weights=glive, minlength=NS).astype(np.int64)
    if G and p:
        sgmin = np.ascontiguousarray(np.minimum.reduceat(gmin, sgs, axis=0))
        sgmax = np.ascontiguousarray(np.maximum.reduceat(gmax, sgs, axis=0))
    else:
        sgmin, sgmax = np.zeros((NS, p)), np.zeros((NS, p))
    # per QI of at most 64 leaves, the codes of a supergroup's groups as bits
    bits = np.zeros((G, c), dtype=np.uint64)
    for t in np.flatnonzero(usemask):
        bits[:, t] = np.left_shift(np.uint64(1), gL[:, t].astype(np.uint64))
    sgmask = np.ascontiguousarray(np.bitwise_or.reduceat(bits, sgs, axis=0) if G else np.zeros((0, c), np.uint64))
    sglist = np.flatnonzero(sglive > 0).astype(np.int64)
    state = np.array([r, -1, total, first_cluster, 0, len(sglist), 0], dtype=np.int64)
    pieces = np.zeros((total + k, 3), dtype=np.int64)
    scratch = [np.zeros(G, dtype=np.int64), np.full(G, -1, dtype=np.int64), gsg, sgs, sgn, sglive, sgmask, sgmin,
               sgmax, np.zeros(NS, dtype=np.int64), np.zeros(NS), sglist, usemask]
    while state[2] >= k:
        grow(X0, L0, remaining, mpos, mX, mrem, mgrp, gs, gcnt, glive, gL, gmin, gmax, gdirty, *scratch, H, flat, off,
             size, k, state, pieces, KERNEL_BUDGET, KERNEL_FIRST)
        problem.heartbeat(1 - int(state[2]) / max(total, 1), f"k-member: {int(state[3])} cluster(s)")
    return pieces[:int(state[4])]


# groups per supergroup aimed at: per cluster the kernel visits every supergroup and opens the few whose bounds
# reach the farthest or the nearest (1M Adult resample: 755 supergroups of 18,833 groups)
SUPERGROUP_SHARE = 16
# a QI of at most this many leaves may be bounded by the bit mask of its codes present (one uint64)
MASK_LEAVES = 64


def _supergroups(gL: np.ndarray, leaves: np.ndarray) -> np.ndarray:
    """The supergroup of each group (``gL``: its codes per categorical QI; ``leaves``: per QI the hierarchy's
    leaves): groups with the same codes on a few QIs, every QI of more than MASK_LEAVES leaves, then the QIs of
    fewest leaves while there are at most G / SUPERGROUP_SHARE supergroups. The kernel bounds a supergroup's
    distances by the codes present per other QI (a bit mask)."""
    G, c = gL.shape
    if not G or not c:
        return np.zeros(G, dtype=np.int64)
    key = [t for t in range(c) if leaves[t] > MASK_LEAVES]
    target = max(G // SUPERGROUP_SHARE, 1)
    for t in sorted((t for t in range(c) if leaves[t] <= MASK_LEAVES), key=lambda t: (int(leaves[t]), t)):
        if len(np.unique(gL[:, key + [t]], axis=0)) > target:
            break
        key.append(t)
    if not key:
        return np.zeros(G, dtype=np.int64)
    _, sg = np.unique(gL[:, key], axis=0, return_inverse=True)
    return sg.reshape(-1).astype(np.int64)


# clusters per kernel call (between two heartbeats), and how many candidates the kernel tries first for
# the nearest to a centroid (those of the lowest buckets of their lower bound; more when needed)
KERNEL_BUDGET = 256
KERNEL_FIRST = 64


register(
    AlgorithmInfo(
        name="kmember",
        label="Greedy k-member clustering",
        summary="Clustering: seed a cluster with the record farthest from the last seed, add the nearest records "
        "until it holds k; leftovers join the nearest cluster; each cluster is generalized locally "
        "(Byun et al. 2007).",
        run=kmember,
        recoding="local",
        options=(SEED, WEIGHTS),
        person_level=True,
        reference="J.-W. Byun, A. Kamra, E. Bertino, N. Li, Efficient k-anonymization using clustering "
        "techniques, DASFAA 2007",
    )
)
