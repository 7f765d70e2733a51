"""What a cluster run merges from its partitions' scans: values in order of first appearance with their
counts (the report's value counts are run.report.counted_values over them)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def merge_first_seen(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Values with counts from partitions in input order: the values in order of first appearance in the
    whole table, the counts summed."""
    if not parts:
        return np.zeros(0, dtype=object), np.zeros(0, dtype=np.int64)
    values = np.concatenate([p[0] for p in parts]).astype(object)
    counts = np.concatenate([p[1] for p in parts]).astype(np.int64)
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), sort=False)
    return np.asarray(uniques, dtype=object), np.bincount(codes, weights=counts, minlength=len(uniques)).astype(np.int64)

