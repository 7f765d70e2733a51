"""The figures of a run computed on the weighted rows of the merged frequency set: the same definitions
as engine.metrics (definitions.md), each weighted row counting for its records."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...measure.metrics import _ncp_by_label
from ...model.hierarchy import Hierarchy

TOP_VALUES = 30


def loss_figures(hierarchies: list[Hierarchy], numeric: list[bool], codes: np.ndarray, weights: np.ndarray,
                 levels: list[int], suppressed: np.ndarray) -> dict:
    """metrics.loss_figures (NCP, generalization height, non-uniform entropy) over weighted rows."""
    n = int(weights.sum())
    q = codes.shape[1]
    if n == 0 or q == 0 or (not any(levels) and not suppressed.any()):
        return {"ncp": 0.0, "generalization_height": 0.0, "non_uniform_entropy": 0.0}
    kept = ~suppressed
    wk, ws = weights[kept], weights[suppressed]
    n_sup = int(ws.sum())
    ncp_sum = height_sum = entropy = 0.0
    for j, (h, lv) in enumerate(zip(hierarchies, levels)):
        col = codes[:, j].astype(np.int64)
        leaf_count = np.bincount(col, weights=weights, minlength=len(h.leaves)).astype(np.int64)
        label = h.maps[lv][col]
        ncp_sum += float(np.sum(_ncp_by_label(h, lv, leaf_count > 0, numeric[j])[label[kept]] * wk)) + n_sup
        height_sum += (lv / h.height if h.height else 0.0) * (n - n_sup) + n_sup
        label_count = np.bincount(label, weights=weights, minlength=len(h.labels[lv])).astype(np.int64)
        entropy += float(np.sum(wk * (np.log2(label_count[label[kept]]) - np.log2(leaf_count[col[kept]]))))
        entropy += float(np.sum(ws * (np.log2(n) - np.log2(leaf_count[col[suppressed]]))))
    cells = n * q
    return {"ncp": ncp_sum / cells, "generalization_height": height_sum / cells, "non_uniform_entropy": entropy}


def homogeneity(row_class: np.ndarray, values: np.ndarray, weights: np.ndarray) -> dict:
    """metrics.homogeneity over weighted rows: classes with one sensitive value, and their records."""
    kept = row_class >= 0
    cls = row_class[kept].astype(np.int64)
    if cls.size == 0:
        return {"homogeneous_classes": 0, "homogeneous_records": 0}
    v = values[kept].astype(np.int64)
    width = int(v.max()) + 1
    pairs = np.unique(cls * width + v)
    distinct = np.bincount(pairs // width)
    sizes = np.bincount(cls, weights=weights[kept]).astype(np.int64)
    homogeneous = distinct == 1
    return {"homogeneous_classes": int(homogeneous.sum()), "homogeneous_records": int(sizes[homogeneous].sum())}


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


def cell_loss_figures(hierarchies: list[Hierarchy], numeric: list[bool], codes: np.ndarray, weights: np.ndarray,
                      cell_codes: np.ndarray, labels: list[np.ndarray], suppressed: np.ndarray) -> dict:
    """metrics.cell_loss_figures over weighted rows: each row's cell of QI j is ``labels[j][cell_codes[:, j]]``."""
    from ...measure.metrics import cell_loss_sums, loss_from_sums

    n = int(weights.sum())
    q = codes.shape[1]
    if n == 0 or q == 0:
        return {"ncp": 0.0, "generalization_height": 0.0, "non_uniform_entropy": 0.0}
    kept = ~suppressed
    sums = np.zeros(3)
    for j, h in enumerate(hierarchies):
        col = codes[:, j].astype(np.int64)
        leaf_count = np.bincount(col, weights=weights, minlength=len(h.leaves)).astype(np.int64)
        leaves = len(h.leaves)
        if kept.any():
            key = cell_codes[kept, j].astype(np.int64) * leaves + col[kept]
            pairs, inverse = np.unique(key, return_inverse=True)
            pair_count = np.bincount(inverse.reshape(-1), weights=weights[kept]).astype(np.int64)
        else:
            pairs, pair_count = np.zeros(0, np.int64), np.zeros(0, np.int64)
        sums += cell_loss_sums(h, numeric[j], leaf_count, np.asarray(labels[j], dtype=object), pairs // leaves,
                               pairs % leaves, pair_count, np.repeat(col[suppressed], weights[suppressed]))
    return loss_from_sums(sums, n, q)
