"""Compiled (numba) loops over set-valued records (CSR: ``codes[offsets[r]:offsets[r + 1]]``), for large
record sets.

Imported only through :func:`.kernels.load` once the records hold enough occurrences to repay numba's
import and the load of the cached machine code (about 1.1 s CPU per process; the first run on a machine
also compiles and caches next to this file, or in NUMBA_CACHE_DIR). numba is the optional ``fast``
extra: without it the numpy paths of :mod:`.itemsets`, :mod:`.transactions` and :mod:`.anonymize` give the
same results.

Each loop reads every record once, without a sort of all occurrences: ``image`` maps a code to its image
(a node id, a published code, or the code itself), -1 drops it, and an image already met in the record is
dropped (its first appearance is kept, as a stable sort keeps it): a marker per image (the last record
that held it) tells a repeat. Where a record's images are wanted in ascending order they are marked in a
bitmap of ``base`` bits and read out word by word, without comparing them. Outputs are written into one
buffer as long as the input and returned with the length used (the caller takes a view: no copy).
"""

from __future__ import annotations

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

ONE = np.uint64(1)


@numba.njit(cache=True, nogil=True, inline="always")
def _ascending(words: np.ndarray, lo: int, hi: int, held: np.ndarray) -> int:  # pragma: no cover - compiled
    """The codes marked in ``words[lo:hi + 1]`` into ``held``, ascending; the words cleared. Returns their count."""
    size = 0
    for at in range(lo, hi + 1):
        x = words[at]
        words[at] = 0
        while x:
            held[size] = (at << 6) + trailing_zeros(x)  # type: ignore[call-arg]  # an intrinsic: typed by numba
            size += 1
            x &= x - ONE
    return size


@numba.njit(cache=True, nogil=True, inline="always")
def _record_ascending(offsets: np.ndarray, codes: np.ndarray, image: np.ndarray, r: int, words: np.ndarray,
                      held: np.ndarray) -> int:  # pragma: no cover - compiled
    """Record r's images (-1 dropped) as a set into ``held``, ascending (marked in ``words``, which are left
    cleared). Returns their count."""
    lo = words.shape[0]
    hi = -1
    for i in range(offsets[r], offsets[r + 1]):
        c = image[codes[i]]
        if c < 0:
            continue
        at = c >> 6
        words[at] |= ONE << np.uint64(c & 63)
        lo = min(lo, at)
        hi = max(hi, at)
    return _ascending(words, lo, hi, held)


