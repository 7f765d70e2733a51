"""Sample frequencies fk and estimated population frequencies Fk of key-variable combinations, as sdcMicro's
``freqCalc`` counts them: a missing key value matches any value.

For a record *i*, every record *j* that agrees with it on each key where both have a value counts towards
*i*'s combination, with a factor: 1 when *j* has the same missing positions (then the same values); ``alpha``
when *i* is complete and *j* has missing values; 1 when *i* has missing values and *j* is complete; ``alpha``
when both have missing values in different positions. A record whose keys are all missing counts every record.
``fk`` sums the factors, ``Fk`` the factors times *j*'s sampling weight (1 without weights). sdcMicro,
R/freqCalc.r (Templ, Kowarik, Meindl 2015, "Statistical Disclosure Control for Micro-Data Using the R Package
sdcMicro", J. Stat. Softw. 67(4)); docs/definitions.md, "Risk with sampling weights".

Counting is per pair of missing-value patterns (a join on the keys both observe) over the distinct key
combinations, each carrying its records and their weights: the work is the number of patterns times the distinct
combinations, not the rows squared.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import InputError
from ...model.missing import MISSING, normalize_missing
from .classes import dense_ids

MISSING_CODE = -1


def key_codes(frame: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """rows x keys int64 codes of the key variables' values compared as text, ``MISSING_CODE`` where a cell is
    missing (a blank, an NA marker or a NaN)."""
    absent = [c for c in keys if c not in frame.columns]
    if absent:
        raise InputError(f"no column {', '.join(map(repr, absent))} in the table "
                         f"(columns: {', '.join(map(str, frame.columns))})")
    if not keys:
        raise InputError("choose at least one key variable (quasi-identifier)")
    out = np.empty((len(frame), len(keys)), dtype=np.int64)
    for j, c in enumerate(keys):
        values = normalize_missing(frame[c].where(frame[c].notna(), MISSING).astype(str)).to_numpy()
        codes = pd.factorize(values, use_na_sentinel=False)[0].astype(np.int64)
        codes[values == MISSING] = MISSING_CODE
        out[:, j] = codes
    return out


@dataclass(frozen=True)
class Frequencies:
    """fk and Fk of every record (row order of the input)."""

    fk: np.ndarray  # float64: sample frequency (a whole number unless alpha < 1 with missing values)
    Fk: np.ndarray  # float64: estimated population frequency, the sum of the weights counted in fk
    weighted: bool

    @property
    def n1(self) -> int:
        """Records whose combination occurs once in the sample (sample uniques)."""
        return int((self.fk == 1).sum())

    @property
    def n2(self) -> int:
        return int((self.fk == 2).sum())


def _group_ids(codes: np.ndarray) -> np.ndarray:
    """Dense id of every row's value combination over the columns of ``codes`` (all rows in one group with
    no column)."""
    n, q = codes.shape
    if q == 0 or n == 0:
        return np.zeros(n, dtype=np.int64)
    ids = dense_ids(codes[:, 0] + 1)
    for j in range(1, q):
        col = codes[:, j] + 1  # MISSING_CODE -> 0
        ids = dense_ids(ids * (int(col.max()) + 1) + col)
    return ids


def sample_frequencies(codes: np.ndarray, weights: np.ndarray | None = None, alpha: float = 1.0) -> Frequencies:
    """fk and Fk of every record of the key ``codes`` (``key_codes``), missing matching any value."""
    n, q = codes.shape
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if len(w) != n:
        raise InputError(f"{len(w)} weights for {n} records")
    if not 0 <= alpha <= 1:
        raise InputError(f"alpha must lie between 0 and 1, got {alpha}")
    fk = np.zeros(n)
    Fk = np.zeros(n)
    if n == 0:
        return Frequencies(fk, Fk, weights is not None)
    # the rule depends on a record's values and missing positions only: counted once per distinct combination,
    # each with its records (count) and their weights, then taken back to the rows
    combination = _group_ids(codes)
    n_comb = int(combination.max()) + 1
    first = np.zeros(n_comb, dtype=np.int64)
    first[combination[::-1]] = np.arange(n - 1, -1, -1)
    count = np.bincount(combination, minlength=n_comb).astype(float)
    weight = np.bincount(combination, weights=w, minlength=n_comb)
    c_codes = codes[first]
    c_missing = c_codes == MISSING_CODE
    c_fk = np.zeros(n_comb)
    c_Fk = np.zeros(n_comb)
    # the missing-value patterns: combinations grouped by which keys they miss
    pattern_of = _group_ids(c_missing.astype(np.int64))
    patterns = [np.flatnonzero(pattern_of == p) for p in range(int(pattern_of.max()) + 1)]
    masks = [c_missing[rows[0]] for rows in patterns]
    for p, rows_p in enumerate(patterns):
        p_has_missing = bool(masks[p].any())
        for r, rows_r in enumerate(patterns):
            if p == r:
                factor = 1.0
            elif not p_has_missing:
                factor = alpha  # a complete record counts records with missing values at alpha
            elif not masks[r].any():
                factor = 1.0  # a record with missing values counts complete records fully
            else:
                factor = alpha
            if factor == 0:
                continue
            both = ~masks[p] & ~masks[r]  # the keys both patterns observe: they must agree there
            sub = np.concatenate([c_codes[rows_p][:, both], c_codes[rows_r][:, both]])
            ids = _group_ids(sub)
            ids_p, ids_r = ids[:len(rows_p)], ids[len(rows_p):]
            size = int(ids.max()) + 1
            c_fk[rows_p] += factor * np.bincount(ids_r, weights=count[rows_r], minlength=size)[ids_p]
            c_Fk[rows_p] += factor * np.bincount(ids_r, weights=weight[rows_r], minlength=size)[ids_p]
    fk, Fk = c_fk[combination], c_Fk[combination]
    missing = codes == MISSING_CODE
    all_missing = missing.all(axis=1)
    if all_missing.any():  # sdcMicro: a record without any key value belongs to every combination
        fk[all_missing] = n
        Fk[all_missing] = w.sum()
    return Frequencies(fk, Fk, weights is not None)
