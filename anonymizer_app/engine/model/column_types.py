"""A column's type (integer, decimal, date or string), inferred from its text values. Below the table, the
default hierarchies and the hierarchy formats, which all read it."""

from __future__ import annotations

import pandas as pd

from .missing import is_marker

COLUMN_TYPES = ("integer", "decimal", "date", "string")
NUMERIC_TYPES = ("integer", "decimal")


def infer_type(values: pd.Series, na_values: tuple[str, ...] | list[str] | None = None) -> str:
    """integer, decimal, date or string, from the present text values of a column (blanks and NA
    markers are missing values of any type: engine.model.missing)."""
    # the distinct values decide: far fewer than the rows, and every one of them is checked
    s = pd.Series(pd.unique(values.astype(str)), dtype=object).str.strip()
    s = s[~s.map(lambda v: is_marker(v, na_values)).astype(bool)] if len(s) else s
    if s.empty:
        return "string"
    sample = s
    if sample.str.fullmatch(r"[-+]?\d+").all():
        return "integer"
    # \d+(\.\d*)?, not \d+\.?\d*, which backtracks quadratically on a long run of digits (59 s per cell)
    if sample.str.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?").all():
        return "decimal"
    if sample.str.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}").all():
        parsed = pd.to_datetime(sample, errors="coerce", format="mixed", dayfirst=False)
        if parsed.notna().all():
            return "date"
    return "string"
