"""Supports of itemsets: how many records contain each set of ``size`` items.

Records are counted as sets (an item repeated in a record counts once), which is the definition of
k^m-anonymity in docs/definitions.md and the one that gives seed 002's milk example. Counting is
vectorized by record length: the records of length L form an (n_L x L) array of sorted codes, every
combination of ``size`` columns gives one key per record, keys are integers in base B (B = the number
of distinct codes), and np.unique counts them. Rows are processed in chunks to bound memory.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ..errors import InputError
from ..model.table import sorted_unique
from . import kernels, triples
from .transactions import Transactions

CHUNK_KEYS = 4_000_000  # keys built at once (32 MB of int64)
DENSE_KEYS = 16_000_000  # key spaces up to this size are counted in a dense table (128 MB of int64 at most)


def sorted_sets(offsets: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, codes) as sets: repeats removed, each record's codes sorted ascending."""
    n = len(offsets) - 1
    base = _base(codes)
    # one integer key per occurrence, sorted once: the records stay in order, each record's codes ascend,
    # and a repeat sits beside its twin
    keys = sort_nearly_sorted(record_keys(offsets, codes, base), distinct=True)
    lengths = np.bincount(keys // base, minlength=n)
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), (keys % base).astype(np.int64)


def record_keys(offsets: np.ndarray, codes: np.ndarray, base: int, keep: np.ndarray | None = None) -> np.ndarray:
    """record * base + code of every occurrence (only those in ``keep``, if given), in int32 when the keys fit:
    half the memory and a faster sort than int64."""
    n = len(offsets) - 1
    keys = np.repeat(np.arange(n, dtype=np.int32 if n * base < 2 ** 31 else np.int64), np.diff(offsets))
    if keep is not None:
        keys, codes = keys[keep], codes[keep]
    keys *= base
    keys += codes.astype(keys.dtype, copy=False)
    return keys


def sort_nearly_sorted(keys: np.ndarray, distinct: bool = False) -> np.ndarray:
    """``keys`` sorted (``distinct``: each once), for keys already sorted but within records (record * base +
    code): a stable sort runs through them about 5x faster than the default quicksort."""
    keys = keys[np.argsort(keys, kind="stable")]
    if distinct and len(keys) > 1:
        keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
    return keys


def _base(codes: np.ndarray) -> int:
    return int(codes.max()) + 1 if len(codes) else 1


def _check_width(base: int, size: int) -> None:
    if size > 1 and base ** size >= 2 ** 63:
        raise InputError(f"itemsets of {size} items over {base:,} distinct items do not fit the counter; "
                         f"lower m")


