"""Compiled (numba) greedy k-member clustering loop (algorithms.kmember), for large tables.

Imported only by ``algorithms.kmember`` when the work (distinct tuples x clusters) repays numba's
import and the load of the cached machine code; the first run on a machine also compiles and caches
next to this file (or in NUMBA_CACHE_DIR). numba is the optional ``fast`` extra: without it (or where it
cannot be set up) ``algorithms.kmember`` runs its numpy loop, which makes the same choices.

The choices are exactly those of the numpy loop in ``algorithms.kmember``: the same floating-point
operations in the same order (per candidate the numeric |value - mean| summed column by column, then
each categorical term added QI by QI; the mean as sums / count with the sums grown one record at a
time), the same first-maximum / first-minimum tie-breaking over the candidates in ascending tuple
order (compared explicitly: the candidates are visited in another order). What differs is the work.

The candidates (distinct tuples) are grouped by their categorical codes (the categorical terms of a
distance to the seed are the group's), and the groups into supergroups by the codes of a few QIs (the
others' codes present in a supergroup kept as a bit mask per QI). Per cluster one pass over the
supergroups gives each an upper bound of its members' distances to the seed (the numeric part at the
extreme values, per QI the highest LCA level present) and a lower bound of their categorical part with
the seed (per QI the lowest level present). Only the supergroups, then groups, whose upper bound reaches
the k + 1 farthest found so far are opened and their members measured exactly (the next seed is among
those; the supergroup of the largest bound first). The nearest-to-centroid search runs only over the
members of groups whose categorical part (bucketed, a lower bound of the distance to the centroid) can
reach the minimum; the others provably cannot (strictly greater), so the first minimum is the same.
Bounds hold in floating point: every rounding is monotone and the terms are added in the same order.
"""

from __future__ import annotations

import numba
import numpy as np

# buckets of the categorical part of the distance to a cluster's seed, a lower bound of the distance
# to the cluster's centroid: a candidate in a higher bucket than the minimum's cannot reach it
NB = 256


