"""SUDA2: minimal sample uniques, SUDA scores, DIS-SUDA scores and attribute contributions, as sdcMicro's ``suda2``.

A minimal sample unique (MSU) of a record is a set of key variables on which the record is unique in the sample
while it is unique on no proper subset of them (Elliot, Manning, Ford 2002; Manning, Haglin, Keane 2008). With M
key variables an MSU of size s adds to the record's SUDA score ``(M - s)!`` (sdcMicro's default,
``original_scores=TRUE``) or ``(2^(M-s) - 1) · s!(M-s)!/M!``; a variable's contribution to a record is the part
of the score from the MSUs that hold it. A missing key value is never part of an MSU (sdcMicro ignores the item).

The search is level by level over the subsets of key variables, vectorized over the records: the groups of a
subset are its parent's groups split by one more variable (integer keys re-densified, no sort), a record is unique
where its group has one record, and an MSU where it is unique on the subset but on none of the subsets one
variable smaller (uniqueness only grows with the subset, so those are enough). Work and memory are the number of
subsets times the distinct patterns; ``max_size`` bounds the subsets (sdcMicro searches all sizes).

DIS-SUDA (Elliot 2000; Skinner and Elliot 2002) as src/Suda2.h computes it, in its single-precision arithmetic:
``Dis = nU·f / (nU·f + nP·(1-f))`` with f the DIS fraction (0.01), nP twice the number of key patterns occurring
exactly twice, and nU the records alone in their bucket of sdcMicro's 16-bit hash of the key values (a unique
pattern sharing its bucket with another record is not counted: reproduced here, bucket for bucket); ``Q = 1 +
(8 - M)/20``; ``dis_i = 1 / (1 + (nU/Dis - nU) / (score_i^Q · Σ_j score_j^-Q))``, 0 for a score of 0.
With one or two key variables sdcMicro adds constant columns (M counts them). docs/definitions.md, "SUDA2".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from ...errors import InputError
from ...model.missing import MISSING, normalize_missing
from .classes import dense_ids

SUDA_MISSING = -999  # sdcMicro's missing code in suda2
DIS_FRACTION = 0.01  # sdcMicro's DisFraction default
# subsets × rows one level may hold (ids and masks): beyond it a smaller max_size is asked for
WORK_LIMIT = 400_000_000


@dataclass
class Suda2Result:
    keys: list[str]
    score: np.ndarray  # SUDA score per record
    dis_score: np.ndarray  # DIS-SUDA score per record (NaN where sdcMicro's is: no record alone in its bucket)
    contribution: np.ndarray  # rows x keys: each variable's share of the record's score (0 with score 0)
    msu_counts: np.ndarray  # rows x sizes: number of MSUs of size 1..max_size per record
    attribute_contributions: dict[str, float]  # per variable, in % of the total score
    level_contributions: list[dict] = field(default_factory=list)  # per variable and value, in % of its total
    dis: float = 0.0
    unique_total: int = 0  # nU
    duplicate_pairs: int = 0  # nP
    max_size: int = 0

    @property
    def msus_total(self) -> int:
        return int(self.msu_counts.sum())


def suda_values(frame: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The integers sdcMicro's suda2 sees, rows x keys, and each column's values as text: a column of whole
    numbers keeps its numbers, any other column its factor codes 1..L (levels sorted); missing is -999."""
    absent = [c for c in keys if c not in frame.columns]
    if absent:
        raise InputError(f"no column {', '.join(map(repr, absent))} in the table")
    if not keys:
        raise InputError("choose at least one key variable (quasi-identifier)")
    out = np.empty((len(frame), len(keys)), dtype=np.int64)
    texts = []
    for j, c in enumerate(keys):
        text = normalize_missing(frame[c].where(frame[c].notna(), MISSING).astype(str)).to_numpy(dtype=object)
        texts.append(text)
        # the distinct values decide and are converted, then taken back to the rows
        codes, distinct = pd.factorize(text, use_na_sentinel=False)
        distinct = np.asarray(distinct, dtype=object)
        present = distinct != MISSING
        numbers = pd.to_numeric(pd.Series(distinct[present]), errors="coerce").to_numpy(dtype=float)
        converted = np.full(len(distinct), SUDA_MISSING, dtype=np.int64)
        if len(numbers) and not np.isnan(numbers).any() and np.all(numbers == np.trunc(numbers)) \
                and np.all(np.abs(numbers) < 2**31):
            converted[present] = numbers.astype(np.int64)
        else:
            levels = np.array(sorted(distinct[present]), dtype=object)
            converted[present] = np.searchsorted(levels, distinct[present]) + 1
        out[:, j] = converted[codes]
    return out, texts


