"""The table as integer codes over a public domain, and back.

The DP synthesizers measure marginals over each column's *domain*, which must not depend on the data beyond what
is public (else the domain itself would leak who is in the table):

* a categorical column with a hierarchy: the domain is the hierarchy's leaves (a value outside them is refused);
  without one, the distinct values of the column, treated as the public schema (as the MST and AIM papers and
  their reference code assume: give a hierarchy when the list of values itself is confidential);
* a numeric column with a hierarchy: its level-1 groups; a synthetic value is drawn uniformly among the group's
  leaves (the hierarchy's values, public);
* a numeric column with bounds (``NumericBins``): equal-width bins over [lower, upper) given by the user, values
  outside clamped into the end bins, plus one cell for a missing value; a synthetic value is drawn uniformly
  within its bin (rounded to a whole number when every value of the column is a whole number, a fact of the
  schema). Bins are never taken from the data's minimum and maximum.

The output is always sampled back to values (never bin labels), so a synthetic table has the input's columns
and value formats and the statistics, model-utility and risk pages read it like the original."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError
from ..model.hierarchy import Hierarchy
from .base import NumericBins, SynthesisContext

MISSING = ""


def _text(values: pd.Series) -> np.ndarray:
    return values.astype(object).where(values.notna(), MISSING).astype(str).to_numpy()


@dataclass
class ColumnCoding:
    name: str
    size: int
    labels: list[str]  # one per code (a value, a group label or an interval)
    how: str  # "values", "hierarchy groups" or "bins"
    group_leaves: list[np.ndarray] = field(default_factory=list)  # hierarchy groups: the leaves of each code
    bins: NumericBins | None = None
    whole: bool = False

    def describe(self) -> dict:
        out: dict = {"column": self.name, "cells": self.size, "by": self.how}
        if self.bins is not None:
            out.update(lower=self.bins.lower, upper=self.bins.upper, bins=self.bins.count)
        return out


@dataclass
class Encoded:
    codes: dict[str, np.ndarray]  # column -> int codes, one per row
    columns: list[ColumnCoding]

    @property
    def sizes(self) -> dict[str, int]:
        return {c.name: c.size for c in self.columns}


def _by_values(name: str, values: pd.Series, hierarchy: Hierarchy | None) -> tuple[ColumnCoding, np.ndarray]:
    text = _text(values)
    domain = [str(v) for v in hierarchy.leaves] if hierarchy is not None else sorted(set(text.tolist()))
    index = {v: i for i, v in enumerate(domain)}
    codes = np.fromiter((index.get(v, -1) for v in text), dtype=np.int64, count=len(text))
    if (codes < 0).any():
        bad = text[np.argmax(codes < 0)]
        raise InputError(f"column {name!r}: the value {bad!r} is not a leaf of its hierarchy")
    return ColumnCoding(name, len(domain), domain, "values"), codes


def _by_groups(name: str, values: pd.Series, hierarchy: Hierarchy) -> tuple[ColumnCoding, np.ndarray]:
    coding, leaf_codes = _by_values(name, values, hierarchy)
    if len(hierarchy.maps) < 2:
        raise InputError(f"column {name!r}: its hierarchy has no level above the values to group them by")
    group_of_leaf = np.asarray(hierarchy.maps[1], dtype=np.int64)
    labels = [str(v) for v in hierarchy.labels[1]]
    leaves = np.asarray([str(v) for v in hierarchy.leaves], dtype=object)
    members = [leaves[group_of_leaf == g] for g in range(len(labels))]
    return (ColumnCoding(name, len(labels), labels, "hierarchy groups", group_leaves=members),
            group_of_leaf[leaf_codes])


def _by_bins(name: str, values: pd.Series, bins: NumericBins) -> tuple[ColumnCoding, np.ndarray]:
    text = _text(values)
    numbers = pd.to_numeric(pd.Series(text), errors="coerce").to_numpy(dtype=float)
    bad = (text != MISSING) & np.isnan(numbers)
    if bad.any():
        raise InputError(f"column {name!r}: {text[np.argmax(bad)]!r} is not a number")
    width = (bins.upper - bins.lower) / bins.count
    codes = np.clip(np.floor((numbers - bins.lower) / width), 0, bins.count - 1)
    codes = np.where(np.isnan(numbers), bins.count, codes).astype(np.int64)  # the last cell: missing
    present = numbers[~np.isnan(numbers)]
    whole = bool(present.size == 0 or np.all(present == np.round(present)))
    labels = [f"[{bins.lower + i * width:g}, {bins.lower + (i + 1) * width:g})" for i in range(bins.count)]
    return ColumnCoding(name, bins.count + 1, labels + [MISSING], "bins", bins=bins, whole=whole), codes


def encode(frame: pd.DataFrame, context: SynthesisContext) -> Encoded:
    codes: dict[str, np.ndarray] = {}
    columns: list[ColumnCoding] = []
    for name in context.columns:
        hierarchy = context.hierarchies.get(name)
        if context.kind(name) == "numeric":
            if hierarchy is not None:
                coding, code = _by_groups(name, frame[name], hierarchy)
            elif name in context.bins:
                coding, code = _by_bins(name, frame[name], context.bins[name])
            else:
                raise InputError(f"numeric column {name!r} needs a hierarchy or bounds (lower, upper) to be "
                                 f"binned without looking at the data")
        else:
            coding, code = _by_values(name, frame[name], hierarchy)
        codes[name] = code
        columns.append(coding)
    return Encoded(codes, columns)


def decode(codes: dict[str, np.ndarray], encoded: Encoded, rng: np.random.Generator) -> pd.DataFrame:
    """Synthetic codes back to values (group and bin codes sampled uniformly within)."""
    out: dict[str, np.ndarray] = {}
    for coding in encoded.columns:
        code = np.asarray(codes[coding.name], dtype=np.int64)
        if coding.how == "values":
            out[coding.name] = np.asarray(coding.labels, dtype=object)[code]
        elif coding.how == "hierarchy groups":
            values = np.empty(code.size, dtype=object)
            for g, members in enumerate(coding.group_leaves):
                rows = np.flatnonzero(code == g)
                if rows.size and members.size:
                    values[rows] = members[rng.integers(0, members.size, size=rows.size)]
            out[coding.name] = values
        else:
            assert coding.bins is not None
            b = coding.bins
            width = (b.upper - b.lower) / b.count
            drawn = b.lower + (code + rng.random(code.size)) * width
            text = np.empty(code.size, dtype=object)
            if coding.whole:
                # whole numbers within the bin [a, b): the integers a..ceil(b)-1 equally likely
                low = np.ceil(b.lower + code * width)
                high = np.maximum(np.ceil(b.lower + (code + 1) * width) - 1, low)
                drawn = low + np.floor(rng.random(code.size) * (high - low + 1))
                text[:] = [str(int(v)) for v in drawn]
            else:
                text[:] = [f"{v:.6g}" for v in drawn]
            text[code == b.count] = MISSING
            out[coding.name] = text
    return pd.DataFrame(out, columns=[c.name for c in encoded.columns])
