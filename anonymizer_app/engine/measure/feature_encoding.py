"""Features of a table as a model sees them (pure: numpy/pandas/scikit-learn).

Two encodings of a published (generalized) column, chosen per run of the model utility (model_utility.py):

- ``one-hot``: every distinct published label is a category of its own (``20-29``, ``[20-30)``, ``*`` and
  ``37`` are four categories), whatever the column's type; what the recipient can do without reading the
  labels. A label the model never saw in training (an original value at test time, a rare range) sets no
  indicator (handle_unknown="ignore").
- ``midpoint``: a column that is numeric in the input is read as numbers, a range label by its midpoint
  (intervals.bounds_of: ``20-29`` is 24.5, ``[20-30)`` is 25, ``<20`` takes the input's lowest value as its
  other bound); a label with no bounds (``*``, a suppressed cell) is missing and takes the training rows' mean
  (SimpleImputer), then every number is standardized. Text columns stay one-hot. This is the encoding under
  which a model trained on the release can also be tested on original rows (a number is its own midpoint).

Numeric columns that are not generalized (published as they are) are numbers under both encodings: one-hot on
a continuous column would make one feature per value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from .intervals import bounds_of

ENCODINGS = ("one-hot", "midpoint")
ENCODING_HELP = ("how generalized values become features: one-hot (each published label a category) or midpoint "
                 "(numeric columns as numbers, a range by its midpoint, '*' as missing; text columns one-hot)")


@dataclass(frozen=True)
class FeaturePlan:
    """Which features are read as numbers and which as categories, under one encoding."""

    numbers: tuple[str, ...]
    categories: tuple[str, ...]
    support: dict  # numeric column -> (lowest, highest) input value: the open ends of '<20' and '>=80'

    def transformer(self) -> ColumnTransformer:
        parts = []
        if self.categories:
            parts.append(("categories", OneHotEncoder(handle_unknown="ignore"), list(self.categories)))
        if self.numbers:
            parts.append(("numbers", Pipeline([("missing", SimpleImputer(strategy="mean", keep_empty_features=True)),
                                               ("scale", StandardScaler())]), list(self.numbers)))
        return ColumnTransformer(parts, sparse_threshold=0.0)

    def frame(self, table: pd.DataFrame) -> pd.DataFrame:
        """The features of ``table`` (original or published rows): categories as text, numbers as floats."""
        out = {}
        for name in self.categories:
            out[name] = table[name].astype(str).to_numpy(dtype=object)
        for name in self.numbers:
            out[name] = column_numbers(table[name], self.support.get(name))
        return pd.DataFrame(out, index=table.index)


def plan(original: pd.DataFrame, published: pd.DataFrame, features: list[str], numeric: set[str],
         encoding: str) -> FeaturePlan:
    """The plan of ``features``: ``numeric`` holds the columns numeric in the input. A numeric column is a
    number under both encodings when the release publishes it as is; a generalized one only under midpoint."""
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r}")
    numbers, categories = [], []
    for name in features:
        as_is = original[name].astype(str).equals(published[name].astype(str))
        if name in numeric and (encoding == "midpoint" or as_is):
            numbers.append(name)
        else:
            categories.append(name)
    support = {}
    for name in numbers:
        values = pd.to_numeric(original[name], errors="coerce")
        if values.notna().any():
            support[name] = (float(values.min()), float(values.max()))
    return FeaturePlan(tuple(numbers), tuple(categories), support)


def column_numbers(values: pd.Series, support: tuple[float, float] | None = None) -> np.ndarray:
    """Each cell as a number: itself, a range label's midpoint, NaN for a label without bounds ('*')."""
    text = values.astype(str).to_numpy(dtype=object)
    distinct, inverse = np.unique(text, return_inverse=True)
    bounds = bounds_of(distinct, support)
    return bounds.midpoint[inverse.reshape(-1)]
