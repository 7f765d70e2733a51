"""Who the records belong to: the person-id column as one integer per row (definitions.md, "The unit counted: the
person"). Every privacy model of a run with a person id counts distinct persons, not records."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import InputError
from .missing import MISSING
from .table import sorted_unique

ADVERSARIES = {
    "class": "knows one record of a person: each class holds at least k persons",
    "all-records": "knows all of a person's records: at least k persons share every class a person's records are in",
}


def check_adversary(value: str) -> str:
    if value not in ADVERSARIES:
        raise InputError(f"person adversary must be one of {', '.join(ADVERSARIES)}, got {value!r}")
    return value


@dataclass(frozen=True)
class Persons:
    """Row -> person (0..count-1) of a table, from its person-id column."""

    column: str
    codes: np.ndarray  # int64 per row
    count: int  # distinct persons
    blank: int  # rows with a blank person id, each a person of its own

    @classmethod
    def of(cls, values: pd.Series, column: str) -> Persons:
        """The persons of a person-id column; a blank id (a missing cell) is a person of its own."""
        cells = values.to_numpy(dtype=object)
        codes, uniques = pd.factorize(cells)
        codes = codes.astype(np.int64)
        blank_rows = np.flatnonzero(pd.isna(cells) | (cells == MISSING))
        count = len(uniques)
        if len(blank_rows):
            # the blank value's own code is freed only when nothing else uses it; fresh codes follow the others
            codes[blank_rows] = count + np.arange(len(blank_rows), dtype=np.int64)
            codes, count = _renumber(codes)
        if len(codes) and count == 0:
            raise InputError(f"person id {column!r}: no value")
        return cls(column, codes, int(count), int(len(blank_rows)))

    def distinct(self, row_class: np.ndarray, n_classes: int) -> np.ndarray:
        """Distinct persons per class (row -> class, -1 not counted)."""
        return distinct_persons(row_class, self.codes, self.count, n_classes)

    def rows_of(self, persons: np.ndarray) -> np.ndarray:
        """Per row: does it belong to one of ``persons`` (a bool mask over the persons)?"""
        return np.asarray(persons, dtype=bool)[self.codes]


def _renumber(codes: np.ndarray) -> tuple[np.ndarray, int]:
    uniq, inverse = np.unique(codes, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), len(uniq)


def distinct_persons(row_class: np.ndarray, person: np.ndarray, n_persons: int, n_classes: int) -> np.ndarray:
    """Distinct persons per class: the (class, person) pairs counted once (rows of class -1 left out)."""
    row_class = np.asarray(row_class, dtype=np.int64)
    kept = row_class >= 0
    pairs = sorted_unique(row_class[kept] * max(n_persons, 1) + person[kept])
    return np.bincount(pairs // max(n_persons, 1), minlength=n_classes).astype(np.int64)