def score_weights(m: int, original_scores: bool = True) -> np.ndarray:
    """Weight of an MSU of size s = 1..m (index s-1) among m key variables."""
    if original_scores:
        return np.array([math.factorial(m - s) for s in range(1, m + 1)], dtype=float)
    return np.array([(2.0 ** (m - s) - 1) * math.factorial(s) * math.factorial(m - s) / math.factorial(m)
                     for s in range(1, m + 1)])


def _bucket_hash(values: np.ndarray) -> np.ndarray:
    """sdcMicro's 16-bit hash of each record's values (Suda2.h CEntry::InitValue): rotate left, add the value."""
    h = np.zeros(values.shape[0], dtype=np.int64)
    for j in range(values.shape[1]):
        carry = (h & 0x8000) != 0
        h = ((h << 1) + values[:, j] + carry) & 0xFFFF
    return h


def dis_constants(values: np.ndarray) -> tuple[int, int]:
    """(nU, nP) of sdcMicro's DIS: records alone in their hash bucket, and 2 × patterns occurring exactly twice."""
    n = values.shape[0]
    if n == 0:
        return 0, 0
    buckets = _bucket_hash(values)
    per_bucket = np.bincount(buckets, minlength=1 << 16)
    unique_total = int((per_bucket[buckets] == 1).sum())
    ids = np.zeros(n, dtype=np.int64)
    for j in range(values.shape[1]):
        column = dense_ids(values[:, j])
        ids = dense_ids(ids * (int(column.max()) + 1) + column)
    pattern_sizes = np.bincount(ids)
    return unique_total, 2 * int((pattern_sizes == 2).sum())


def dis_scores(score: np.ndarray, unique_total: int, duplicate_pairs: int, m: int,
               dis_fraction: float = DIS_FRACTION) -> tuple[np.ndarray, float]:
    """DIS-SUDA score of every record and the file's Dis, in Suda2.h's float/double mix."""
    f = np.float32(dis_fraction)
    nu, np_ = np.float32(unique_total), np.float32(duplicate_pairs)
    with np.errstate(divide="ignore", invalid="ignore"):
        dis = np.float32(nu * f / (nu * f + np_ * (np.float32(1.0) - f)))
        q = float(np.float32(1.0) + (np.float32(8.0) - np.float32(m)) / np.float32(20.0))
        positive = score != 0
        powered = np.power(score[positive], q)
        adjust = float(np.sum(1.0 / powered))
        spread = float(np.float32(nu / dis - nu))
        out = np.zeros(len(score))
        out[positive] = 1.0 / (1.0 + spread / (powered * adjust))
    return out, float(dis)


