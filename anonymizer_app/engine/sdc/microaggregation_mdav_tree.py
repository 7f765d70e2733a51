"""Exact MDAV through a k-d tree (numba): the groups of microaggregation_mdav's loops, without scanning every
remaining record three times per round.

Imported by ``microaggregation_mdav`` for tables without missing cells when numba (the optional ``fast`` extra) is
there. The choices are the loops' own, decided by the same single-precision distances (each variable's term
computed in double, rounded to single precision, added in single precision in column order):

* A static k-d tree over all rows (built once; median splits on the widest weighted spread) keeps, per node, how
  many of its rows remain and the bounding box of those rows (updated as rows are taken). A node is skipped only
  when a bound proves none of its rows can be chosen: the real weighted squared distance to the box, widened by
  the worst rounding of the single-precision formula (relative (p + 1)·2^-24 with p terms, all positive) and an
  absolute 2^-140 per term for subnormal results. Skips are strict, so equal distances are always examined.
* k nearest: ascending distance, the later row first on equal distance (the loops' order); a node is skipped when
  its lower bound exceeds the k-th distance found. Farthest: the first row (lowest row) of the largest distance;
  a node is skipped when its upper bound is below the best distance found.
* The centroid the loops use is the left-to-right sum of the remaining rows' values in row order, divided by
  their count. That sum depends on every rounding of the pass, so it is not kept; an exact running sum
  (double-double, updated as rows are taken) and the worst-case error of a left-to-right sum,
  (m-1)·u/(1-(m-1)·u)·Σ|x|, give an interval that holds the loops' centroid. Every row gets a lowest and a
  highest possible distance over that interval (the formula is monotone in |x - c|). L = the largest lowest
  distance; if every row whose highest distance reaches L has the same values, they tie under the loops'
  centroid whatever it is, and the first of them is the loops' choice. Otherwise (distinct rows within rounding
  of each other) the loops' sum is computed as they compute it (left to right over the remaining rows in row
  order) and the farthest row is searched with that centroid.

Work per round is a few tree searches plus the tree updates of the 2k rows taken: about O(k log n) for spread-out
data instead of O(n); many exactly equal rows (where every one of them must be looked at to order the ties) cost
more, never more than a scan.
"""

from __future__ import annotations

import numba
import numpy as np

LEAF = 8
CANDIDATES = 256  # rows kept as possibly farthest from the centroid during its search (more: a second search)
_U = 2.0 ** -53


@numba.njit(cache=True, nogil=True, inline="always")
def _distance(P, a, q, weights):  # pragma: no cover - compiled
    """The loops' distance: each term in double rounded to single precision, added in single precision."""
    total = np.float32(0.0)
    for j in range(P.shape[1]):
        diff = P[a, j] - q[j]
        total = total + np.float32(diff * diff * weights[j])
    return total


@numba.njit(cache=True, nogil=True)
def _select(perm, P, start, end, nth, dim):  # pragma: no cover - compiled
    """Reorder perm[start:end] so that perm[nth] holds the row of rank nth by P[:, dim] (three-way quickselect:
    many equal values cost no more than distinct ones)."""
    lo = start
    hi = end - 1
    while lo < hi:
        mid = (lo + hi) // 2
        a, b, c = P[perm[lo], dim], P[perm[mid], dim], P[perm[hi], dim]
        pivot = max(min(a, b), min(max(a, b), c))  # median of three
        lt = lo
        gt = hi
        i = lo
        while i <= gt:
            v = P[perm[i], dim]
            if v < pivot:
                perm[lt], perm[i] = perm[i], perm[lt]
                lt += 1
                i += 1
            elif v > pivot:
                perm[gt], perm[i] = perm[i], perm[gt]
                gt -= 1
            else:
                i += 1
        if nth < lt:
            hi = lt - 1
        elif nth > gt:
            lo = gt + 1
        else:
            return


