"""Hashing a column of cells (Python objects) into codes, fast when few objects are shared by many rows.

A column read by pandas' CSV parser, or built from a label array indexed by codes (the output of a
recoding), holds a few distinct str objects, each referenced by many rows. Grouping the rows by the
address of their object hashes machine ints (several times faster than hashing strings); one object per
address is then hashed by value, which merges equal values held by different objects. A cell's value is
always read from its object, so the codes follow the values whatever objects the rows hold.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pandas as pd

SMALL = 4096  # below this many rows pandas' own hashing is as fast


def pointer_view(held: np.ndarray) -> np.ndarray:
    """The PyObject pointers of a C-contiguous 1-D object array as uint64, not copied: valid while ``held``
    lives (64-bit builds only: callers check ctypes.sizeof(ctypes.c_void_p) == 8)."""
    return np.ctypeslib.as_array((ctypes.c_uint64 * len(held)).from_address(held.ctypes.data))


def factorize_cells(cells: np.ndarray) -> tuple[np.ndarray, pd.Index]:
    """Exactly pd.factorize(pd.Series(cells, dtype=object)): a code per cell (distinct values in first-seen
    order, missing cells -1) and the distinct values."""
    if cells.dtype != object or len(cells) < SMALL or ctypes.sizeof(ctypes.c_void_p) != 8:
        return pd.factorize(pd.Series(cells, dtype=object))
    held = np.ascontiguousarray(cells)  # its buffer is one PyObject pointer per row
    addresses = pointer_view(held).copy()
    by_object, objects = pd.factorize(addresses)  # objects in first-seen order, so values are too
    if len(objects) > len(held) // 2:  # hardly any sharing: hash the values directly
        return pd.factorize(pd.Series(held, dtype=object))
    row_of = np.empty(len(objects), dtype=np.int64)
    row_of[by_object] = np.arange(len(held), dtype=np.int64)  # any row of an address holds its object
    codes, distinct = pd.factorize(pd.Series(held[row_of], dtype=object))
    return codes[by_object], distinct


class FactorizedCells:
    """factorize_cells of some output columns, kept with the arrays they were computed from: a later reader of the
    same column (verification after the figures) takes them instead of hashing the column again, and only while
    the column is still that very buffer (same address, length and stride), so never for a changed frame."""

    def __init__(self) -> None:
        self._by_column: dict[str, tuple[np.ndarray, tuple[np.ndarray, pd.Index]]] = {}

    def factorize(self, column: str, cells: np.ndarray) -> tuple[np.ndarray, pd.Index]:
        """factorize_cells(cells), remembered for ``column``."""
        found = self.get(column, cells)
        if found is None:
            found = factorize_cells(cells)
            self._by_column[column] = (cells, found)
        return found

    def get(self, column: str, cells: np.ndarray) -> tuple[np.ndarray, pd.Index] | None:
        """The codes of ``column`` when they were computed from this very buffer, else None."""
        held = self._by_column.get(column)
        if held is None:
            return None
        seen, found = held
        same = (seen.dtype == cells.dtype and seen.shape == cells.shape and seen.strides == cells.strides
                and seen.__array_interface__["data"][0] == cells.__array_interface__["data"][0])
        return found if same else None


class ColumnDictionary:
    """A text column as codes into its distinct values (a Categorical the reader made): encoding it maps the
    few categories, then takes one integer per row, instead of hashing a string per row.

    Whether the codes still describe a column is checked before they are used (``describes``): every cell
    must be the very object its code names, compared by address, so a frame changed or replaced since can
    never be encoded from stale codes."""

    def __init__(self, codes: np.ndarray, categories: np.ndarray, counts: np.ndarray | None = None) -> None:
        self.codes = np.asarray(codes, dtype=np.int32)
        # holds the objects: their addresses stay theirs (read from the array's pointers on 64-bit builds: id())
        self.categories = np.ascontiguousarray(np.asarray(categories, dtype=object))
        if ctypes.sizeof(ctypes.c_void_p) == 8 and len(self.categories):
            self._addresses = pointer_view(self.categories).copy()
        else:
            self._addresses = np.fromiter((id(v) for v in self.categories), dtype=np.uint64, count=len(self.categories))
        self._counts = counts

    @property
    def counts(self) -> np.ndarray:
        """Rows per category."""
        if self._counts is None:
            self._counts = np.bincount(self.codes, minlength=len(self.categories))
        return self._counts

    def cells(self, out: np.ndarray | None = None) -> np.ndarray:
        """The column as an object array of the categories' objects (written into ``out`` when given)."""
        return np.take(self.categories, self.codes, out=out)

    def present(self) -> np.ndarray:
        """The categories some row holds."""
        return self.categories[self.counts > 0]

    def describes(self, cells: np.ndarray) -> bool:
        """Whether every cell is the object its code names (the codes are then the column's)."""
        if ctypes.sizeof(ctypes.c_void_p) != 8 or len(cells) != len(self.codes) or cells.dtype != object:
            return False
        if len(cells) == 0:
            return True
        held = np.ascontiguousarray(cells)  # referenced below: the view of its pointers stays valid
        addresses = pointer_view(held)
        return bool(np.array_equal(addresses, np.take(self._addresses, self.codes)))  # (take: 2x a fancy index)


def column_dictionary(cells: np.ndarray) -> tuple[ColumnDictionary, bool] | None:
    """A text column of object cells as a ColumnDictionary (one hashing pass, by address where objects are shared,
    as factorize_cells hashes), and whether every cell already is the object its code names (else the caller
    writes the column again from the categories, so that ``describes`` holds). None when a cell is not a str
    (missing objects, numbers): such a column is read row by row as before."""
    if cells.dtype != object or cells.ndim != 1 or ctypes.sizeof(ctypes.c_void_p) != 8:
        return None
    held = np.ascontiguousarray(cells)
    # (pd.factorize of the arrays themselves: the codes and values of a Series', without building one)
    if len(held) < SMALL:
        codes, distinct = pd.factorize(held)
        objects = -1  # not counted: describes() below decides
        one_each = False
    else:
        by_object, addresses = pd.factorize(pointer_view(held).copy())
        objects = len(addresses)
        row_of = np.empty(objects, dtype=np.int64)
        row_of[by_object] = np.arange(len(held), dtype=np.int64)  # any row of an address holds its object
        object_codes, distinct = pd.factorize(held[row_of])
        # one object per value (a reader's deduplicated strings): the objects' codes are already the values'
        one_each = len(distinct) == objects and bool((object_codes == np.arange(objects)).all())
        codes = by_object if one_each else object_codes[by_object]
    categories = np.asarray(distinct, dtype=object)
    # (a missing object's code is -1; none is when each object's code is its own: object_codes held no -1)
    if (not one_each and len(held) and int(codes.min()) < 0) or not all(type(v) is str for v in categories):
        return None
    column = ColumnDictionary(codes, categories)
    # as many objects as values: each value's one object is its category (the first object seen of it)
    return column, objects == len(categories) or column.describes(held)
