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


def factorize_cells(cells: np.ndarray) -> tuple[np.ndarray, pd.Index]:
    """Exactly pd.factorize(pd.Series(cells, dtype=object)): a code per cell (distinct values in first-seen
    order, missing cells -1) and the distinct values."""
    if cells.dtype != object or len(cells) < SMALL or ctypes.sizeof(ctypes.c_void_p) != 8:
        return pd.factorize(pd.Series(cells, dtype=object))
    held = np.ascontiguousarray(cells)  # its buffer is one PyObject pointer per row
    addresses = np.ctypeslib.as_array((ctypes.c_uint64 * len(held)).from_address(held.ctypes.data)).copy()
    by_object, objects = pd.factorize(addresses)  # objects in first-seen order, so values are too
    if len(objects) > len(held) // 2:  # hardly any sharing: hash the values directly
        return pd.factorize(pd.Series(held, dtype=object))
    row_of = np.empty(len(objects), dtype=np.int64)
    row_of[by_object] = np.arange(len(held), dtype=np.int64)  # any row of an address holds its object
    codes, distinct = pd.factorize(pd.Series(held[row_of], dtype=object))
    return codes[by_object], distinct
