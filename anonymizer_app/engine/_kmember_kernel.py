"""Compiled (numba) greedy k-member clustering loop (algorithms.kmember), for large tables.

Imported only by ``algorithms.kmember`` when the work (distinct tuples x clusters) repays numba's
import and the load of the cached machine code; the first run on a machine also compiles and caches
next to this file (or in NUMBA_CACHE_DIR).

The choices are exactly those of the numpy loop in ``algorithms.kmember``: the same floating-point
operations in the same order (per candidate the numeric |value - mean| summed column by column, then
each categorical term added QI by QI; the mean as sums / count with the sums grown one record at a
time), the same first-maximum / first-minimum tie-breaking over the candidates in ascending tuple
order. Only the passes are fused and the temporaries gone.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _lca(flat, off, size, t, a, b):  # pragma: no cover - compiled
    return flat[off[t] + a * size[t] + b]


@numba.njit(cache=True, nogil=True)
def grow(tuples, remaining, X, L, H, flat, off, size, k, state, alive, dist, pieces, budget):  # pragma: no cover
    """Make at most ``budget`` clusters. ``state`` (int64): [r, dist_from, left, cluster_id, n_pieces,
    n_alive], updated in place, as are ``remaining``, ``alive`` (tuple positions, ascending, those
    with records left first), ``dist`` and ``pieces`` (rows: tuple position, cluster, records)."""
    p = X.shape[1]
    c = L.shape[1]
    r = state[0]
    dist_from = state[1]
    left = state[2]
    cluster_id = state[3]
    n_pieces = state[4]
    n_alive = state[5]
    n_t = tuples.shape[0]
    rem = np.empty(n_t, dtype=np.int64)
    # per candidate its LCA levels with the seed (small: the pass over the candidates stays in cache); a
    # level's term lv / H[t] read from a table of the same divisions
    lcas = np.empty((n_t, c), dtype=np.int16)
    height = 0
    for t in range(c):
        height = max(height, int(H[t]))
    term = np.empty((c, height + 1), dtype=np.float64)
    for t in range(c):
        for lv in range(height + 1):
            term[t, lv] = lv / H[t]
    d = np.empty(n_t, dtype=np.float64)
    mean = np.empty(p, dtype=np.float64)
    sums = np.empty(p, dtype=np.float64)
    level = np.zeros(c, dtype=np.int64)
    made = 0
    while left >= k and made < budget:
        # in one pass: the tuples with records left compacted in place at the front of ``alive`` (in
        # ascending order), and the seed: the tuple farthest from r (first maximum), as
        # Encoded.distance_to_item computes it
        ri = tuples[r]
        s = -1
        best = -np.inf
        n_live = 0
        for a in range(n_alive):
            i = alive[a]
            if remaining[i] <= 0:
                continue
            alive[n_live] = i
            n_live += 1
            if dist_from == r:
                v = dist[i]
            else:
                it = tuples[i]
                v = 0.0
                if p:
                    v = abs(X[it, 0] - X[ri, 0])
                    for j in range(1, p):
                        v += abs(X[it, j] - X[ri, j])
                for t in range(c):
                    v += _lca(flat, off, size, t, L[it, t], L[ri, t]) / H[t]
            if v > best:
                best = v
                s = i
        n_alive = n_live
        live = alive
        take = min(remaining[s], k)
        remaining[s] -= take
        size_now = take
        pieces[n_pieces, 0] = s
        pieces[n_pieces, 1] = cluster_id
        pieces[n_pieces, 2] = take
        n_pieces += 1
        if size_now < k:
            seed = tuples[s]
            for a in range(n_live):
                i = live[a]
                it = tuples[i]
                rem[a] = remaining[i]
                v = 0.0
                if p:
                    v = abs(X[it, 0] - X[seed, 0])
                    for j in range(1, p):
                        v += abs(X[it, j] - X[seed, j])
                for t in range(c):
                    lv = _lca(flat, off, size, t, L[it, t], L[seed, t])
                    lcas[a, t] = lv
                    v += term[t, lv]
                dist[i] = v
            dist_from = s
            for j in range(p):
                sums[j] = X[seed, j] * take
            count = take
            for t in range(c):
                level[t] = 0
            while size_now < k:
                for j in range(p):
                    mean[j] = sums[j] / max(count, 1)
                pick = -1
                low = np.inf
                for a in range(n_live):
                    if rem[a] == 0:
                        d[a] = np.inf
                        continue
                    it = tuples[live[a]]
                    v = 0.0
                    if p:
                        v = abs(X[it, 0] - mean[0])
                        for j in range(1, p):
                            v += abs(X[it, j] - mean[j])
                    # the terms are >= 0 and rounding is monotone: once the partial sum passes the best
                    # so far, the full one cannot beat it (a later tie never wins: the first minimum stays)
                    t = 0
                    while t < c and v < low:
                        if level[t]:
                            v += max(term[t, lcas[a, t]], term[t, level[t]])
                        else:
                            v += term[t, lcas[a, t]]
                        t += 1
                    d[a] = v
                    if v < low:
                        low = v
                        pick = a
                if pick < 0:  # every candidate at infinity: numpy's argmin is the first
                    pick = 0
                i = live[pick]
                take = min(rem[pick], k - size_now)
                count += take
                it = tuples[i]
                for _ in range(take):
                    for j in range(p):
                        sums[j] = sums[j] + X[it, j]
                for t in range(c):
                    if lcas[pick, t] > level[t]:
                        level[t] = lcas[pick, t]
                remaining[i] -= take
                rem[pick] -= take
                size_now += take
                pieces[n_pieces, 0] = i
                pieces[n_pieces, 1] = cluster_id
                pieces[n_pieces, 2] = take
                n_pieces += 1
        cluster_id += 1
        left -= k
        r = s
        made += 1
    state[0] = r
    state[1] = dist_from
    state[2] = left
    state[3] = cluster_id
    state[4] = n_pieces
    state[5] = n_alive
    return made

