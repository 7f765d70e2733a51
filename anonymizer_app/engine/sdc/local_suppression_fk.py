"""Sample frequencies fk with a missing cell matching any value (sdcMicro's freqCalc with alpha = 1).

A record's fk is the number of records (itself included) that agree with it on every key variable where both
are non-missing. Local suppression works towards fk >= k under this count, and the gate recounts it from the
published rows, so both read this one module.

Key values are integer codes per column with -1 for a missing cell (``encode_keys``). Records are grouped by
their pattern of missing cells and, within a pattern, by their key values; for two patterns only the columns
observed in both are compared, so the work is a hash of the distinct key rows per pair of patterns present, not a
comparison of every pair of records."""

from __future__ import annotations

import numpy as np
import pandas as pd

MISSING = -1
MISSING_CELL = ""  # engine.model.missing.MISSING: how a text table writes a missing cell


def encode_keys(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """The key columns as an int64 code matrix (rows × keys), -1 where a cell is missing.

    Codes compare values by equality only (sdcMicro compares factor codes or numbers the same way). A missing
    cell is NaN/None or the product's MISSING marker, the empty string (engine/model/missing.py)."""
    codes = np.empty((len(frame), len(keys)), dtype=np.int64)
    for j, key in enumerate(keys):
        column = frame[key]
        codes[:, j], _ = pd.factorize(column, use_na_sentinel=True)
        if column.dtype == object:
            codes[(column == MISSING_CELL).to_numpy(), j] = MISSING
    return codes


def row_ids(values: np.ndarray) -> np.ndarray:
    """One int64 id per row of a code matrix (equal rows, equal ids); codes are >= 0 here."""
    if values.shape[1] == 0:
        return np.zeros(len(values), dtype=np.int64)
    radices = values.max(axis=0) + 1
    if float(np.prod(radices.astype(float))) < 2.0 ** 62:
        ids = np.zeros(len(values), dtype=np.int64)
        for j in range(values.shape[1]):
            ids = ids * radices[j] + values[:, j]
        return ids
    _, inverse = np.unique(values, axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


def wildcard_fk(codes: np.ndarray) -> np.ndarray:
    """fk of every record with missing cells (-1) matching any value: the count of compatible records."""
    n, m = codes.shape
    fk = np.zeros(n, dtype=np.int64)
    if n == 0:
        return fk
    observed = codes >= 0
    _, pattern_of = np.unique(row_ids(observed.astype(np.int64)), return_inverse=True)
    pattern_of = pattern_of.reshape(-1)
    groups = []  # per pattern: its rows, its observed columns, its distinct key rows, their sizes, row -> distinct
    for p in range(int(pattern_of.max()) + 1):
        rows = np.flatnonzero(pattern_of == p)
        distinct_of, firsts = pd.factorize(row_ids(codes[rows] - MISSING))
        one_row = np.zeros(len(firsts), dtype=np.int64)
        one_row[distinct_of] = np.arange(len(rows))  # a row of each distinct key row (its rows are all equal)
        groups.append((rows, observed[rows[0]], codes[rows[one_row]],
                       np.bincount(distinct_of, minlength=len(firsts)), distinct_of))
    for rows_p, mask_p, distinct_p, _, of_p in groups:
        fk_p = np.zeros(len(distinct_p), dtype=np.int64)  # per distinct key row of pattern p
        for _, mask_q, distinct_q, sizes_q, _ in groups:
            shared = np.flatnonzero(mask_p & mask_q)
            if shared.size == 0:
                fk_p += int(sizes_q.sum())
                continue
            # hashed, not sorted: one code per combination of the shared columns over both patterns' distinct rows
            combined, _ = pd.factorize(row_ids(np.concatenate([distinct_p[:, shared], distinct_q[:, shared]])))
            counts = np.bincount(combined[len(distinct_p):], weights=sizes_q, minlength=int(combined.max()) + 1)
            fk_p += counts[combined[:len(distinct_p)]].astype(np.int64)
        fk[rows_p] = fk_p[of_p]
    return fk


def violations(frame: pd.DataFrame, keys: list[str], k: int) -> int:
    """How many published records have fk < k (missing as wildcard): 0 when the frame is k-anonymous so."""
    if not keys or frame.empty:
        return 0
    return int((wildcard_fk(encode_keys(frame, keys)) < k).sum())
