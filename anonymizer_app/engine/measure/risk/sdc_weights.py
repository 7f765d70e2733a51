"""A sampling-weight column read as numbers: every cell a number above 0, or a message naming the column, the
first bad value and its row (docs/definitions.md, "Risk with sampling weights")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import InputError


def weight_problem(values: pd.Series, column: str, rows: pd.Series | None = None) -> str | None:
    """Why ``values`` cannot be the sampling weight, or None. ``values`` may be the column's distinct values in
    order of first appearance (the first bad one is then the first in the column); ``rows``, the whole column
    when at hand, finds its row (1 = the first data row)."""
    text = values.astype(object).where(values.notna(), "").astype(str).str.strip()
    numbers = pd.to_numeric(text, errors="coerce")
    bad = numbers.isna() | ~np.isfinite(numbers.fillna(0)) | (numbers.fillna(0) <= 0)
    if not bad.any():
        return None
    value = str(text[bad].iloc[0])
    where = ""
    if rows is not None:
        cells = rows.astype(object).where(rows.notna(), "").astype(str).str.strip()
        at = np.flatnonzero(cells.to_numpy() == value)
        if len(at):
            where = f" (row {int(at[0]) + 1})"
    shown = repr(value) if value else "an empty cell"
    return (f"column {column!r} cannot be the sampling weight: {shown}{where} is not a number above 0; every "
            f"record needs a positive weight (the number of population units it stands for)")


def parse_weights(values: pd.Series, column: str) -> np.ndarray:
    """The weights as float64, or InputError with weight_problem's message."""
    problem = weight_problem(values, column, rows=values)
    if problem is not None:
        raise InputError(problem)
    return pd.to_numeric(values.astype(object).astype(str).str.strip()).to_numpy(dtype=float)