@numba.njit(cache=True, nogil=True)
def build_tree(x, weights):  # pragma: no cover - compiled
    """The tree over the rows of x (n × p): points in tree order, their rows, node ranges and children, parents,
    each position's leaf, boxes and counts."""
    n, p = x.shape
    perm = np.arange(n)
    capacity = 2 * (n // LEAF + 1) * 2 + 1
    start = np.zeros(capacity, dtype=np.int64)
    end = np.zeros(capacity, dtype=np.int64)
    left = np.full(capacity, -1, dtype=np.int64)
    right = np.full(capacity, -1, dtype=np.int64)
    parent = np.full(capacity, -1, dtype=np.int64)
    nodes = 1
    start[0] = 0
    end[0] = n
    stack = np.empty(capacity, dtype=np.int64)
    top = 0
    stack[top] = 0
    top += 1
    while top > 0:
        top -= 1
        node = stack[top]
        s, e = start[node], end[node]
        if e - s <= LEAF:
            continue
        best_dim = 0
        best_spread = -1.0
        for j in range(p):
            lo = np.inf
            hi = -np.inf
            for i in range(s, e):
                v = x[perm[i], j]
                lo = min(lo, v)
                hi = max(hi, v)
            spread = (hi - lo) * (hi - lo) * weights[j]
            if spread > best_spread:
                best_spread = spread
                best_dim = j
        mid = (s + e) // 2
        _select(perm, x, s, e, mid, best_dim)
        for child, cs, ce in ((nodes, s, mid), (nodes + 1, mid, e)):
            start[child] = cs
            end[child] = ce
            parent[child] = node
            stack[top] = child
            top += 1
        left[node] = nodes
        right[node] = nodes + 1
        nodes += 2
    P = np.empty((n, p))
    for i in range(n):
        for j in range(p):
            P[i, j] = x[perm[i], j]
    leaf_of = np.empty(n, dtype=np.int64)
    lo_box = np.empty((nodes, p))
    hi_box = np.empty((nodes, p))
    count = np.zeros(nodes, dtype=np.int64)
    for node in range(nodes - 1, -1, -1):  # children come after their parent
        if left[node] < 0:
            for j in range(p):
                lo_box[node, j] = np.inf
                hi_box[node, j] = -np.inf
            for i in range(start[node], end[node]):
                leaf_of[i] = node
                for j in range(p):
                    lo_box[node, j] = min(lo_box[node, j], P[i, j])
                    hi_box[node, j] = max(hi_box[node, j], P[i, j])
        else:
            for j in range(p):
                lo_box[node, j] = min(lo_box[left[node], j], lo_box[right[node], j])
                hi_box[node, j] = max(hi_box[left[node], j], hi_box[right[node], j])
        count[node] = end[node] - start[node]
    return (P, perm, start[:nodes].copy(), end[:nodes].copy(), left[:nodes].copy(), right[:nodes].copy(),
            parent[:nodes].copy(), leaf_of, lo_box, hi_box, count)


@numba.njit(cache=True, nogil=True)
def _take(t, P, alive, start, end, left, right, parent, leaf_of, lo_box, hi_box, count):  # pragma: no cover
    """Take tree position t out: its leaf's box is recomputed over the rows left, the ancestors' from their
    children."""
    p = P.shape[1]
    alive[t] = False
    node = leaf_of[t]
    count[node] -= 1
    for j in range(p):
        lo_box[node, j] = np.inf
        hi_box[node, j] = -np.inf
    for i in range(start[node], end[node]):
        if alive[i]:
            for j in range(p):
                lo_box[node, j] = min(lo_box[node, j], P[i, j])
                hi_box[node, j] = max(hi_box[node, j], P[i, j])
    node = parent[node]
    while node >= 0:
        count[node] -= 1
        a, b = left[node], right[node]
        for j in range(p):
            if count[a] > 0 and count[b] > 0:
                lo_box[node, j] = min(lo_box[a, j], lo_box[b, j])
                hi_box[node, j] = max(hi_box[a, j], hi_box[b, j])
            elif count[a] > 0:
                lo_box[node, j] = lo_box[a, j]
                hi_box[node, j] = hi_box[a, j]
            else:
                lo_box[node, j] = lo_box[b, j]
                hi_box[node, j] = hi_box[b, j]
        node = parent[node]


@numba.njit(cache=True, nogil=True, inline="always")
def _lower(node, q, weights, lo_box, hi_box, eps, tiny):  # pragma: no cover - compiled
    """At most the computed distance of any row in the node's box."""
    total = 0.0
    for j in range(q.shape[0]):
        gap = max(lo_box[node, j] - q[j], q[j] - hi_box[node, j], 0.0)
        total += gap * gap * weights[j]
    return total * (1.0 - eps) - tiny


@numba.njit(cache=True, nogil=True, inline="always")
def _upper(node, q_lo, q_hi, weights, lo_box, hi_box, eps, tiny):  # pragma: no cover - compiled
    """At least the computed distance of any row in the node's box to any point of the box [q_lo, q_hi]."""
    total = 0.0
    for j in range(q_lo.shape[0]):
        reach = max(abs(hi_box[node, j] - q_lo[j]), abs(q_hi[j] - lo_box[node, j]))
        total += reach * reach * weights[j]
    return total * (1.0 + eps) + tiny


@numba.njit(cache=True, nogil=True)
def _farthest(q, P, perm, alive, left, right, start, end, count, lo_box, hi_box, weights, eps, tiny,
              stack):  # pragma: no cover - compiled
    """Tree position of the first (lowest row) remaining row at the largest computed distance from q."""
    best_d = np.float32(-1.0)
    best_t = -1
    best_row = np.iinfo(np.int64).max
    top = 0
    stack[top] = 0
    top += 1
    while top > 0:
        top -= 1
        node = stack[top]
        if count[node] == 0 or _upper(node, q, q, weights, lo_box, hi_box, eps, tiny) < best_d:
            continue
        a = left[node]
        if a < 0:
            for t in range(start[node], end[node]):
                if alive[t]:
                    d = _distance(P, t, q, weights)
                    if d > best_d or (d == best_d and perm[t] < best_row):
                        best_d = d
                        best_t = t
                        best_row = perm[t]
            continue
        b = right[node]
        if _upper(a, q, q, weights, lo_box, hi_box, eps, tiny) > _upper(b, q, q, weights, lo_box, hi_box, eps,
                                                                         tiny):
            a, b = b, a
        stack[top] = a  # the farther-looking child is searched first
        stack[top + 1] = b
        top += 2
    return best_t


@numba.njit(cache=True, nogil=True)
def _nearest(q, k, P, perm, alive, left, right, start, end, count, lo_box, hi_box, weights, eps, tiny, stack,
             best_d, best_t):  # pragma: no cover - compiled
    """The k nearest remaining rows to q into best_t (tree positions), in the loops' order: ascending distance,
    the later row first on equal distance. Returns how many were found (k, or fewer rows remaining)."""
    filled = 0
    top = 0
    stack[top] = 0
    top += 1
    while top > 0:
        top -= 1
        node = stack[top]
        if count[node] == 0:
            continue
        if filled == k and _lower(node, q, weights, lo_box, hi_box, eps, tiny) > best_d[k - 1]:
            continue
        a = left[node]
        if a < 0:
            for t in range(start[node], end[node]):
                if not alive[t]:
                    continue
                d = _distance(P, t, q, weights)
                row = perm[t]
                if filled < k:
                    slot = filled
                    filled += 1
                elif d < best_d[k - 1] or (d == best_d[k - 1] and row > perm[best_t[k - 1]]):
                    slot = k - 1
                else:
                    continue
                while slot > 0 and (best_d[slot - 1] > d or (best_d[slot - 1] == d and perm[best_t[slot - 1]] < row)):
                    best_d[slot] = best_d[slot - 1]
                    best_t[slot] = best_t[slot - 1]
                    slot -= 1
                best_d[slot] = d
                best_t[slot] = t
            continue
        b = right[node]
        if _lower(a, q, weights, lo_box, hi_box, eps, tiny) < _lower(b, q, weights, lo_box, hi_box, eps, tiny):
            a, b = b, a
        stack[top] = a
        stack[top + 1] = b  # the nearer-looking child is searched first
        top += 2
    return filled


@numba.njit(cache=True, nogil=True, inline="always")
def _term(diff, w):  # pragma: no cover - compiled
    return np.float32(diff * diff * w)


@numba.njit(cache=True, nogil=True)
def _centroid_farthest(c_lo, c_hi, P, perm, alive, left, right, start, end, count, lo_box, hi_box, weights,
                       eps, tiny, stack, cand_t, cand_h):  # pragma: no cover - compiled
    """The loops' farthest row from a centroid known only to lie in [c_lo, c_hi], when that interval decides it:
    its tree position, or -1 when distinct rows stay within rounding of the largest distance.

    One search finds L, the largest lowest-possible distance, and keeps every row whose highest-possible distance
    reached the L found so far (L only grows, so the rows that reach the final L are among them); a second search
    collects them only when more than the buffer holds."""
    p = P.shape[1]
    capacity = cand_t.shape[0]
    kept = 0
    overflow = False
    best_lo = np.float32(-1.0)
    top = 0
    stack[top] = 0
    top += 1
    while top > 0:
        top -= 1
        node = stack[top]
        if count[node] == 0 or _upper(node, c_lo, c_hi, weights, lo_box, hi_box, eps, tiny) < best_lo:
            continue
        a = left[node]
        if a < 0:
            for t in range(start[node], end[node]):
                if not alive[t]:
                    continue
                low = np.float32(0.0)
                high = np.float32(0.0)
                for j in range(p):
                    d1 = P[t, j] - c_hi[j]
                    d2 = P[t, j] - c_lo[j]
                    near = 0.0 if d1 <= 0.0 <= d2 else min(abs(d1), abs(d2))
                    low = low + _term(near, weights[j])
                    high = high + _term(max(abs(d1), abs(d2)), weights[j])
                if low > best_lo:
                    best_lo = low
                if high < best_lo or overflow:
                    continue
                if kept == capacity:  # drop the rows the grown L has left behind
                    fill = 0
                    for i in range(kept):
                        if cand_h[i] >= best_lo:
                            cand_t[fill] = cand_t[i]
                            cand_h[fill] = cand_h[i]
                            fill += 1
                    kept = fill
                    if kept == capacity:
                        overflow = True
                        continue
                cand_t[kept] = t
                cand_h[kept] = high
                kept += 1
            continue
        b = right[node]
        if _upper(a, c_lo, c_hi, weights, lo_box, hi_box, eps, tiny) > _upper(b, c_lo, c_hi, weights, lo_box,
                                                                               hi_box, eps, tiny):
            a, b = b, a
        stack[top] = a
        stack[top + 1] = b
        top += 2
    first_t = -1
    first_row = np.iinfo(np.int64).max
    if not overflow:  # the rows whose highest-possible distance reaches L: all equal rows, or undecided
        for i in range(kept):
            if cand_h[i] < best_lo:
                continue
            t = cand_t[i]
            if first_t < 0:
                first_t = t
                first_row = perm[t]
                continue
            for j in range(p):
                if P[t, j] != P[first_t, j]:
                    return -1
            if perm[t] < first_row:
                first_t = t
                first_row = perm[t]
        return first_t
    top = 0
    stack[top] = 0
    top += 1
    while top > 0:
        top -= 1
        node = stack[top]
        if count[node] == 0 or _upper(node, c_lo, c_hi, weights, lo_box, hi_box, eps, tiny) < best_lo:
            continue
        a = left[node]
        if a < 0:
            for t in range(start[node], end[node]):
                if not alive[t]:
                    continue
                high = np.float32(0.0)
                for j in range(p):
                    far = max(abs(P[t, j] - c_hi[j]), abs(P[t, j] - c_lo[j]))
                    high = high + _term(far, weights[j])
                if high < best_lo:
                    continue
                if first_t < 0:
                    first_t = t
                    first_row = perm[t]
                    continue
                for j in range(p):
                    if P[t, j] != P[first_t, j]:
                        return -1
                if perm[t] < first_row:
                    first_t = t
                    first_row = perm[t]
            continue
        stack[top] = a
        stack[top + 1] = right[node]
        top += 2
    return first_t


@numba.njit(cache=True, nogil=True, inline="always")
def _two_sum(a, b):  # pragma: no cover - compiled
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@numba.njit(cache=True, nogil=True)
def mdav_tree_loop(x, weights, k, P, perm, start, end, left, right, parent, leaf_of, lo_box, hi_box, count, alive,
                   sums, state, seq, group_of_row, members, budget, candidates):  # pragma: no cover - compiled
    """Run at most ``budget`` rounds of MDAV on the tree (arrays of build_tree; ``alive`` per tree position).
    ``sums`` (p × 4): per variable the exact running sum of the remaining values as a double-double (hi, lo),
    the running sum of their absolute values and that of all rows; ``state`` (int64): rows remaining m, groups
    made, members written, rows taken so far, rounds that needed the loops' own centroid sum, live length of
    ``seq``; ``seq``: the remaining rows in row order (compacted when the loops' sum is needed). group_of_row and
    members (row positions, groups one after another in summing order) are filled; ``candidates``: the size of the
    buffer of the centroid's search (CANDIDATES; the tests make it small). Returns True when every row has its
    group."""
    n, p = x.shape
    m = state[0]
    groups = state[1]
    written = state[2]
    taken_total = state[3]
    exact_rounds = state[4]
    seq_len = state[5]
    eps = (p + 2) * 2.0 ** -23
    tiny = p * 2.0 ** -140
    stack = np.empty(2 * start.shape[0] + 64, dtype=np.int64)
    best_d = np.empty(k, dtype=np.float32)
    best_t = np.empty(k, dtype=np.int64)
    cand_t = np.empty(candidates, dtype=np.int64)
    cand_h = np.empty(candidates, dtype=np.float32)
    c_lo = np.empty(p)
    c_hi = np.empty(p)
    c = np.empty(p)
    q = np.empty(p)
    s_point = np.empty(p)
    rounds = 0
    while m >= 2 * k and rounds < budget:
        rounds += 1
        # the interval that holds the loops' centroid: exact sum ± the error bound of a left-to-right sum
        steps = float(n + taken_total)
        gamma = (m - 1) * _U / (1.0 - (m - 1) * _U)
        for j in range(p):
            abs_bound = sums[j, 2] + steps * _U * 2.0 * sums[j, 3]
            s = sums[j, 0] + sums[j, 1]
            err = (gamma * abs_bound * (1.0 + 4 * _U) + steps * steps * _U * _U * 4.0 * sums[j, 3]
                   + (abs(s) + sums[j, 3]) * 2 * _U)
            lo_v = (s - err) / m
            hi_v = (s + err) / m
            c_lo[j] = lo_v - abs(lo_v) * 4 * _U - 1e-300
            c_hi[j] = hi_v + abs(hi_v) * 4 * _U + 1e-300
        r = _centroid_farthest(c_lo, c_hi, P, perm, alive, left, right, start, end, count, lo_box, hi_box,
                               weights, eps, tiny, stack, cand_t, cand_h)
        if r < 0:
            # distinct rows within rounding: the loops' own sum, left to right over the remaining rows
            exact_rounds += 1
            kept = 0
            for i in range(seq_len):
                if group_of_row[seq[i]] < 0:
                    seq[kept] = seq[i]
                    kept += 1
            seq_len = kept
            for j in range(p):
                total = 0.0
                for i in range(seq_len):
                    total += x[seq[i], j]
                c[j] = total / m
            r = _farthest(c, P, perm, alive, left, right, start, end, count, lo_box, hi_box, weights, eps, tiny,
                          stack)
        for j in range(p):
            q[j] = P[r, j]
        two = 2 if m >= 3 * k else 1
        if two == 2:
            s_t = _farthest(q, P, perm, alive, left, right, start, end, count, lo_box, hi_box, weights, eps, tiny,
                            stack)
            for j in range(p):
                s_point[j] = P[s_t, j]
        for _ in range(two):
            found = _nearest(q, k, P, perm, alive, left, right, start, end, count, lo_box, hi_box, weights, eps,
                             tiny, stack, best_d, best_t)
            for b in range(found):
                t = best_t[b]
                row = perm[t]
                group_of_row[row] = groups
                members[written] = row
                written += 1
                _take(t, P, alive, start, end, left, right, parent, leaf_of, lo_box, hi_box, count)
                for j in range(p):
                    v = P[t, j]
                    hi, e = _two_sum(sums[j, 0], -v)
                    sums[j, 0] = hi
                    sums[j, 1] += e
                    sums[j, 2] -= abs(v)
                taken_total += 1
            m -= found
            groups += 1
            for j in range(p):
                q[j] = s_point[j]
    done = m < 2 * k
    if done and m > 0:
        for t in range(n):
            if alive[t]:
                group_of_row[perm[t]] = groups
        for i in range(seq_len):  # the last group's members in row order, as the loops list them
            row = seq[i]
            if group_of_row[row] == groups:
                members[written] = row
                written += 1
        groups += 1
        m = 0
    state[0] = m
    state[1] = groups
    state[2] = written
    state[3] = taken_total
    state[4] = exact_rounds
    state[5] = seq_len
    return done
