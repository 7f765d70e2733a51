"""Compiled (numba) MDAV grouping loop for large tables: the same choices as microaggregation_mdav.mdav_groups.

Imported only by ``microaggregation_mdav`` when numba (the optional ``fast`` extra) can be set up and the
table is large enough to repay numba's import; without it the numpy loop groups the rows identically.

Same operations in the same order: the centroid's sums added left to right over the remaining rows in row
order; each distance term computed in double, rounded to single precision and added in single precision in
column order; r and s the first farthest rows; the k nearest in ascending distance with the later row first on
a tie. What differs is the work per round: one pass for the distance to the centroid, one per group that computes
the distances, the farthest row and the k nearest (a sorted buffer of k) together, and one that closes the gaps
of the taken rows while adding up the next round's centroid sums (in the same left-to-right row order).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def _distance(C, a, point, point_missing, weights, missing_cost):  # pragma: no cover - compiled
    total = np.float32(0.0)
    for j in range(C.shape[0]):
        value = C[j, a]
        if np.isnan(value) != point_missing[j]:
            total = total + missing_cost[j]
        elif not point_missing[j]:
            diff = value - point[j]
            total = total + np.float32(diff * diff * weights[j])
    return total


@numba.njit(cache=True, nogil=True)
def _take_nearest(C, m, taken, point, point_missing, weights, missing_cost, k, best_d, best_i,
                  want_farthest):  # pragma: no cover - compiled
    """The k nearest not-taken rows to ``point`` in (distance, later row first) order into best_i; the first
    farthest row's position (or -1)."""
    count = 0
    far = -1
    far_d = np.float32(-1.0)
    for a in range(m):
        if taken[a]:
            continue
        d = _distance(C, a, point, point_missing, weights, missing_cost)
        if want_farthest and d > far_d:
            far_d = d
            far = a
        if count < k:
            b = count
            count += 1
        elif d < best_d[k - 1] or (d == best_d[k - 1] and a > best_i[k - 1]):
            b = k - 1
        else:
            continue
        # insert a keeping (distance ascending, later row first)
        while b > 0 and (best_d[b - 1] > d or (best_d[b - 1] == d and best_i[b - 1] < a)):
            best_d[b] = best_d[b - 1]
            best_i[b] = best_i[b - 1]
            b -= 1
        best_d[b] = d
        best_i[b] = a
    return far


@numba.njit(cache=True, nogil=True)
def mdav_loop(C, pos, state, weights, missing_cost, k, group_of_row, members, budget):  # pragma: no cover
    """Run at most ``budget`` rounds. ``C`` (variables × rows, the remaining rows' columns, contiguous and
    compacted after every round) and ``pos`` (their row positions, ascending) are updated in place, as is
    ``state`` (int64: rows remaining m, groups made, members written). group_of_row and members (row positions,
    groups one after another in summing order) are filled; the last group is written once fewer than 2k rows
    remain. Returns True when every row has its group."""
    p = C.shape[0]
    m = state[0]
    groups = state[1]
    written = state[2]
    taken = np.zeros(m, dtype=np.bool_)
    centroid = np.empty(p)
    centroid_missing = np.zeros(p, dtype=np.bool_)
    point = np.empty(p)
    point_missing = np.zeros(p, dtype=np.bool_)
    next_point = np.empty(p)
    best_d = np.empty(k, dtype=np.float32)
    best_i = np.empty(k, dtype=np.int64)
    sums = np.zeros(p)
    present = np.zeros(p, dtype=np.int64)
    # the first round's centroid sums; later rounds get theirs from the pass that closes the gaps
    for a in range(m):
        for j in range(p):
            value = C[j, a]
            if not np.isnan(value):
                sums[j] += value
                present[j] += 1
    rounds = 0
    while m >= 2 * k and rounds < budget:
        rounds += 1
        for j in range(p):
            centroid_missing[j] = present[j] == 0
            centroid[j] = sums[j] / present[j] if present[j] else 0.0
        r = 0
        r_d = np.float32(-1.0)
        for a in range(m):
            d = _distance(C, a, centroid, centroid_missing, weights, missing_cost)
            if d > r_d:
                r_d = d
                r = a
        for j in range(p):
            point[j] = C[j, r]
            point_missing[j] = np.isnan(point[j])
        two = 2 if m >= 3 * k else 1
        for g in range(two):
            far = _take_nearest(C, m, taken, point, point_missing, weights, missing_cost, k, best_d, best_i,
                                g == 0)
            if g == 0:
                for j in range(p):
                    next_point[j] = C[j, far]
            for b in range(k):
                row = pos[best_i[b]]
                taken[best_i[b]] = True
                group_of_row[row] = groups
                members[written] = row
                written += 1
            groups += 1
            for j in range(p):
                point[j] = next_point[j]
                point_missing[j] = np.isnan(point[j])
        # close the gaps and add up the next round's centroid sums in the same pass, left to right in row order
        for j in range(p):
            sums[j] = 0.0
            present[j] = 0
        kept = 0
        for a in range(m):
            if not taken[a]:
                pos[kept] = pos[a]
                for j in range(p):
                    value = C[j, a]
                    C[j, kept] = value
                    if not np.isnan(value):
                        sums[j] += value
                        present[j] += 1
                kept += 1
            taken[a] = False
        m = kept
    done = m < 2 * k
    if done and m > 0:
        for a in range(m):
            group_of_row[pos[a]] = groups
            members[written] = pos[a]
            written += 1
        groups += 1
        m = 0
    state[0] = m
    state[1] = groups
    state[2] = written
    return done
