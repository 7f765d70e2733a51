"""Compiled (numba) grouping of a node's classes by key, for the lattice roll-up (lattice.NodeEvaluator).

Imported only by ``lattice.NodeEvaluator`` once a search has grouped enough classes for the kernel to
repay numba's import and the load of the cached machine code (about 0.6 s per process; the first
run on a machine also compiles, about 1 s, and caches next to this file or in NUMBA_CACHE_DIR).
numba is the optional ``fast`` extra: without it (or where it cannot be set up) numpy groups every node,
with the same classes.

The result is exactly numpy's (sort the keys stably, one class per run of equal keys): a least
significant digit radix sort is stable, so each class's first member is its smallest position, as
with the packed (key, position) sort it replaces; only faster (no comparisons, 11 bits per pass over
the keys' span).
"""

from __future__ import annotations

import numba
import numpy as np

RADIX_BITS = 11


@numba.njit(cache=True, nogil=True)
def group_sorted(key: np.ndarray, sizes: np.ndarray, want_members: bool):  # pragma: no cover - compiled
    """(first, sums, keys, member_class): per class in ascending key order the position of its first
    member, the sum of its members' sizes and its key; per input position its class (only when
    ``want_members``, else an empty array)."""
    n = key.shape[0]
    low = key[0]
    high = key[0]
    for i in range(n):
        v = key[i]
        if v < low:
            low = v
        if v > high:
            high = v
    span = high - low
    bits = 0
    while (span >> bits) > 0:
        bits += 1
    # as few passes of at most RADIX_BITS bits as the span needs, the bits shared evenly between them
    passes = max((bits + RADIX_BITS - 1) // RADIX_BITS, 1)
    width = max((bits + passes - 1) // passes, 1)
    mask = (1 << width) - 1
    count = np.zeros((passes, 1 << width), np.int64)
    va = np.empty(n, np.int64)
    for i in range(n):  # one read of the keys counts the digits of every pass
        v = key[i] - low
        va[i] = v
        for p in range(passes):
            count[p, (v >> (p * width)) & mask] += 1
    ia = np.arange(n).astype(np.int64)
    vb = np.empty(n, np.int64)
    ib = np.empty_like(ia)
    for p in range(passes):
        row = count[p]
        total = 0
        for d in range(1 << width):
            c = row[d]
            row[d] = total
            total += c
        shift = p * width
        for i in range(n):
            v = va[i]
            d = (v >> shift) & mask
            q = row[d]
            row[d] = q + 1
            vb[q] = v
            ib[q] = ia[i]
        va, vb = vb, va
        ia, ib = ib, ia
    first = np.empty(n, np.int64)
    sums = np.empty(n, np.int64)
    keys = np.empty(n, np.int64)
    member_class = np.empty(n if want_members else 0, np.int64)
    g = 0
    previous = -1  # keys minus their minimum are >= 0
    for i in range(n):
        v = va[i]
        at = ia[i]
        if v != previous:
            first[g] = at
            sums[g] = sizes[at]
            keys[g] = v + low
            g += 1
            previous = v
        else:
            sums[g - 1] += sizes[at]
        if want_members:
            member_class[at] = g - 1
    # copies: a cached node must not keep the n-sized buffers alive
    return first[:g].copy(), sums[:g].copy(), keys[:g].copy(), member_class