@numba.njit(cache=True, nogil=True)
def grow(X0, L0, remaining, mpos, mX, mrem, mgrp, gs, gcnt, glive, gL, gmin, gmax, gdirty, gbucket, gstamp, gsg,
         sgs, sgn, sglive, sgmask, sgmin, sgmax, sgbucket, sgu, sglist, usemask, H, flat, off, size, k, state, pieces,
         budget, first):  # pragma: no cover - compiled
    """Make at most ``budget`` clusters.

    ``X0``/``L0``: every candidate's numeric values and leaf codes by tuple position; ``remaining``: its
    records left (by tuple position, updated in place). Members (candidates by group): ``mpos`` tuple
    position, ``mX`` values, ``mrem`` records left, ``mgrp`` group. Groups (by supergroup): members ``gs[g]``
    .. ``gs[g] + gcnt[g]`` (compacted in place to those with records when ``gdirty[g]`` and the group is
    opened), ``glive`` members with records, ``gL`` codes, ``gmin``/``gmax`` per numeric column the bounds of
    its members' values, ``gbucket`` its bucket in the cluster ``gstamp``, ``gsg`` its supergroup.
    Supergroups: groups ``sgs[s]`` .. ``sgs[s] + sgn[s]``, ``sglive`` members with records, ``sgmask`` per
    QI with ``usemask`` the bit mask of the codes of its groups (the others' codes are the same in all its
    groups), ``sgmin``/``sgmax`` value bounds, ``sgbucket``/``sgu`` scratch; ``sglist`` the supergroups that
    may have records (compacted now and then). ``state`` (int64: [r, next seed member or -1, left,
    cluster_id, n_pieces, n_sglist, n_sgdead], r a tuple position) and ``pieces`` (rows: tuple position,
    cluster, records) are updated in place."""
    p = mX.shape[1]
    c = gL.shape[1]
    r = state[0]
    s = state[1]
    left = state[2]
    cluster_id = state[3]
    n_pieces = state[4]
    n_sglist = state[5]
    n_sgdead = state[6]
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
    levmask = np.zeros((c, height + 1), dtype=np.uint64)
    one = np.uint64(1)
    zero = np.uint64(0)
    mean = np.empty(p, dtype=np.float64)
    sums = np.empty(p, dtype=np.float64)
    xs = np.empty(p, dtype=np.float64)
    ls = np.empty(c, dtype=np.int64)
    tv = np.empty(c, dtype=np.float64)
    level = np.zeros(c, dtype=np.int64)
    hist = np.zeros(NB, dtype=np.int64)
    inv = NB / max(c, 1)
    n_top = k + 1
    topv = np.empty(n_top, dtype=np.float64)
    topa = np.empty(n_top, dtype=np.int64)
    topp = np.empty(n_top, dtype=np.int64)
    sub = np.empty(mX.shape[0], dtype=np.int64)
    made = 0
    if left >= k and s < 0:
        # the first seed: the candidate farthest from r (first maximum: the lowest tuple position)
        best = -np.inf
        best_pos = -1
        for i in range(mX.shape[0]):
            if mrem[i] <= 0:
                continue
            g = mgrp[i]
            v = 0.0
            if p:
                v = abs(mX[i, 0] - X0[r, 0])
                for j in range(1, p):
                    v += abs(mX[i, j] - X0[r, j])
            for t in range(c):
                v += flat[off[t] + gL[g, t] * size[t] + L0[r, t]] / H[t]
            if v > best or (v == best and mpos[i] < best_pos):
                best = v
                best_pos = mpos[i]
                s = i
    while left >= k and made < budget:
        if s < 0:  # unreachable: the left records are some candidate's
            raise RuntimeError("k-member: no seed for the cluster")
        seed = mpos[s]
        gseed = mgrp[s]
        take = min(mrem[s], k)
        mrem[s] -= take
        remaining[seed] -= take
        if mrem[s] == 0:
            gdirty[gseed] = 1
            glive[gseed] -= 1
            sglive[gsg[gseed]] -= 1
            if sglive[gsg[gseed]] == 0:
                n_sgdead += 1
        size_now = take
        pieces[n_pieces, 0] = seed
        pieces[n_pieces, 1] = cluster_id
        pieces[n_pieces, 2] = take
        n_pieces += 1
        for j in range(p):
            xs[j] = mX[s, j]
        for t in range(c):
            ls[t] = gL[gseed, t]
        # the seed's row of each LCA table: a candidate's level and term by its leaf; per QI with masks the
        # codes at each level
        for t in range(c):
            for lv in range(height + 1):
                levmask[t, lv] = zero
            for b in range(size[t]):
                lv = flat[off[t] + b * size[t] + ls[t]]
                rowlv[t, b] = lv
                rowterm[t, b] = term[t, lv]
                if usemask[t]:
                    levmask[t, lv] |= one << np.uint64(b)
        # drop the supergroups without records once they are many
        if n_sgdead * 16 > n_sglist:
            n = 0
            for q in range(n_sglist):
                sg = sglist[q]
                if sglive[sg] > 0:
                    sglist[n] = sg
                    n += 1
            n_sglist = n
            n_sgdead = 0
        # one pass over the supergroups: an upper bound of the members' distances to the seed and a lower
        # bound of their categorical part (its bucket), from the extreme values and levels present
        for b in range(NB):
            hist[b] = 0
        best_sg = -1
        best_u = -np.inf
        for q in range(n_sglist):
            sg = sglist[q]
            if sglive[sg] <= 0:
                continue
            u = 0.0
            if p:
                u = max(abs(sgmin[sg, 0] - xs[0]), abs(sgmax[sg, 0] - xs[0]))
                for j in range(1, p):
                    u += max(abs(sgmin[sg, j] - xs[j]), abs(sgmax[sg, j] - xs[j]))
            w = 0.0
            g0 = sgs[sg]
            for t in range(c):
                if usemask[t]:
                    msk = sgmask[sg, t]
                    lo = -1
                    hi = 0
                    for lv in range(int(H[t]) + 1):
                        if msk & levmask[t, lv]:
                            if lo < 0:
                                lo = lv
                            hi = lv
                    u += term[t, hi]
                    w += term[t, lo]
                else:
                    tt = rowterm[t, gL[g0, t]]
                    u += tt
                    w += tt
            sgu[sg] = u
            bk = min(int(w * inv), NB - 1)
            sgbucket[sg] = bk
            hist[bk] += sglive[sg]
            if u > best_u:
                best_u = u
                best_sg = sg
        # the k + 1 farthest (largest distance, then lowest tuple position; as Encoded.distance_to_item
        # computes it) among the members of the supergroups and groups whose bound reaches them, the
        # supergroup of the largest bound first: the next seed is the first of them still with records
        m = 0
        for q in range(-1, n_sglist):
            if q < 0:
                sg = best_sg
            else:
                sg = sglist[q]
                if sg == best_sg:
                    continue
            if sg < 0 or sglive[sg] <= 0:
                continue
            if m == n_top and sgu[sg] < topv[n_top - 1]:
                continue
            for g in range(sgs[sg], sgs[sg] + sgn[sg]):
                if glive[g] <= 0:
                    continue
                if gdirty[g]:
                    # the members without records leave the group; its bounds from those left
                    a0 = gs[g]
                    n = a0
                    for i in range(a0, a0 + gcnt[g]):
                        if mrem[i] > 0:
                            if n != i:
                                mpos[n] = mpos[i]
                                mrem[n] = mrem[i]
                                for j in range(p):
                                    mX[n, j] = mX[i, j]
                            n += 1
                    gcnt[g] = n - a0
                    for j in range(p):
                        lo_x = mX[a0, j]
                        hi_x = lo_x
                        for i in range(a0 + 1, n):
                            x = mX[i, j]
                            if x < lo_x:
                                lo_x = x
                            if x > hi_x:
                                hi_x = x
                        gmin[g, j] = lo_x
                        gmax[g, j] = hi_x
                    gdirty[g] = 0
                w = 0.0
                for t in range(c):
                    tv[t] = rowterm[t, gL[g, t]]
                    w += tv[t]
                gbucket[g] = min(int(w * inv), NB - 1)
                gstamp[g] = cluster_id
                if m == n_top:
                    u = 0.0
                    if p:
                        u = max(abs(gmin[g, 0] - xs[0]), abs(gmax[g, 0] - xs[0]))
                        for j in range(1, p):
                            u += max(abs(gmin[g, j] - xs[j]), abs(gmax[g, j] - xs[j]))
                    for t in range(c):
                        u += tv[t]
                    if u < topv[n_top - 1]:
                        continue
                for i in range(gs[g], gs[g] + gcnt[g]):
                    v = 0.0
                    if p:
                        v = abs(mX[i, 0] - xs[0])
                        for j in range(1, p):
                            v += abs(mX[i, j] - xs[j])
                    for t in range(c):
                        v += tv[t]
                    pi = mpos[i]
                    if m < n_top or v > topv[n_top - 1] or (v == topv[n_top - 1] and pi < topp[n_top - 1]):
                        qq = min(m, n_top - 1)
                        while qq > 0 and (topv[qq - 1] < v or (topv[qq - 1] == v and topp[qq - 1] > pi)):
                            topv[qq] = topv[qq - 1]
                            topa[qq] = topa[qq - 1]
                            topp[qq] = topp[qq - 1]
                            qq -= 1
                        topv[qq] = v
                        topa[qq] = i
                        topp[qq] = pi
                        if m < n_top:
                            m += 1
            # the supergroup's bounds from its groups with records (tighter as members leave)
            for j in range(p):
                sgmin[sg, j] = np.inf
                sgmax[sg, j] = -np.inf
            for t in range(c):
                if usemask[t]:
                    sgmask[sg, t] = zero
            for g in range(sgs[sg], sgs[sg] + sgn[sg]):
                if glive[g] <= 0:
                    continue
                for j in range(p):
                    sgmin[sg, j] = min(sgmin[sg, j], gmin[g, j])
                    sgmax[sg, j] = max(sgmax[sg, j], gmax[g, j])
                for t in range(c):
                    if usemask[t]:
                        sgmask[sg, t] |= one << np.uint64(gL[g, t])
        if size_now < k:
            acc = 0
            top = NB - 1
            for b in range(NB):
                acc += hist[b]
                if acc >= first:
                    top = b
                    break
            for j in range(p):
                sums[j] = xs[j] * take
            count = take
            for t in range(c):
                level[t] = 0
            n_sub = -1  # the candidates to try: built below
            while size_now < k:
                for j in range(p):
                    mean[j] = sums[j] / max(count, 1)
                while True:
                    while n_sub < 0:
                        # the members of the groups of a bucket up to top (a supergroup of a higher lower
                        # bound has none); none there: top rises to the next bucket that has some
                        n_sub = 0
                        nxt = NB
                        for q in range(n_sglist):
                            sg = sglist[q]
                            if sglive[sg] <= 0:
                                continue
                            if sgbucket[sg] > top:
                                nxt = min(nxt, sgbucket[sg])
                                continue
                            for g in range(sgs[sg], sgs[sg] + sgn[sg]):
                                if glive[g] <= 0:
                                    continue
                                if gstamp[g] != cluster_id:
                                    w = 0.0
                                    for t in range(c):
                                        w += rowterm[t, gL[g, t]]
                                    gbucket[g] = min(int(w * inv), NB - 1)
                                    gstamp[g] = cluster_id
                                if gbucket[g] > top:
                                    nxt = min(nxt, gbucket[g])
                                    continue
                                for i in range(gs[g], gs[g] + gcnt[g]):
                                    if mrem[i] > 0:
                                        sub[n_sub] = i
                                        n_sub += 1
                        if n_sub == 0:
                            if nxt == NB:  # unreachable: the candidates hold the left records
                                raise RuntimeError("k-member: no candidate for the cluster")
                            top = nxt
                            n_sub = -1
                    # the first minimum (lowest tuple position among the smallest) among the candidates tried:
                    # the distance to the centroid is at least the categorical part with the seed (terms >= 0,
                    # max(.) >= each, rounding monotone), so a candidate of a higher bucket than the minimum's
                    # cannot reach it
                    pick = -1
                    pick_pos = -1
                    low = np.inf
                    for q in range(n_sub):
                        i = sub[q]
                        if mrem[i] == 0:
                            continue
                        pi = mpos[i]
                        g = mgrp[i]
                        v = 0.0
                        if p:
                            v = abs(mX[i, 0] - mean[0])
                            for j in range(1, p):
                                v += abs(mX[i, j] - mean[j])
                        # once the partial sum passes the best so far (or ties it from a later position), the
                        # full one cannot beat it
                        t = 0
                        while t < c and (v < low or (v == low and pi < pick_pos)):
                            lv = rowlv[t, gL[g, t]]
                            if level[t]:
                                v += max(term[t, lv], term[t, level[t]])
                            else:
                                v += term[t, lv]
                            t += 1
                        if v < low or (v == low and pi < pick_pos):
                            low = v
                            pick = i
                            pick_pos = pi
                    if pick < 0:
                        # every candidate tried has left (the cluster took them): the next buckets
                        n_sub = -1
                        continue
                    lb = min(int(low * inv), NB - 1)
                    if lb <= top:
                        break
                    # a candidate of a bucket up to the minimum's might reach it: try them all
                    top = lb
                    n_sub = -1
                take = min(mrem[pick], k - size_now)
                count += take
                for _ in range(take):
                    for j in range(p):
                        sums[j] = sums[j] + mX[pick, j]
                g = mgrp[pick]
                for t in range(c):
                    lv = rowlv[t, gL[g, t]]
                    if lv > level[t]:
                        level[t] = lv
                mrem[pick] -= take
                remaining[pick_pos] -= take
                if mrem[pick] == 0:
                    gdirty[g] = 1
                    glive[g] -= 1
                    sglive[gsg[g]] -= 1
                    if sglive[gsg[g]] == 0:
                        n_sgdead += 1
                size_now += take
                pieces[n_pieces, 0] = pick_pos
                pieces[n_pieces, 1] = cluster_id
                pieces[n_pieces, 2] = take
                n_pieces += 1
        cluster_id += 1
        left -= k
        r = seed
        made += 1
        # the next seed: the first of the farthest still with records (at most k candidates lost their
        # last records in this cluster, k + 1 are kept); members move only when their group is next opened
        s = -1
        for q in range(m):
            if mrem[topa[q]] > 0:
                s = topa[q]
                break
    state[0] = r
    state[1] = s
    state[2] = left
    state[3] = cluster_id
    state[4] = n_pieces
    state[5] = n_sglist
    state[6] = n_sgdead
    return made