def itemset_keys(offsets: np.ndarray, codes: np.ndarray, size: int, base: int):
    """Yield (record index, key) arrays for every ``size``-subset of every record; ``offsets``/``codes``
    must be sets with sorted codes (:func:`sorted_sets`)."""
    _check_width(base, size)
    lengths = np.diff(offsets)
    weights = base ** np.arange(size - 1, -1, -1, dtype=np.int64)
    for length in sorted_unique(lengths):
        length = int(length)
        if length < size:
            continue
        rows = np.flatnonzero(lengths == length)
        combos = _combinations(length, size)
        per_chunk = max(1, CHUNK_KEYS // len(combos))
        for start in range(0, len(rows), per_chunk):
            part = rows[start:start + per_chunk]
            matrix = codes[offsets[part][:, None] + np.arange(length)]  # (rows, length)
            keys = matrix[:, combos[:, 0]] * weights[0]  # (rows, combos); elementwise beats an integer matmul
            for j in range(1, size):
                keys += matrix[:, combos[:, j]] * weights[j]
            yield np.repeat(part, len(combos)), keys.reshape(-1)


def _keys(offsets: np.ndarray, codes: np.ndarray, size: int, base: int):
    """Yield arrays of the keys of every ``size``-subset of every record (sets, sorted), a chunk at a time,
    in no particular order (the counts do not need one). Pairs by diagonals: for each gap d, the codes of the
    (rows, length) matrix shifted by d are the later items of d's pairs, contiguous slices instead of a gather
    of every pair's two columns (a third faster)."""
    if size != 2:
        for _, keys in itemset_keys(offsets, codes, size, base):
            yield keys
        return
    _check_width(base, 2)
    lengths = np.diff(offsets)
    for length in sorted_unique(lengths):
        length = int(length)
        if length < 2:
            continue
        rows = np.flatnonzero(lengths == length)
        pairs = length * (length - 1) // 2
        per_chunk = max(1, CHUNK_KEYS // pairs)
        for start in range(0, len(rows), per_chunk):
            part = rows[start:start + per_chunk]
            matrix = codes[offsets[part][:, None] + np.arange(length)]  # (rows, length)
            scaled = matrix * base
            out = np.empty((len(part), pairs), dtype=np.int64)
            at = 0
            for gap in range(1, length):
                np.add(scaled[:, :-gap], matrix[:, gap:], out=out[:, at:at + length - gap])
                at += length - gap
            yield out.reshape(-1)


def _combinations(length: int, size: int) -> np.ndarray:
    """itertools.combinations(range(length), size) as a (count x size) array, in the same order; pairs from
    np.triu_indices (a record of 1,000 items has 500,000 pairs: a Python list of them took seconds)."""
    if size == 2:
        first, second = np.triu_indices(length, 1)
        return np.stack([first, second], axis=1).astype(np.int64)
    return np.array(list(combinations(range(length), size)), dtype=np.int64).reshape(-1, size)


def supports(offsets: np.ndarray, codes: np.ndarray, size: int, base: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(keys, supports) of every itemset of ``size`` items occurring in the records (sets, sorted), keys
    ascending. Counted chunk by chunk, so memory holds one chunk of keys and the counts, never every
    occurrence of every itemset at once: in a dense table of all keys when it is small (bincount, no
    sort), otherwise by each chunk's distinct keys merged as they come."""
    base = _base(codes) if base is None else base
    if size == 1:  # each record a set: an item's support is its occurrences
        dense = np.bincount(codes, minlength=base).astype(np.int64)
        found = np.flatnonzero(dense)
        return found.astype(np.int64), dense[found]
    if base ** size <= DENSE_KEYS:
        dense = np.zeros(base ** size if size > 1 else base, dtype=np.int64)
        pending: list[np.ndarray] = []
        held = 0
        # chunks are gathered until they outweigh the table, so adding a bincount to it costs less than
        # building the keys (a length of few records makes a tiny chunk)
        for keys in _keys(offsets, codes, size, base):
            pending.append(keys)
            held += len(keys)
            if held >= max(len(dense) // 4, CHUNK_KEYS):
                dense += np.bincount(np.concatenate(pending), minlength=len(dense))
                pending, held = [], 0
        if pending:
            dense += np.bincount(np.concatenate(pending), minlength=len(dense))
        found = np.flatnonzero(dense)
        return found.astype(np.int64), dense[found].astype(np.int64)
    merged = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    tables: list[tuple[np.ndarray, np.ndarray]] = []
    held = 0
    for keys in _keys(offsets, codes, size, base):
        chunk_keys, chunk_counts = np.unique(keys, return_counts=True)
        tables.append((chunk_keys, chunk_counts.astype(np.int64)))
        held += len(chunk_keys)
        # merged only once the chunks outweigh the table: each key is re-sorted O(log) times, not once per chunk
        if held >= max(len(merged[0]), CHUNK_KEYS):
            merged, tables, held = _merge([merged, *tables]), [], 0
    return _merge([merged, *tables]) if tables else merged


def pairs_touching(offsets: np.ndarray, codes: np.ndarray, touched: np.ndarray, base: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, supports) of every 2-itemset holding an item of ``touched`` (a mask over the codes) that occurs
    in the records (sets, sorted), keys ascending: each occurrence of a touched item paired with the other
    items of its record, a pair of two touched items taken from its smaller item only. Counted a chunk of
    occurrences at a time, as :func:`supports` counts."""
    _check_width(base, 2)
    lengths = np.diff(offsets)
    at = np.flatnonzero(touched[codes]) if len(codes) else np.zeros(0, dtype=np.int64)
    record = np.searchsorted(offsets, at, side="right") - 1
    spans = lengths[record]
    ends = np.cumsum(spans)
    dense = base * base <= DENSE_KEYS
    table = np.zeros(base * base if dense else 0, dtype=np.int64)
    merged = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    start = 0
    while start < len(at):
        stop = max(int(np.searchsorted(ends, (ends[start - 1] if start else 0) + CHUNK_KEYS, side="right")), start + 1)
        span = spans[start:stop]
        first = offsets[record[start:stop]]
        total = int(span.sum())
        within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(span) - span, span)
        partner = codes[np.repeat(first, span) + within]
        own = np.repeat(codes[at[start:stop]], span)
        keep = (partner != own) & (~touched[partner] | (partner > own))
        own, partner = own[keep], partner[keep]
        keys = np.minimum(own, partner) * base + np.maximum(own, partner)
        if dense:
            table += np.bincount(keys, minlength=len(table))
        else:
            distinct, counts = np.unique(keys, return_counts=True)
            merged = _merge([merged, (distinct, counts.astype(np.int64))])
        start = stop
    if dense:
        found = np.flatnonzero(table)
        return found.astype(np.int64), table[found]
    return merged[0].astype(np.int64), merged[1].astype(np.int64)


def merge_disjoint(keys: np.ndarray, counts: np.ndarray, more_keys: np.ndarray,
                   more_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two (sorted keys, counts) tables with no key in common as one, keys ascending."""
    all_keys = np.concatenate([keys, more_keys])
    order = np.argsort(all_keys, kind="stable")
    return all_keys[order], np.concatenate([counts, more_counts])[order]


def _merge(tables: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct keys, counts) tables as one."""
    keys = np.concatenate([k for k, _ in tables])
    counts = np.concatenate([c for _, c in tables])
    order = np.argsort(keys, kind="stable")
    keys, counts = keys[order], counts[order]
    if not len(keys):
        return keys, counts
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    return keys[starts], np.add.reduceat(counts, starts)


def decode(keys: np.ndarray, size: int, base: int) -> np.ndarray:
    """Keys back to (len(keys) x size) code tuples, ascending within each tuple."""
    out = np.empty((len(keys), size), dtype=np.int64)
    rest = np.asarray(keys, dtype=np.int64).copy()
    for j in range(size - 1, -1, -1):
        out[:, j] = rest % base
        rest //= base
    return out


def smallest_support(offsets: np.ndarray, codes: np.ndarray, m: int) -> tuple[int | None, tuple[int, ...] | None]:
    """The smallest support of any itemset of at most m items occurring in the records, and one such
    itemset (codes); (None, None) when the records hold no item."""
    offsets, codes = sorted_sets(offsets, codes)
    base = _base(codes)
    best: tuple[int | None, tuple[int, ...] | None] = (None, None)
    for size in range(1, m + 1):
        if size == 3:  # without a table of every 3-itemset (.triples)
            found = triples.smallest_triple(offsets, codes, base)
            if found[0] is None:
                break
            best = found if best[0] is None or found[0] < best[0] else best
            continue
        keys, counts = supports(offsets, codes, size, base)
        if not len(keys):
            break
        i = int(np.argmin(counts))
        if best[0] is None or counts[i] < best[0]:
            best = (int(counts[i]), tuple(int(c) for c in decode(keys[i:i + 1], size, base)[0]))
    return best


def smallest_support_of(tx: Transactions, m: int) -> tuple[int | None, tuple[int, ...] | None]:
    """:func:`smallest_support` of ``tx``'s records from their counts cached on ``tx``
    (:func:`itemset_supports`), which the report reuses."""
    base = max(len(tx.items), 1)
    best: tuple[int | None, tuple[int, ...] | None] = (None, None)
    for size in range(1, m + 1):
        if size == 3:  # without a table of every 3-itemset (.triples)
            if "_smallest_triple" not in tx.__dict__:
                offsets, codes = _sorted_of(tx)
                tx.__dict__["_smallest_triple"] = triples.smallest_triple(offsets, codes, base)
            found = tx.__dict__["_smallest_triple"]
            if found[0] is None:
                break
            best = found if best[0] is None or found[0] < best[0] else best
            continue
        keys, counts = itemset_supports(tx, size, upto=m)
        if not len(keys):
            break
        i = int(np.argmin(counts))
        if best[0] is None or counts[i] < best[0]:
            best = (int(counts[i]), tuple(int(c) for c in decode(keys[i:i + 1], size, base)[0]))
    return best


def itemset_supports(tx: Transactions, size: int, upto: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(keys, supports) of the itemsets of ``size`` items of ``tx``'s records as sets (keys in base len(items),
    ascending): counted once per size and kept on ``tx``, since the measures, the k^m figure and the report each
    need them. ``upto``: the largest size the caller will ask for (counted together where that is cheaper)."""
    cache: dict[int, tuple[np.ndarray, np.ndarray]] = tx.__dict__.setdefault("_supports", {})
    if size not in cache:
        base = max(len(tx.items), 1)
        kernel = kernels.load(len(tx.codes))
        if kernel is not None and kernels.can_count(tx.n, base, size):
            # the records read once (no sort into sets); 1- and 2-itemsets together when the caller asks for
            # both (``upto``)
            sizes = 2 if size == 2 or (upto >= 2 and kernels.can_count(tx.n, base, 2)) else 1
            sets = tx.distinct() if "_sets" in tx.__dict__ else tx  # the loop takes repeats as they come
            for s, counted in kernels.counts(kernel, sets.offsets, sets.codes, None, base, sizes).items():
                cache.setdefault(s, counted)
        else:
            cache[size] = supports(*_sorted_of(tx), size, base)
    return cache[size]


def record_counts(tx: Transactions) -> np.ndarray:
    """The records holding each item (len(tx.items) of them; records as sets): from the 1-itemset supports when
    they are at hand (:func:`itemset_supports`), else counted."""
    cache = tx.__dict__.get("_supports", {})
    if 1 in cache:
        keys, support = cache[1]
        counts = np.zeros(len(tx.items), dtype=np.int64)
        counts[keys] = support
        return counts
    return np.bincount(tx.distinct().codes, minlength=len(tx.items)).astype(np.int64)


def count_with_sets(tx: Transactions, upto: int) -> None:
    """With the compiled loops (large record sets): ``tx``'s records as sets (``tx.distinct()``) and the
    supports of their itemsets of 1..min(upto, 2) items (:func:`itemset_supports`) found in one read, for a
    caller that needs both; without them nothing is done here (each is found when first asked for)."""
    base = max(len(tx.items), 1)
    kernel = kernels.load(len(tx.codes))
    cache: dict[int, tuple[np.ndarray, np.ndarray]] = tx.__dict__.setdefault("_supports", {})
    if kernel is None or "_sets" in tx.__dict__ or 1 in cache or not kernels.can_count(tx.n, base, 1):
        return
    sizes = 2 if upto >= 2 and kernels.can_count(tx.n, base, 2) else 1
    offsets, codes, found = kernels.sets_and_counts(kernel, tx.offsets, tx.codes, base, sizes)
    tx.adopt_sets(offsets, codes)
    cache.update(found)


def records_are_images(tx: Transactions, image: np.ndarray, published: Transactions) -> bool:
    """Is every published record exactly the set of its input record's images? ``image``: input item code ->
    published item code; -1 dropped (suppressed); -2 an image no published record shows (a mismatch wherever
    it occurs). The one check of the engine's verification and of the publishing gate: first as the engine
    publishes (each record's images in order of first appearance, equal to the published codes one for one:
    the same sets, none published twice), in one read by the compiled loop or in numpy; else by the sorted sets."""
    sets = tx.distinct()
    base = max(len(published.items), 1)
    kernel = kernels.load(len(sets.codes))
    if kernel is not None:
        if (image[record_counts(tx)[:len(image)] > 0] == -2).any():
            return False
        if kernels.images_equal(kernel, sets.offsets, sets.codes, image, base, published.offsets, published.codes):
            return True
    mapped = image[sets.codes] if len(sets.codes) else np.zeros(0, dtype=np.int64)
    if (mapped == -2).any():
        return False
    keep = mapped >= 0
    if kernel is None and _images_in_order(sets.offsets, mapped, keep, image, base, published):
        return True
    # sort-based distinct keys: numpy's hashing np.unique is far slower on millions of integers
    expected = sort_nearly_sorted(record_keys(sets.offsets, mapped, base, None if keep.all() else keep), distinct=True)
    shown = sort_nearly_sorted(record_keys(published.offsets, published.codes, base))
    return not (shown[1:] == shown[:-1]).any() and np.array_equal(expected, shown)


def _images_in_order(offsets: np.ndarray, mapped: np.ndarray, keep: np.ndarray, image: np.ndarray, base: int,
                     published) -> bool:
    """records_are_images without its sorts, when every published record lists its images as they first
    appear in its input record (as the engine publishes them): the images, each record's repeats dropped, are
    then the published codes one for one (so the same sets, none published twice). False: not so, and
    records_are_images compares the sorted sets."""
    if not keep.all():
        offsets = np.concatenate([[0], np.cumsum(keep)])[offsets]
        mapped = mapped[keep]
    # an image repeats in a record only where two input items have it: those occurrences alone are sorted
    twice = np.flatnonzero((np.bincount(image[image >= 0], minlength=base) >= 2)[mapped])
    if len(twice):
        keys = (np.searchsorted(offsets, twice, side="right") - 1) * base + mapped[twice]
        order = np.argsort(keys, kind="stable")  # of equal keys the first appearance comes first, and is kept
        ordered = keys[order]
        later = twice[order[1:][ordered[1:] == ordered[:-1]]]
        if len(later):
            kept = np.ones(len(mapped), dtype=bool)
            kept[later] = False
            offsets = np.concatenate([[0], np.cumsum(kept)])[offsets]
            mapped = mapped[kept]
    return np.array_equal(offsets, published.offsets) and np.array_equal(mapped, published.codes)


def _sorted_of(tx: Transactions) -> tuple[np.ndarray, np.ndarray]:
    """``tx``'s records as sorted sets (:func:`sorted_sets`), kept on ``tx``."""
    if "_sorted" not in tx.__dict__:
        kernel = kernels.load(len(tx.codes))
        tx.__dict__["_sorted"] = (sorted_sets(tx.offsets, tx.codes) if kernel is None else
                                  kernels.image_sets(kernel, tx.offsets, tx.codes, None, len(tx.items), ordered=True))
    return tx.__dict__["_sorted"]