@numba.njit(cache=True, nogil=True)
def image_sets(offsets: np.ndarray, codes: np.ndarray, image: np.ndarray, base: int,
               ordered: bool):  # pragma: no cover - compiled
    """(bounds, out, used): every record's images as a set, ``out[bounds[r]:bounds[r + 1]]`` (``used`` =
    bounds[-1]), in first-appearance order, or ascending (``ordered``). ``base``: above every image."""
    n = offsets.shape[0] - 1
    out = np.empty(codes.shape[0], np.int64)
    bounds = np.empty(n + 1, np.int64)
    bounds[0] = 0
    w = 0
    if ordered:
        words = np.zeros((base + 63) // 64, np.uint64)
        for r in range(n):
            w += _record_ascending(offsets, codes, image, r, words, out[w:])
            bounds[r + 1] = w
        return bounds, out, w
    seen = np.full(base, -1, np.int64)
    for r in range(n):
        for i in range(offsets[r], offsets[r + 1]):
            c = image[codes[i]]
            if c < 0 or seen[c] == r:
                continue
            seen[c] = r
            out[w] = c
            w += 1
        bounds[r + 1] = w
    return bounds, out, w


@numba.njit(cache=True, nogil=True)
def images_equal(offsets: np.ndarray, codes: np.ndarray, image: np.ndarray, base: int, shown_offsets: np.ndarray,
                 shown_codes: np.ndarray) -> bool:  # pragma: no cover - compiled
    """Whether every record's images as a set, in first-appearance order (:func:`image_sets`), are the
    codes of the same record of ``shown`` one for one (then the same sets, none shown twice)."""
    n = offsets.shape[0] - 1
    if shown_offsets.shape[0] != n + 1:
        return False
    seen = np.full(base, -1, np.int64)
    for r in range(n):
        w = shown_offsets[r]
        end = shown_offsets[r + 1]
        for i in range(offsets[r], offsets[r + 1]):
            c = image[codes[i]]
            if c < 0 or seen[c] == r:
                continue
            seen[c] = r
            if w >= end or shown_codes[w] != c:
                return False
            w += 1
        if w != end:
            return False
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _count(held: np.ndarray, size: int, singles: np.ndarray, pairs: np.ndarray, base: int,
           pairs_too: bool) -> None:  # pragma: no cover - compiled
    for i in range(size):
        a = held[i]
        singles[a] += 1
        if pairs_too:
            # ascending: a record's pairs run along the rows of its smaller codes (fewer cache misses)
            row = a * base
            for j in range(i + 1, size):
                pairs[row + held[j]] += 1


@numba.njit(cache=True, nogil=True)
def pair_counts(offsets: np.ndarray, codes: np.ndarray, image: np.ndarray, base: int,
                pairs_too: bool):  # pragma: no cover - compiled
    """(singles, pairs) over every record's images as a set: ``singles[a]`` the records holding a,
    ``pairs[a * base + b]`` (a < b) the records holding both (int32: the caller checks that the records
    number below 2**31; a dense table of base * base, empty unless ``pairs_too``)."""
    n = offsets.shape[0] - 1
    words = np.zeros((base + 63) // 64, np.uint64)
    held = np.empty(base, np.int64)
    singles = np.zeros(base, np.int64)
    pairs = np.zeros(base * base if pairs_too else 0, np.int32)
    for r in range(n):
        _count(held, _record_ascending(offsets, codes, image, r, words, held), singles, pairs, base, pairs_too)
    return singles, pairs


@numba.njit(cache=True, nogil=True)
def sets_and_counts(offsets: np.ndarray, codes: np.ndarray, base: int,
                    pairs_too: bool):  # pragma: no cover - compiled
    """:func:`image_sets` of the codes themselves (first-appearance order) and their :func:`pair_counts`,
    in one read: (bounds, out, used, singles, pairs)."""
    n = offsets.shape[0] - 1
    out = np.empty(codes.shape[0], np.int64)
    bounds = np.empty(n + 1, np.int64)
    bounds[0] = 0
    words = np.zeros((base + 63) // 64, np.uint64)
    seen = np.full(base, -1, np.int64)
    held = np.empty(base, np.int64)
    singles = np.zeros(base, np.int64)
    pairs = np.zeros(base * base if pairs_too else 0, np.int32)
    w = 0
    for r in range(n):
        lo = words.shape[0]
        hi = -1
        for i in range(offsets[r], offsets[r + 1]):
            c = codes[i]
            if seen[c] == r:
                continue
            seen[c] = r
            out[w] = c
            w += 1
            at = c >> 6
            words[at] |= ONE << np.uint64(c & 63)
            lo = min(lo, at)
            hi = max(hi, at)
        bounds[r + 1] = w
        _count(held, _ascending(words, lo, hi, held), singles, pairs, base, pairs_too)
    return bounds, out, w, singles, pairs


@numba.njit(cache=True, nogil=True)
def join_items(offsets: np.ndarray, codes: np.ndarray, item_offsets: np.ndarray, item_bytes: np.ndarray,
               delimiter: np.ndarray):  # pragma: no cover - compiled
    """(cell offsets, cell bytes): every record's items (UTF-8, ``item_bytes[item_offsets[c]:item_offsets[c + 1]]``)
    joined by the ``delimiter``'s bytes, the cells one after the other (an Arrow large_string array's buffers)."""
    n = offsets.shape[0] - 1
    bounds = np.empty(n + 1, np.int64)
    bounds[0] = 0
    total = 0
    for r in range(n):
        count = offsets[r + 1] - offsets[r]
        for i in range(offsets[r], offsets[r + 1]):
            total += item_offsets[codes[i] + 1] - item_offsets[codes[i]]
        if count > 1:
            total += (count - 1) * delimiter.shape[0]
        bounds[r + 1] = total
    data = np.empty(total, np.uint8)
    w = 0
    for r in range(n):
        for i in range(offsets[r], offsets[r + 1]):
            if i > offsets[r]:
                for j in range(delimiter.shape[0]):
                    data[w] = delimiter[j]
                    w += 1
            c = codes[i]
            for j in range(item_offsets[c], item_offsets[c + 1]):
                data[w] = item_bytes[j]
                w += 1
    return bounds, data


@numba.njit(cache=True, nogil=True)
def split_cells(cell_offsets: np.ndarray, data: np.ndarray, delimiter: int, most: int,
                capacity: int):  # pragma: no cover - compiled
    """The cells (UTF-8 bytes, ``data[cell_offsets[r]:cell_offsets[r + 1]]``) split at every byte
    ``delimiter`` (a one-byte delimiter: as str.split), empty pieces dropped: (record offsets, codes, starts,
    ends, count), each piece coded by its bytes in order of first appearance, ``data[starts[c]:ends[c]]`` the
    bytes of code c. ``most``: at least the number of pieces (the cells plus the delimiters); ``capacity``
    (a power of two): the distinct pieces held at most (count -1: more, the caller asks again with more)."""
    n = cell_offsets.shape[0] - 1
    codes = np.empty(most, np.int64)
    bounds = np.empty(n + 1, np.int64)
    bounds[0] = 0
    slots = 2 * capacity  # open addressing by the pieces' hashes, at most half full (never grown: arrays
    table = np.full(slots, -1, np.int64)  # reassigned inside the loop cost numba's code 3x)
    starts = np.empty(capacity, np.int64)
    ends = np.empty(capacity, np.int64)
    hashes = np.empty(capacity, np.uint64)
    count = 0
    w = 0
    for r in range(n):
        i = cell_offsets[r]
        end = cell_offsets[r + 1]
        while i < end:
            start = i
            h = np.uint64(14695981039346656037)  # FNV-1a
            while i < end and data[i] != delimiter:
                h = (h ^ np.uint64(data[i])) * np.uint64(1099511628211)
                i += 1
            if i > start:
                # FNV's low bits depend only on the low bits of each step: mixed with the high ones to slot it
                h ^= h >> np.uint64(29)
                h *= np.uint64(0xBF58476D1CE4E5B9)
                h ^= h >> np.uint64(32)
                slot = np.int64(h & np.uint64(slots - 1))
                code = -1
                while table[slot] >= 0:
                    c = table[slot]
                    if hashes[c] == h and ends[c] - starts[c] == i - start:
                        same = True
                        for j in range(i - start):  # the bytes themselves decide, not the hash
                            if data[starts[c] + j] != data[start + j]:
                                same = False
                                break
                        if same:
                            code = c
                            break
                    slot = (slot + 1) & (slots - 1)
                if code < 0:
                    if count == capacity:
                        return bounds, codes[:0], starts[:0], ends[:0], -1
                    code = count
                    count += 1
                    starts[code] = start
                    ends[code] = i
                    hashes[code] = h
                    table[slot] = code
                codes[w] = code
                w += 1
            i += 1  # past the delimiter
        bounds[r + 1] = w
    return bounds, codes[:w], starts[:count].copy(), ends[:count].copy(), count
