"""Equivalence classes of a table on chosen quasi-identifiers, and the sample risks read from them.

Everything is computed from integer codes: each QI is factorized once (a missing value is a value of
its own), the codes of several QIs are combined and re-densified (dense_ids), and the class sizes
come from np.bincount. The figures follow docs/definitions.md ("Disclosure risk", "Risk analysis").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import InputError
from ...model.missing import MISSING, normalize_missing

# Upper edges of the risk bands (a record's risk r falls in the band lo < r <= hi). 1/f for f = 1, 2,
# 3, 4 each get a band of their own; the lowest band holds every class of more than 100 records.
RISK_BAND_EDGES = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 1 / 3, 0.5, 1.0)


def column_codes(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """One integer code column per QI (rows x QIs), values compared as text; blanks and NA markers are one
    value, missing (engine.model.missing), as a run reads them."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"no column {', '.join(map(repr, missing))} in the table "
                         f"(columns: {', '.join(map(str, frame.columns))})")
    if not columns:
        raise InputError("choose at least one quasi-identifier")
    out = np.empty((len(frame), len(columns)), dtype=np.int64)
    for j, c in enumerate(columns):
        values = normalize_missing(frame[c].where(frame[c].notna(), MISSING).astype(str))
        out[:, j] = pd.factorize(values.to_numpy(), use_na_sentinel=False)[0]
    return out


def combine(codes: np.ndarray) -> np.ndarray:
    """Class id of every row for the QI code columns given (dense ids 0..#classes-1)."""
    if codes.shape[1] == 0 or codes.shape[0] == 0:
        return np.zeros(codes.shape[0], dtype=np.int64)
    ids = codes[:, 0].astype(np.int64)
    for j in range(1, codes.shape[1]):
        col = codes[:, j].astype(np.int64)
        ids = dense_ids(ids * (int(col.max()) + 1) + col)
    if codes.shape[1] == 1:
        ids = dense_ids(ids)
    return ids


def dense_ids(keys: np.ndarray) -> np.ndarray:
    """The rank of every key among the distinct keys (0..#distinct-1), as np.unique's inverse gives it, in
    O(n) over a presence table when the keys span no more than a few times the rows (codes combined from
    dense codes do): no sort of a million rows on each combination."""
    keys = np.asarray(keys, dtype=np.int64)
    if len(keys) == 0:
        return keys
    low = int(keys.min())
    span = int(keys.max()) - low + 1
    if span > max(4 * len(keys), 1 << 16):
        return np.unique(keys, return_inverse=True)[1].reshape(-1).astype(np.int64)
    present = np.zeros(span, dtype=bool)
    shifted = keys - low
    present[shifted] = True
    return (np.cumsum(present, dtype=np.int64) - 1)[shifted]


@dataclass(frozen=True)
class Classes:
    """The equivalence classes of a sample: row -> class, and the size of every class."""

    class_of_row: np.ndarray
    sizes: np.ndarray

    @classmethod
    def of(cls, codes: np.ndarray) -> Classes:
        ids = combine(codes)
        return cls(ids, np.bincount(ids).astype(np.int64) if len(ids) else np.zeros(0, np.int64))

    @property
    def n(self) -> int:
        return int(self.sizes.sum())

    def size_histogram(self) -> dict[int, int]:
        """{class size: number of classes of that size}, the input of the population estimators."""
        size, count = np.unique(self.sizes, return_counts=True)
        return {int(s): int(c) for s, c in zip(size, count)}


def sample_risks(sizes: np.ndarray, threshold: float) -> dict:
    """Class statistics and prosecutor/marketer risks of a sample from its class sizes (every record in
    one class): also what a run's published classes give (the comparison page)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    n = int(sizes.sum())
    ecs = len(sizes)
    if not 0 < threshold <= 1:
        raise InputError(f"threshold {threshold}: a risk threshold is above 0 and at most 1")
    if n == 0:
        return {"records": 0, "equivalence_classes": 0, "min_class_size": 0, "mean_class_size": 0.0,
                "max_class_size": 0, "sample_uniques": 0, "sample_uniques_share": 0.0,
                "prosecutor_risk_highest": 0.0, "prosecutor_risk_average": 0.0, "threshold": threshold,
                "records_at_risk": 0, "records_at_risk_share": 0.0, "marketer_risk": 0.0,
                "class_size_histogram": {}, "risk_bands": risk_bands(sizes)}
    at_risk = int(sizes[1.0 / sizes > threshold].sum())
    uniques = int((sizes == 1).sum())
    return {
        "records": n,
        "equivalence_classes": ecs,
        "min_class_size": int(sizes.min()),
        "mean_class_size": n / ecs,
        "max_class_size": int(sizes.max()),
        "sample_uniques": uniques,
        "sample_uniques_share": uniques / n,
        "prosecutor_risk_highest": 1.0 / int(sizes.min()),
        "prosecutor_risk_average": ecs / n,
        "threshold": threshold,
        "records_at_risk": at_risk,
        "records_at_risk_share": at_risk / n,
        "marketer_risk": ecs / n,
        "class_size_histogram": {str(int(k)): int(v) for k, v in zip(*np.unique(sizes, return_counts=True))},
        "risk_bands": risk_bands(sizes),
    }


def risk_bands(sizes: np.ndarray, risk: np.ndarray | None = None) -> list[dict]:
    """Records per risk band: a record's risk is 1/|class| (or ``risk`` per class when given)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    r = 1.0 / np.maximum(sizes, 1) if risk is None else np.asarray(risk, dtype=float)
    edges = np.asarray(RISK_BAND_EDGES)
    band = np.clip(np.searchsorted(edges, r, side="left") - 1, 0, len(edges) - 2)
    records = np.bincount(band, weights=sizes, minlength=len(edges) - 1).astype(np.int64)
    return [{"low": float(edges[i]), "high": float(edges[i + 1]), "label": band_label(i), "records": int(records[i])}
            for i in range(len(edges) - 1)]


def band_label(i: int) -> str:
    lo, hi = RISK_BAND_EDGES[i], RISK_BAND_EDGES[i + 1]
    return f"{_pct(lo)}–{_pct(hi)}" if i else f"≤ {_pct(hi)}"


def _pct(x: float) -> str:
    return f"{x * 100:.3g}%"
