"""An independent recount of MHA's Jensen-Shannon bound on the published classes: classes are the output
rows grouped by their QI cells; each record's background knowledge is recomputed with pandas from the
definition in the MHA module docstring (neighbourhood one hierarchy level up, Dirichlet prior of m
pseudo-records toward the table's distribution), without the engine's MHA code."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd


def background_knowledge(frame: pd.DataFrame, hierarchies: dict, qi: list[str], sensitive: str, level: int):
    """Per row, its BK distribution (rows x values) and the value order."""
    values = sorted(frame[sensitive].astype(str).unique())
    hood = pd.Series([""] * len(frame), index=frame.index, dtype=object)
    for col in qi:
        h = hierarchies[col]
        lv = min(level, h.height)
        up = {str(leaf): str(h.labels[lv][h.maps[lv][i]]) for i, leaf in enumerate(h.leaves)}
        hood = hood + "\x1f" + frame[col].astype(str).map(up)
    counts = pd.crosstab(hood, frame[sensitive].astype(str)).reindex(columns=values, fill_value=0)
    table = frame[sensitive].astype(str).value_counts(normalize=True).reindex(values).to_numpy()
    m = len(values)
    bk = (counts.to_numpy(dtype=float) + m * table) / (counts.sum(axis=1).to_numpy(dtype=float)[:, None] + m)
    per_hood = pd.DataFrame(bk, index=counts.index)
    return per_hood.loc[hood.to_numpy()].to_numpy()


def js(p: np.ndarray, q: np.ndarray) -> float:
    def h(x):
        x = x[x > 0]
        return float(-(x * np.log2(x)).sum())
    return max(h((p + q) / 2) - (h(p) + h(q)) / 2, 0.0)


def worst_published_js(result, table, hierarchies: dict, sensitive: str) -> tuple[float, int]:
    """(largest JS divergence between two records of one published class, number of published classes)."""
    hs = table.hierarchies(hierarchies)
    bk = background_knowledge(table.frame, hs, list(table.qi), sensitive, int(result.search["bk_level"]))
    kept = ~np.asarray(result.suppressed, dtype=bool)
    out = result.output[list(table.qi)].astype(str)[kept]
    worst, classes = 0.0, 0
    for _, idx in out.groupby(list(table.qi)).indices.items():
        classes += 1
        rows = np.flatnonzero(kept)[idx]
        distinct = np.unique(np.round(bk[rows], 12), axis=0)
        for a, b in itertools.combinations(range(len(distinct)), 2):
            worst = max(worst, js(distinct[a], distinct[b]))
    return worst, classes
