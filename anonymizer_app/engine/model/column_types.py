"""A column's type (integer, decimal, date or string), inferred from its text values. Below the table, the
default hierarchies and the hierarchy formats, which all read it."""

from __future__ import annotations

import pandas as pd

from .missing import marker_set

COLUMN_TYPES = ("integer", "decimal", "date", "string")
NUMERIC_TYPES = ("integer", "decimal")


def infer_type(values: pd.Series, na_values: tuple[str, ...] | list[str] | None = None) -> str:
    """integer, decimal, date or string, from the present text values of a column (blanks and NA
    markers are missing values of any type: engine.model.missing)."""
    # the distinct values decide: far fewer than the rows, and every one of them is checked
    s = pd.Series(pd.unique(values.astype(str)), dtype=object).str.strip()
    if len(s):  # the markers folded once, every value compared against the set (not folded again per value)
        folded = marker_set(na_values)
        s = s[~s.str.casefold().isin(folded).to_numpy(dtype=bool)]
    if s.empty:
        return "string"
    sample = s
    if _all_match(sample, r"[-+]?\d+"):
        return "integer"
    # \d+(\.\d*)?, not \d+\.?\d*, which backtracks quadratically on a long run of digits (59 s per cell)
    if _all_match(sample, r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?"):
        return "decimal"
    if _all_match(sample, r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}"):
        parsed = pd.to_datetime(sample, errors="coerce", format="mixed", dayfirst=False)
        if parsed.notna().all():
            return "date"
    return "string"


def _all_match(values: pd.Series, pattern: str, head: int = 1024) -> bool:
    """Does every value match ``pattern``? The first ``head`` values first: a text column fails there, without a
    pass over its other (maybe hundreds of thousands of) distinct values."""
    if len(values) > head and not values.iloc[:head].str.fullmatch(pattern).all():
        return False
    return bool(values.str.fullmatch(pattern).all())
