"""What a cluster run merges from its partitions' scans: values in order of first appearance with their
counts, and the report's value counts from them. The figures are engine.measure.metrics' own, weighted."""

from __future__ import annotations

import numpy as np
import pandas as pd

TOP_VALUES = 30


def merge_first_seen(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Values with counts from partitions in input order: the values in order of first appearance in the
    whole table, the counts summed."""
    if not parts:
        return np.zeros(0, dtype=object), np.zeros(0, dtype=np.int64)
    values = np.concatenate([p[0] for p in parts]).astype(object)
    counts = np.concatenate([p[1] for p in parts]).astype(np.int64)
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), sort=False)
    return np.asarray(uniques, dtype=object), np.bincount(codes, weights=counts, minlength=len(uniques)).astype(np.int64)


def value_counts(values: np.ndarray, counts: np.ndarray, rows: int, top: int = TOP_VALUES) -> dict:
    """report.value_counts from (values in order of first appearance, counts): pandas' value_counts
    orders the same (its counts in first-appearance order, sorted descending by the same sort)."""
    present = counts > 0
    ordered = pd.Series(counts[present], index=pd.Index(values[present].astype(str), dtype=object))
    ordered = ordered.sort_values(ascending=False)
    return {"values": [str(v) for v in ordered.index[:top]], "counts": [int(c) for c in ordered.to_numpy()[:top]],
            "distinct": int(len(ordered)), "rows": int(rows)}
