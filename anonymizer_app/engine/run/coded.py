"""A full-domain output's QI columns held as codes into their level's labels (pandas Categoricals).

A QI at one level of its hierarchy shows a few distinct labels, each on many rows: an object per row (8 bytes
a cell, 40 MB per column at 5M rows) holds nothing the label table and a small code per row do not. The run
core (verification, the gate, the report, the sinks) reads the codes; a caller reading ``Result.output`` or
``Publication.table`` gets the columns as the labels' own objects (:func:`plain_frame`), the cells a text
output always had, so every export and comparison sees the same values.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..model.hierarchy import ROOT, Hierarchy


def level_column(h: Hierarchy, level: int, leaves: np.ndarray, suppressed: np.ndarray | None) -> pd.Categorical | None:
    """The column of a QI at ``level``: each row's label (``labels[level][maps[level][leaf]]``), ROOT on a
    ``suppressed`` row, as a Categorical whose categories are the level's label objects (ROOT appended when
    a suppressed row shows it and no label reads it). None when the labels are not distinct values (a
    Categorical cannot hold them: the caller builds object cells)."""
    labels = np.asarray(h.labels[level], dtype=object)
    listed = labels.tolist()
    if all(type(v) is str for v in listed):  # str labels (no NaN among them): distinct if a set keeps them all
        if len(set(listed)) != len(listed):
            return None
        categories = pd.Index(labels, dtype=object)
    else:
        categories = pd.Index(labels, dtype=object)
        if not categories.is_unique or categories.hasnans:
            return None
    root = None
    if suppressed is not None:
        found = np.flatnonzero(labels == ROOT)
        if len(found):
            root = int(found[0])
        else:
            root = len(labels)
            categories = pd.Index(np.append(labels, np.array([ROOT], dtype=object)), dtype=object)
    width = np.int8 if len(categories) < 2**7 else np.int16 if len(categories) < 2**15 else np.int32
    label_of = np.asarray(h.maps[level]).astype(width)
    codes = np.take(label_of, leaves, mode="wrap")  # leaves are valid codes (encode checked them)
    if suppressed is not None:
        codes[suppressed] = root
    # validate=False: the codes index the categories by construction (the stubs predate the argument)
    return pd.Categorical.from_codes(codes, dtype=checked_dtype(categories),  # type: ignore[call-arg,arg-type]
                                     validate=False)


def checked_dtype(categories: pd.Index) -> pd.CategoricalDtype:
    """pd.CategoricalDtype(categories) for categories already checked distinct and free of NaN: without the
    dtype's own check of both (two hashing passes, ~40 us a column: a tenth of an Adult output's build), through
    pandas' fast path where this pandas has it (the same dtype), else the checked constructor."""
    fast = getattr(pd.CategoricalDtype, "_from_fastpath", None)
    return fast(categories, False) if fast is not None else pd.CategoricalDtype(categories)


def is_coded(column: pd.Series) -> bool:
    """Does ``column`` hold codes into its categories (a Categorical)?"""
    return isinstance(column.dtype, pd.CategoricalDtype)


def cells_of(column: pd.Series, rows: np.ndarray | None = None) -> np.ndarray:
    """The cells of ``column`` (of ``rows`` only: a mask or positions) as an object array; a Categorical's
    cells are its categories' objects, taken for those rows alone."""
    if is_coded(column):
        values = column.array if rows is None else column.array[rows]
        return np.asarray(values, dtype=object)
    cells = column.to_numpy()
    return cells if rows is None else cells[rows]


def rows_of(column: pd.Series, rows: np.ndarray | None) -> np.ndarray | pd.Categorical:
    """The column's values (of ``rows`` when given) for a new frame: a Categorical's codes gathered, not its
    cells; the buffer itself when every row is taken."""
    values = column.array if is_coded(column) else column.to_numpy()
    return values if rows is None else values[rows]


