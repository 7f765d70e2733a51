"""The compiled loops of :mod:`._set_kernel`, when they repay numba's cost: about 1 s CPU per process to
import numba and load the cached machine code, against some 0.3-1 s saved per pass over a million records
(a sort of every occurrence, or the pairs' keys built and counted, in numpy). Below
:data:`KERNEL_MIN_OCCURRENCES` item occurrences, without numba (the optional ``fast`` extra) or where it
cannot be set up, the numpy paths run; both give the same results (tests/engine/test_setvalued_kernels.py).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pyarrow as pa

KERNEL_MIN_OCCURRENCES = 3_000_000
# pair tables up to this many cells (int32: 64 MB) are counted by the kernel; larger ones by numpy's merged keys
KERNEL_MAX_PAIR_CELLS = 16_000_000

_loaded: list[ModuleType | None] = []

Counted = tuple[np.ndarray, np.ndarray]  # (keys ascending, supports), as itemsets.supports gives them


def load(occurrences: int) -> ModuleType | None:
    """The kernel module for records of ``occurrences`` item occurrences, or None (numpy then)."""
    if occurrences < KERNEL_MIN_OCCURRENCES:
        return None
    if not _loaded:
        try:
            from . import _set_kernel
        except Exception:  # noqa: BLE001 - any failure only costs speed; numpy gives the same results
            _loaded.append(None)
        else:
            _loaded.append(_set_kernel)
    return _loaded[0]


def _int64(a: np.ndarray) -> np.ndarray:
    # one machine-code specialization per loop: every array as int64
    return np.ascontiguousarray(a, dtype=np.int64)


def image_sets(kernel: ModuleType, offsets: np.ndarray, codes: np.ndarray, image: np.ndarray | None, base: int,
               ordered: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Every record's images (``image`` None: the codes themselves; -1 dropped) as a set: (offsets, codes)
    in first-appearance order, or ascending (``ordered``). ``base``: above every image."""
    base = max(int(base), 1)
    image = np.arange(base, dtype=np.int64) if image is None else _int64(image)
    bounds, out, used = kernel.image_sets(_int64(offsets), _int64(codes), image, base, bool(ordered))
    # the loop's buffer is as long as the input: copied out when merged images left much of it unused
    return bounds, (out[:used].copy() if used < len(out) * 3 // 4 else out[:used])


def images_equal(kernel: ModuleType, offsets: np.ndarray, codes: np.ndarray, image: np.ndarray, base: int,
                 shown_offsets: np.ndarray, shown_codes: np.ndarray) -> bool:
    """Whether :func:`image_sets` (first-appearance order) of the records equals ``shown`` exactly."""
    return bool(kernel.images_equal(_int64(offsets), _int64(codes), _int64(image), max(int(base), 1),
                                    _int64(shown_offsets), _int64(shown_codes)))


def can_count(records: int, base: int, size: int) -> bool:
    """Whether :func:`counts` takes itemsets of ``size`` over ``base`` codes in ``records`` records."""
    return size <= 2 and records < 2 ** 31 and (size < 2 or base * base <= KERNEL_MAX_PAIR_CELLS)


def counts(kernel: ModuleType, offsets: np.ndarray, codes: np.ndarray, image: np.ndarray | None, base: int,
           sizes: int) -> dict[int, Counted]:
    """The supports of the 1-itemsets (and of the 2-itemsets when ``sizes`` is 2) of every record's images
    as a set (``image`` as in :func:`image_sets`), keys as :func:`.itemsets.supports` gives them."""
    base = max(int(base), 1)
    image = np.arange(base, dtype=np.int64) if image is None else _int64(image)
    singles, pairs = kernel.pair_counts(_int64(offsets), _int64(codes), image, base, sizes >= 2)
    return _counted(singles, pairs, sizes)


def sets_and_counts(kernel: ModuleType, offsets: np.ndarray, codes: np.ndarray, base: int,
                    sizes: int) -> tuple[np.ndarray, np.ndarray, dict[int, Counted]]:
    """The records as sets (:func:`image_sets` of the codes themselves, first-appearance order) and their
    :func:`counts`, in one read: (offsets, codes, counted)."""
    base = max(int(base), 1)
    bounds, out, used, singles, pairs = kernel.sets_and_counts(_int64(offsets), _int64(codes), base, sizes >= 2)
    return bounds, out[:used], _counted(singles, pairs, sizes)


def _counted(singles: np.ndarray, pairs: np.ndarray, sizes: int) -> dict[int, Counted]:
    found = np.flatnonzero(singles)
    out = {1: (found.astype(np.int64), singles[found])}
    if sizes >= 2:
        found = np.flatnonzero(pairs)
        out[2] = (found.astype(np.int64), pairs[found].astype(np.int64))
    return out


def joined_bytes(kernel: ModuleType, offsets: np.ndarray, codes: np.ndarray, items: np.ndarray,
                 delimiter: str) -> pa.LargeStringArray | None:
    """Every record's item texts joined by ``delimiter``, as an Arrow large_string array whose buffers the
    compiled loop lays out (no string per occurrence made); None when a text is not valid UTF-8 (a lone
    surrogate)."""
    try:
        encoded = [str(x).encode("utf-8") for x in items]
        joiner = np.frombuffer(delimiter.encode("utf-8"), dtype=np.uint8)
    except UnicodeError:
        return None
    item_offsets = np.concatenate([[0], np.cumsum([len(b) for b in encoded], dtype=np.int64)]).astype(np.int64)
    item_bytes = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    bounds, data = kernel.join_items(_int64(offsets), _int64(codes), item_offsets, item_bytes, joiner)
    return pa.LargeStringArray.from_buffers(len(bounds) - 1, pa.py_buffer(bounds), pa.py_buffer(data))


def split_cells(kernel: ModuleType, bounds: np.ndarray, data: np.ndarray, delimiter: int,
                most: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cells (an Arrow large_string array's offsets and UTF-8 bytes) split at the one-byte ``delimiter``, empty
    pieces dropped: (record offsets, codes in order of first appearance, each code's first byte, its end).
    ``most``: at least the number of pieces."""
    bounds, data = _int64(bounds), np.ascontiguousarray(data, dtype=np.uint8)
    capacity = 1 << 12
    while True:  # distinct pieces held: 4,096, then as many more as needed
        offsets, codes, starts, ends, count = kernel.split_cells(bounds, data, int(delimiter), int(most), capacity)
        if count >= 0:
            return offsets, codes, starts, ends
        capacity *= 8


def compile_cached() -> bool:
    """Every loop of :mod:`._set_kernel` compiled, for the argument types the functions above pass, into numba's
    cache beside it: the first large run after an install then loads machine code instead of compiling it (about
    1 s, once per checkout; ``make test-venv`` calls this). Returns whether the loops are there (False without
    numba); each is checked on two toy records."""
    kernel = load(KERNEL_MIN_OCCURRENCES)
    if kernel is None:
        return False
    offsets, codes = np.array([0, 2, 3], dtype=np.int64), np.array([1, 0, 1], dtype=np.int64)  # {1, 0}, {1}
    bounds, found = image_sets(kernel, offsets, codes, None, 2)
    ascending = image_sets(kernel, offsets, codes, None, 2, ordered=True)[1]
    counted = counts(kernel, offsets, codes, None, 2, 2)
    _, _, counted_too = sets_and_counts(kernel, offsets, codes, 2, 2)
    joined = joined_bytes(kernel, offsets, codes, np.array(["a", "b"], dtype=object), ";")
    checks = [
        bounds.tolist() == [0, 2, 3] and found.tolist() == [1, 0, 1] and ascending.tolist() == [0, 1, 1],
        images_equal(kernel, offsets, codes, np.arange(2), 2, bounds, found),
        counted[1][1].tolist() == [1, 2] and counted[2][1].tolist() == [1],
        counted_too[2][0].tolist() == counted[2][0].tolist(),
        joined is not None and joined.to_pylist() == ["b;a", "b"],
    ]
    if joined is not None:
        buffers = joined.buffers()
        cells = split_cells(kernel, np.frombuffer(buffers[1], dtype=np.int64), np.frombuffer(buffers[2], dtype=np.uint8),
                            ord(";"), 3)
        checks.append(cells[0].tolist() == [0, 2, 3] and cells[1].tolist() == [0, 1, 0])
    if not all(checks):
        raise RuntimeError("the compiled set-valued loops gave wrong results on two toy records")
    return True
