"""Published values of a numeric column read as intervals (pure: numpy/pandas only).

A generalized numeric cell is a label of a range, written the ways this project's hierarchies and recodings
write them: ``[20-30)`` (interval hierarchies, half-open), ``[20-30]`` (the last interval, Mondrian's and the
local recodings' ranges), ``[-10, -5)`` (negative bounds), ``20-29`` (ARX-style hierarchies: whole numbers
from 20 to 29), ``<20`` / ``>=80`` (values outside an interval hierarchy's bounds) and ``*`` (the root). The
statistics before and after (measure.statistics) read each distinct label once as a pair of bounds
[low, high]: a plain number is the point [x, x]; a label of neither kind (``*``, ``(null)``, text) has no
bounds and is counted as missing. Bounds are what the label says: ``20-29`` is [20, 29], whose midpoint 24.5
is the mean of the whole numbers 20..29 as well as of the uniform distribution on [20, 29]. An open-ended
label (``<20``, ``>=80``) takes its other bound from ``support`` (the input column's lowest and highest
value, which the data holder knows), and has no bounds without it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..model.hierarchy import numbers_of

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
# [lo-hi) [lo-hi] (lo-hi] [lo, hi) ... and bare lo-hi; the separator is '-' (with optional blanks) or ','
_RANGE = re.compile(rf"^\s*([\[(]?)\s*({_NUMBER})\s*(?:,|-|–|\.\.)\s*({_NUMBER})\s*([\])]?)\s*$")
_OPEN = re.compile(rf"^\s*(<=|<|>=|>|≤|≥)\s*({_NUMBER})\s*$")


@dataclass(frozen=True)
class Bounds:
    """Per distinct label: its low and high bound (NaN: no bounds, counted as missing)."""

    low: np.ndarray
    high: np.ndarray

    @property
    def known(self) -> np.ndarray:
        return ~np.isnan(self.low)

    @property
    def generalized(self) -> np.ndarray:
        """Labels of a range wider than a point."""
        return self.known & (self.high > self.low)

    @property
    def midpoint(self) -> np.ndarray:
        return (self.low + self.high) / 2


def label_bounds(label: str, support: tuple[float, float] | None = None) -> tuple[float, float] | None:
    """The bounds of one non-numeric label (see the module docstring); None when it names no range."""
    match = _RANGE.match(label)
    if match:
        opening, lo, hi, closing = match.groups()
        if bool(opening) != bool(closing):
            return None
        low, high = float(lo), float(hi)
        return (low, high) if np.isfinite(low) and np.isfinite(high) and low <= high else None
    match = _OPEN.match(label)
    if match and support is not None:
        sign, bound = match.group(1), float(match.group(2))
        low, high = (support[0], bound) if sign in ("<", "<=", "≤") else (bound, support[1])
        return (float(low), float(high)) if low <= high else None
    return None


def numbers(labels: np.ndarray) -> np.ndarray:
    """Each text as a float, NaN where it is none: Arrow's cast when every text is a number (a continuous
    column of a million distinct decimals: ~20x faster than pandas), else hierarchy.numbers_of."""
    if not len(labels):
        return np.zeros(0)
    try:
        return pc.cast(pa.array(labels, type=pa.string()), pa.float64()).to_numpy(zero_copy_only=False).copy()
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return numbers_of(labels)


def bounds_of(labels: np.ndarray, support: tuple[float, float] | None = None,
              points: np.ndarray | None = None) -> Bounds:
    """The bounds of each distinct label: numbers parsed in one vectorized pass (``points``: already parsed),
    the other labels one by one (there are few: one per generalized range)."""
    labels = np.asarray(labels, dtype=object)
    points = (numbers(labels) if points is None else points).astype(float)  # a copy: NaN set below
    points[~np.isfinite(points)] = np.nan
    low, high = points.copy(), points.copy()
    for i in np.flatnonzero(np.isnan(points)):
        found = label_bounds(str(labels[i]), support)
        if found is not None:
            low[i], high[i] = found
    return Bounds(low, high)