def suda2(frame: pd.DataFrame, keys: list[str], *, max_size: int | None = None, original_scores: bool = True,
          dis_fraction: float = DIS_FRACTION, progress=None) -> Suda2Result:
    """SUDA2 of ``frame`` on the key variables ``keys`` (see the module docstring). ``progress(fraction, phase)``
    is told after each subset size."""
    values, texts = suda_values(frame, keys)
    n, m_keys = values.shape
    m = max(m_keys, 3)  # sdcMicro adds constant columns to one or two keys
    if m_keys < 3:
        values_all = np.column_stack([values, np.ones((n, 3 - m_keys), dtype=np.int64)])
    else:
        values_all = values
    top = m_keys if max_size is None else int(max_size)
    if not 1 <= top <= m_keys:
        raise InputError(f"the largest MSU size must lie between 1 and {m_keys} (the key variables), got {max_size}")
    widest = max(math.comb(m_keys, s) for s in range(1, top + 1))
    if widest * max(n, 1) > WORK_LIMIT:
        raise InputError(f"SUDA2 on {m_keys} key variables and {n} records up to MSU size {top} holds {widest} "
                         f"subsets of one size at once; choose a smaller largest MSU size")
    weights = score_weights(m, original_scores)
    missing = values == SUDA_MISSING
    codes = np.column_stack([dense_ids(values[:, j]) for j in range(m_keys)]) if n else values
    cards = codes.max(axis=0) + 1 if n else np.ones(m_keys, dtype=np.int64)
    # the search runs on the distinct key patterns, each counted with its records: a record whose pattern repeats
    # is unique on no subset, and the rest share nothing with another record
    pattern = np.zeros(n, dtype=np.int64)
    for j in range(m_keys):
        pattern = dense_ids(pattern * int(cards[j]) + codes[:, j]) if n else pattern
    n_patterns = int(pattern.max()) + 1 if n else 0
    first = np.zeros(n_patterns, dtype=np.int64)
    first[pattern[::-1]] = np.arange(n - 1, -1, -1)
    multiplicity = np.bincount(pattern, minlength=n_patterns).astype(float)
    p_codes, p_missing = codes[first], missing[first]
    p_score = np.zeros(n_patterns)
    p_contribution = np.zeros((n_patterns, m_keys))
    p_msu_counts = np.zeros((n_patterns, top), dtype=np.int64)
    prev_ids: dict[tuple[int, ...], np.ndarray] = {(): np.zeros(n_patterns, dtype=np.int64)}
    prev_unique: dict[tuple[int, ...], np.ndarray] = {(): np.full(n_patterns, n == 1)}
    prev_complete: dict[tuple[int, ...], np.ndarray] = {(): np.ones(n_patterns, dtype=bool)}
    for size in range(1, top + 1):
        ids_now, unique_now, complete_now = {}, {}, {}
        for subset in combinations(range(m_keys), size):
            parent, last = subset[:-1], subset[-1]
            ids = dense_ids(prev_ids[parent] * int(cards[last]) + p_codes[:, last]) if n else prev_ids[parent]
            complete = prev_complete[parent] & ~p_missing[:, last]
            records = np.bincount(ids, weights=multiplicity)[ids] if n else multiplicity
            unique = (records == 1) & complete
            # minimal: unique on no subset one variable smaller
            below = np.zeros(n_patterns, dtype=bool)
            for drop in range(size):
                below |= prev_unique[subset[:drop] + subset[drop + 1:]]
            msu = unique & ~below
            if msu.any():
                where = np.flatnonzero(msu)
                p_score[where] += weights[size - 1]
                p_msu_counts[where, size - 1] += 1
                for v in subset:
                    p_contribution[where, v] += weights[size - 1]
            ids_now[subset], unique_now[subset], complete_now[subset] = ids, unique, complete
        prev_ids, prev_unique, prev_complete = ids_now, unique_now, complete_now
        if progress is not None:
            progress(size / top, f"SUDA2: minimal sample uniques of size {size}")
    score, contribution, msu_counts = p_score[pattern], p_contribution[pattern], p_msu_counts[pattern]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(score[:, None] > 0, contribution / np.where(score > 0, score, 1)[:, None], 0.0)
    total = float(score.sum())
    weighted = share * score[:, None]
    attribute = {k: (100 * float(weighted[:, j].sum()) / total if total else 0.0) for j, k in enumerate(keys)}
    levels = []
    for j, k in enumerate(keys):
        column_total = float(weighted[:, j].sum())
        present = texts[j] != MISSING
        per_value = pd.Series(weighted[present, j]).groupby(pd.Series(texts[j][present])).sum()
        for value, amount in per_value.items():
            levels.append({"variable": k, "value": str(value),
                           "contribution": 100 * float(amount) / column_total if column_total else 0.0})
    unique_total, duplicate_pairs = dis_constants(values_all)
    dis_score, dis = dis_scores(score, unique_total, duplicate_pairs, m, dis_fraction)
    return Suda2Result(list(keys), score, dis_score, share, msu_counts, attribute, levels, dis, unique_total,
                       duplicate_pairs, top)
