"""Compiled (numba) greedy k-member clustering loop (algorithms.kmember), for large tables.

Imported only by ``algorithms.kmember`` when the work (distinct tuples x clusters) repays numba's
import and the load of the cached machine code; the first run on a machine also compiles and caches
next to this file (or in NUMBA_CACHE_DIR). numba is the optional ``fast`` extra: without it (or where it
cannot be set up) ``algorithms.kmember`` runs its numpy loop, which makes the same choices.

The choices are exactly those of the numpy loop in ``algorithms.kmember``: the same floating-point
operations in the same order (per candidate the numeric |value - mean| summed column by column, then
each categorical term added QI by QI; the mean as sums / count with the sums grown one record at a
time), the same first-maximum / first-minimum tie-breaking over the candidates in ascending tuple
order. What differs is the work: per cluster one pass over the candidates (the distance to the seed,
which also picks the next seed from the k + 1 farthest), and the nearest-to-centroid search only over
the candidates whose lower bound (the categorical part of the distance to the seed, bucketed) can
reach the minimum; the rest provably cannot (strictly greater), so the first minimum is the same.
"""

from __future__ import annotations

import numba
import numpy as np

# buckets of the categorical part of the distance to a cluster's seed, a lower bound of the distance
# to the cluster's centroid: a candidate in a higher bucket than the minimum's cannot reach it
NB = 256