FIRST_ROWS_BLOCK = 4096  # first_rows' first block of rows; each next one twice the last
FIRST_ROWS_AT_ONCE = 1 << 16  # up to this many rows first_rows takes every row in one np.minimum.at


def first_rows(codes: np.ndarray, size: int, counts: np.ndarray | None = None) -> np.ndarray:
    """The first row of each code (len(codes) for a code no row holds). ``counts``: np.bincount(codes,
    minlength=size) (or whether each count is above 0), the codes some row holds: the rows are read in growing
    blocks only until each of them has been seen (most codes of a column first occur in its first rows), in each
    block only the rows of codes not seen yet sorted."""
    n = len(codes)
    first = np.full(size, n, dtype=np.int64)
    if n <= FIRST_ROWS_AT_ONCE:  # few rows: one pass costs less than the blocks' calls
        np.minimum.at(first, codes, np.arange(n, dtype=np.int64))
        return first
    need = (np.bincount(codes, minlength=size) if counts is None else np.asarray(counts)) > 0
    missing = int(np.count_nonzero(need))
    start, block = 0, FIRST_ROWS_BLOCK
    while missing and start < n:
        part = codes[start:start + block]
        hits = np.flatnonzero(need[part])
        if len(hits):
            # np.unique's return_index sorts stably: the first of the block's rows holding each code
            found, at = np.unique(part[hits], return_index=True)
            first[found] = start + hits[at]
            need[found] = False
            missing -= len(found)
        start += block
        block *= 2
    return first


def plain_frame(frame: pd.DataFrame, qi: Sequence[str]) -> pd.DataFrame:
    """``frame`` with its coded QI columns as object cells (the categories' own objects); the frame itself
    when none is coded. The other columns are the frame's own."""
    coded = [c for c in qi if c in frame.columns and is_coded(frame[c])]
    if not coded:
        return frame
    return frame_of({c: (np.asarray(frame[c].array, dtype=object) if c in coded else rows_of(frame[c], None))
                     for c in frame.columns}, frame.index)


def frame_of(columns: Mapping[str, np.ndarray | pd.api.extensions.ExtensionArray], index: pd.Index) -> pd.DataFrame:
    """pd.DataFrame(columns, index=index, copy=False), the same frame without pandas' scan of each object column
    for datetimes to convert it to (several temporaries of 8-16 bytes a row): a column of objects starting with a
    str is never converted (all its cells would have to be datetime-like), so it goes in as a Series of objects,
    which skips the scan (a Categorical likewise); any other column as pandas takes it."""
    scanned = pd.get_option("future.infer_string")  # str cells would become pandas' string dtype
    frame = {}
    for c, values in columns.items():
        text = not scanned and values.dtype == object and len(values) > 0 and type(values[0]) is str
        frame[c] = pd.Series(values, index=index, dtype=values.dtype, copy=False) \
            if text or isinstance(values, pd.Categorical) else values
    return pd.DataFrame(frame, index=index, columns=list(columns), copy=False)


def shared_frame(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame | None:
    """frame_of({c: rows_of(frame[c], None) for c in columns}, pd.RangeIndex(len(frame))) as a shallow copy of
    ``frame`` (its column blocks shared, as frame_of shares each column's buffer, without a Series per column)
    when that is the same frame: ``columns`` are the frame's in its order, its index is 0..n-1, and frame_of
    would keep every column as it is (each object column starts with a str, so pandas scans none for
    datetimes). None otherwise."""
    if (len(frame) == 0 or list(frame.columns) != list(columns) or not frame.columns.is_unique
            or not frame.index.equals(pd.RangeIndex(len(frame))) or pd.get_option("future.infer_string")):
        return None
    for c, dtype in zip(columns, frame.dtypes):
        if isinstance(dtype, np.dtype) and dtype.kind == "O" and type(frame[c].array[0]) is not str:
            return None
    out = frame.copy(deep=False)
    if not isinstance(out.index, pd.RangeIndex):
        out.index = pd.RangeIndex(len(out))
    return out

