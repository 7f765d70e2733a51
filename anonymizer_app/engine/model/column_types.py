"""A column's type (integer, decimal, date or string), inferred from its text values. Below the table, the
default hierarchies and the hierarchy formats, which all read it."""

from __future__ import annotations

import re
from typing import Iterable

import pandas as pd

from .missing import marker_set

COLUMN_TYPES = ("integer", "decimal", "date", "string")
NUMERIC_TYPES = ("integer", "decimal")


INTEGER = re.compile(r"[-+]?\d+")
# \d+(\.\d*)?, not \d+\.?\d*, which backtracks quadratically on a long run of digits (59 s per cell)
DECIMAL = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")
DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}")


def infer_type(values: pd.Series, na_values: tuple[str, ...] | list[str] | None = None) -> str:
    """integer, decimal, date or string, from the present text values of a column (blanks and NA
    markers are missing values of any type: engine.model.missing)."""
    # the distinct values decide: far fewer than the rows, and every one of them is checked
    return infer_text_type(pd.unique(values.astype(str)), na_values)


def infer_text_type(texts: Iterable[str], na_values: tuple[str, ...] | list[str] | None = None) -> str:
    """infer_type of distinct str values (a dictionary's categories), in plain Python: pandas' string methods
    cost ~0.1 ms a call, more than a column's few distinct values take."""
    folded = marker_set(na_values)  # the markers folded once, every value compared against the set
    present = [v for v in (x.strip() for x in texts) if v.casefold() not in folded]
    if not present:
        return "string"
    if _all_match(present, INTEGER):
        return "integer"
    if _all_match(present, DECIMAL):
        return "decimal"
    if _all_match(present, DATE):
        parsed = pd.to_datetime(pd.Series(present, dtype=object), errors="coerce", format="mixed", dayfirst=False)
        if parsed.notna().all():
            return "date"
    return "string"


def _all_match(values: list[str], pattern: re.Pattern) -> bool:
    """Does every value match ``pattern``? (Stops at the first that does not: a text column fails at once.)"""
    fullmatch = pattern.fullmatch
    return all(fullmatch(v) is not None for v in values)