@numba.njit(cache=True, nogil=True)
def grow(X0, L0, remaining, pos, X, L, rem, dist, bucket, H, flat, off, size, k, state, pieces, budget,
         first):  # pragma: no cover - compiled
    """Make at most ``budget`` clusters. ``X0``/``L0``: every candidate's numeric values and leaf codes;
    ``pos``, ``X``, ``L``, ``rem``, ``dist``, ``bucket``: the live candidates' (ascending tuple position,
    compacted in place now and then) position, values, codes, records left, distance to the last seed,
    bucket. ``remaining`` (by tuple position), ``state`` (int64: [r, dist_from, left, cluster_id,
    n_pieces, n_alive, n_dead], r and dist_from tuple positions) and ``pieces`` (rows: tuple position,
    cluster, records) are updated in place."""
    p = X.shape[1]
    c = L.shape[1]
    r = state[0]
    dist_from = state[1]
    left = state[2]
    cluster_id = state[3]
    n_pieces = state[4]
    n_alive = state[5]
    n_dead = state[6]
    height = 0
    width = 1
    for t in range(c):
        height = max(height, int(H[t]))
        width = max(width, size[t])
    term = np.empty((c, height + 1), dtype=np.float64)
    for t in range(c):
        for lv in range(height + 1):
            term[t, lv] = lv / H[t]
    rowlv = np.zeros((c, width), dtype=np.int64)
    rowterm = np.zeros((c, width), dtype=np.float64)
    mean = np.empty(p, dtype=np.float64)
    sums = np.empty(p, dtype=np.float64)
    xs = np.empty(p, dtype=np.float64)
    ls = np.empty(c, dtype=np.int64)
    level = np.zeros(c, dtype=np.int64)
    hist = np.zeros(NB, dtype=np.int64)
    inv = NB / max(c, 1)
    n_top = k + 1
    topv = np.empty(n_top, dtype=np.float64)
    topa = np.empty(n_top, dtype=np.int64)
    sub = np.empty(X.shape[0], dtype=np.int64)
    made = 0
    s = -1
    if left >= k:
        # the first seed: the candidate farthest from r (first maximum)
        best = -np.inf
        for a in range(n_alive):
            if rem[a] <= 0:
                continue
            if dist_from == r:
                v = dist[a]
            else:
                v = 0.0
                if p:
                    v = abs(X[a, 0] - X0[r, 0])
                    for j in range(1, p):
                        v += abs(X[a, j] - X0[r, j])
                for t in range(c):
                    v += flat[off[t] + L[a, t] * size[t] + L0[r, t]] / H[t]
            if v > best:
                best = v
                s = a
    while left >= k and made < budget:
        seed = pos[s]
        take = min(rem[s], k)
        rem[s] -= take
        remaining[seed] -= take
        if rem[s] == 0:
            n_dead += 1
        size_now = take
        pieces[n_pieces, 0] = seed
        pieces[n_pieces, 1] = cluster_id
        pieces[n_pieces, 2] = take
        n_pieces += 1
        for j in range(p):
            xs[j] = X[s, j]
        for t in range(c):
            ls[t] = L[s, t]
        # the seed's row of each LCA table: a candidate's level and term by its leaf
        for t in range(c):
            for b in range(size[t]):
                lv = flat[off[t] + b * size[t] + ls[t]]
                rowlv[t, b] = lv
                rowterm[t, b] = term[t, lv]
        # drop the candidates without records once they are many (the order stays ascending)
        if n_dead * 16 > n_alive:
            n = 0
            for a in range(n_alive):
                if rem[a] > 0:
                    if n != a:
                        pos[n] = pos[a]
                        rem[n] = rem[a]
                        for j in range(p):
                            X[n, j] = X[a, j]
                        for t in range(c):
                            L[n, t] = L[a, t]
                    n += 1
            n_alive = n
            n_dead = 0
        # one pass: the distance of every candidate to the seed (as Encoded.distance_to_item computes
        # it; the next seed is the farthest, first maximum, among those still with records), and the
        # bucket of its categorical part
        for b in range(NB):
            hist[b] = 0
        m = 0
        for a in range(n_alive):
            if rem[a] <= 0:
                continue
            v = 0.0
            if p:
                v = abs(X[a, 0] - xs[0])
                for j in range(1, p):
                    v += abs(X[a, j] - xs[j])
            w = 0.0
            for t in range(c):
                tv = rowterm[t, L[a, t]]
                v += tv
                w += tv
            dist[a] = v
            bk = min(int(w * inv), NB - 1)
            bucket[a] = bk
            hist[bk] += 1
            if m < n_top or v > topv[n_top - 1]:
                q = min(m, n_top - 1)
                while q > 0 and topv[q - 1] < v:
                    topv[q] = topv[q - 1]
                    topa[q] = topa[q - 1]
                    q -= 1
                topv[q] = v
                topa[q] = a
                if m < n_top:
                    m += 1
        dist_from = seed
        if size_now < k:
            acc = 0
            top = NB - 1
            for b in range(NB):
                acc += hist[b]
                if acc >= first:
                    top = b
                    break
            n_sub = 0
            for a in range(n_alive):
                if rem[a] > 0 and bucket[a] <= top:
                    sub[n_sub] = a
                    n_sub += 1
            for j in range(p):
                sums[j] = xs[j] * take
            count = take
            for t in range(c):
                level[t] = 0
            while size_now < k:
                for j in range(p):
                    mean[j] = sums[j] / max(count, 1)
                while True:
                    # the first minimum among the candidates tried: the distance to the centroid is at
                    # least the categorical part with the seed (terms >= 0, max(.) >= each, rounding
                    # monotone), so a candidate of a higher bucket than the minimum's cannot reach it
                    pick = -1
                    low = np.inf
                    for q in range(n_sub):
                        a = sub[q]
                        if rem[a] == 0:
                            continue
                        v = 0.0
                        if p:
                            v = abs(X[a, 0] - mean[0])
                            for j in range(1, p):
                                v += abs(X[a, j] - mean[j])
                        # once the partial sum passes the best so far, the full one cannot beat it (a
                        # later tie never wins: the first minimum stays)
                        t = 0
                        while t < c and v < low:
                            lv = rowlv[t, L[a, t]]
                            if level[t]:
                                v += max(term[t, lv], term[t, level[t]])
                            else:
                                v += term[t, lv]
                            t += 1
                        if v < low:
                            low = v
                            pick = a
                    lb = NB - 1 if low == np.inf else min(int(low * inv), NB - 1)
                    if lb <= top:
                        break
                    # a candidate of a bucket up to the minimum's might reach it: try them all
                    top = lb
                    n_sub = 0
                    for a in range(n_alive):
                        if rem[a] > 0 and bucket[a] <= top:
                            sub[n_sub] = a
                            n_sub += 1
                if pick < 0:  # unreachable: the candidates hold the left records, at finite distances
                    raise RuntimeError("k-member: no candidate for the cluster")
                take = min(rem[pick], k - size_now)
                count += take
                for _ in range(take):
                    for j in range(p):
                        sums[j] = sums[j] + X[pick, j]
                for t in range(c):
                    lv = rowlv[t, L[pick, t]]
                    if lv > level[t]:
                        level[t] = lv
                rem[pick] -= take
                remaining[pos[pick]] -= take
                if rem[pick] == 0:
                    n_dead += 1
                size_now += take
                pieces[n_pieces, 0] = pos[pick]
                pieces[n_pieces, 1] = cluster_id
                pieces[n_pieces, 2] = take
                n_pieces += 1
        cluster_id += 1
        left -= k
        r = seed
        made += 1
        # the next seed: the first of the farthest still with records (at most k candidates lost their
        # last records in this cluster, k + 1 are kept)
        s = -1
        for q in range(m):
            if rem[topa[q]] > 0:
                s = topa[q]
                break
    state[0] = r
    state[1] = dist_from
    state[2] = left
    state[3] = cluster_id
    state[4] = n_pieces
    state[5] = n_alive
    state[6] = n_dead
    return made
