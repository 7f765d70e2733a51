"""Missing values: which cells are missing, and how they are written.

A cell is missing when its text, stripped of surrounding blanks and compared without case, is one of
the table's NA markers (``NA_MARKERS`` by default: an empty cell, ``NA``, ``N/A``, ``?``, ``null``,
``NaN``). Every missing cell of a table is read as one value, ``MISSING`` (the empty string), in every
column type, so that a blank in a numeric quasi-identifier is a value like any other rather than a
number that fails to parse. In every hierarchy the missing value is a leaf of its own that generalizes
to ``NULL_LABEL`` on every level below the root and to the root ``*`` on top (as Amnesia's ``(null)``
node); definitions.md, "Missing values", says how metrics, risk and verification count it.

``None`` is no marker: a town called None stays None. A column that should keep one of the markers as
a value (a questionnaire whose answer is ``?``) is read with a shorter list (``--na-values`` on the
command line, ``na_values`` in the engine).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from .cells import ColumnDictionary

MISSING = ""
NULL_LABEL = "(null)"
NA_MARKERS: tuple[str, ...] = ("", "NA", "N/A", "?", "null", "NaN")
# The markers the builders and default hierarchies read as missing where no list is passed: a Table has
# already written its missing cells as MISSING, so it builds its hierarchies with blanks only (its own
# na_values decided which cells those are).
_IN_USE: ContextVar[tuple[str, ...]] = ContextVar("na_markers", default=NA_MARKERS)


@contextmanager
def markers_in_use(markers: Sequence[str]) -> Iterator[None]:
    token = _IN_USE.set(tuple(markers))
    try:
        yield
    finally:
        _IN_USE.reset(token)


def parse_markers(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """The NA markers from a comma-separated list (the CLI's ``--na-values``) or a sequence; None: the
    default list. An empty cell is always missing (it cannot hold a value), so "" is always kept."""
    if text is None:
        return NA_MARKERS
    parts = text.split(",") if isinstance(text, str) else [str(p) for p in text]
    return tuple(dict.fromkeys([""] + [p.strip() for p in parts if p.strip()]))


def _folded(markers: Iterable[str]) -> set[str]:
    return {m.strip().casefold() for m in markers}


def _mask_and_distinct(values: pd.Series, markers: Sequence[str] | None) -> tuple[pd.Series, np.ndarray]:
    folded = _folded(_IN_USE.get() if markers is None else markers)
    distinct = pd.unique(values.to_numpy(dtype=object))
    hit = [v for v in distinct if v is None or (isinstance(v, float) and v != v)
           or str(v).strip().casefold() in folded]
    if not hit:
        return pd.Series(False, index=values.index), distinct
    return values.isin(hit) | values.isna(), distinct


def missing_mask(values: pd.Series, markers: Sequence[str] | None = None) -> pd.Series:
    """True where a cell is missing (NaN/None objects count as missing too)."""
    return _mask_and_distinct(values, markers)[0]


def _normalized(values: pd.Series, markers: Sequence[str] | None) -> tuple[pd.Series, bool]:
    """normalize_missing's column and whether it holds a MISSING cell."""
    mask, distinct = _mask_and_distinct(values, markers)
    if not mask.any():
        return values, any(isinstance(v, str) and v == MISSING for v in distinct)
    if not (values[mask] == MISSING).all():
        values = values.where(~mask, MISSING)
    return values, True


def normalize_missing(values: pd.Series, markers: Sequence[str] | None = None) -> pd.Series:
    """The column with every missing cell written as MISSING; the same object when none is."""
    return _normalized(values, markers)[0]


def normalize_frame(frame: pd.DataFrame, markers: Sequence[str] | None = None,
                    holding: set | None = None, skip: set | None = None) -> pd.DataFrame:
    """The frame with every missing cell written as MISSING; a copy only when a cell changes. The
    names of the columns that then hold a MISSING cell are added to ``holding`` when given (Table
    keeps them: asking again would scan every row). ``skip``: columns normalized already."""
    changed = {}
    for col in frame.columns:
        if skip and col in skip:
            continue
        new, holds = _normalized(frame[col], markers)
        if holds and holding is not None:
            holding.add(col)
        if new is not frame[col]:
            changed[col] = new
    if not changed:
        return frame
    out = frame.copy()
    for col, new in changed.items():
        out[col] = new
    return out


def normalize_dictionary(column: ColumnDictionary,
                         markers: Sequence[str] | None = None) -> tuple[ColumnDictionary, bool]:
    """normalize_missing on a dictionary-encoded text column (codes into distinct str categories): each
    category is compared with the markers once, the rows of the missing ones recoded to MISSING's category.
    Returns the column and whether a row holds MISSING."""
    folded = _folded(_IN_USE.get() if markers is None else markers)
    categories, used = column.categories, column.counts > 0
    hit = used & np.fromiter((v.strip().casefold() in folded for v in categories), dtype=bool, count=len(categories))
    if not hit.any():
        return column, bool((used & (categories == MISSING)).any())
    at = np.flatnonzero(categories == MISSING)
    counts = column.counts
    if len(at):
        target = int(at[0])
    else:
        target = len(categories)
        categories = np.append(categories, np.array([MISSING], dtype=object))
        counts = np.append(counts, 0)
    remap = np.arange(len(categories), dtype=np.int32)
    remap[np.flatnonzero(hit)] = target
    counts = np.bincount(remap, weights=counts, minlength=len(categories)).astype(np.int64)
    return ColumnDictionary(remap[column.codes], categories, counts), True


def present_values(values: pd.Series | Sequence[str], markers: Sequence[str] | None = None) -> pd.Series:
    """The cells that are not missing (the values a hierarchy builder builds its nodes from)."""
    s = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    return s[~missing_mask(s, markers)]


def has_missing(values: pd.Series | Sequence[str], markers: Sequence[str] | None = None) -> bool:
    s = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    return bool(missing_mask(s, markers).any())


def marker_set(markers: Sequence[str] | None = None) -> set[str]:
    """The missing-value markers (the ones in use when None) stripped and case-folded, as is_marker compares."""
    return _folded(_IN_USE.get() if markers is None else markers)


def is_marker(value: str, markers: Sequence[str] | None = None) -> bool:
    return str(value).strip().casefold() in marker_set(markers)
