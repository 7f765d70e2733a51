"""Figures of a synthetic table against its original (issue 33): how close its statistics are, and how close its
rows are to real people's.

* **Marginal TVD** of a column: the total-variation distance ½·Σ|p(v) − q(v)| between the column's value shares in
  the original (p) and the synthetic table (q); **pairwise TVD** the same over the value pairs of two columns.
  Reported: the mean and the largest over columns (pairs), and the worst one.
* **Distance to the closest record (DCR)** of a synthetic row: the smallest distance to an original row, where
  the distance of two rows is the mean over the columns of 0/1 (a categorical column: the values differ) or
  |x − y| / (the original's range), capped at 1 (a numeric column): 0 is an exact copy, 1 differs everywhere.
  Reported: the share of exact copies (DCR = 0) and the DCR's median and 5th percentile; on all columns and on
  the quasi-identifiers.
* **Exact copies with a rare QI combination**: synthetic rows equal to an original row (all columns) whose QI
  combination occurs fewer than ``rare_below`` times in the original — a real, rare person republished; each
  such combination is listed with its original frequency.
* **Membership inference**: the attacker scores each original row by −(its distance to the closest synthetic
  row) and guesses "was in the training rows"; the AUC (sklearn's roc_auc_score) over the training rows
  (members) and held-out original rows (non-members) the synthesizer never saw: 0.5 is a coin toss, 1 a perfect
  attack.

The nearest-neighbour searches run on integer codes in chunks (numpy), fast enough for Adult's 30,000 rows."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

CHUNK_CELLS = 8_000_000  # rows × original rows per chunk of the distance search (float32: 32 MB)


def _text(frame: pd.DataFrame, column: str) -> pd.Series:
    s = frame[column]
    return s.astype(object).where(s.notna(), "").astype(str)


def _shares(frame: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    keys = pd.MultiIndex.from_arrays([_text(frame, c) for c in columns]) if len(columns) > 1 \
        else pd.Index(_text(frame, columns[0]))
    return pd.Series(1.0, index=keys).groupby(level=list(range(len(columns)))).sum() / max(len(frame), 1)


def tvd(original: pd.DataFrame, synthetic: pd.DataFrame, columns: Sequence[str]) -> float:
    """½·Σ|p − q| over the value combinations of ``columns``."""
    p, q = _shares(original, columns), _shares(synthetic, columns)
    p, q = p.align(q, fill_value=0.0)
    return float(0.5 * np.abs(p.to_numpy() - q.to_numpy()).sum())


def marginal_distances(original: pd.DataFrame, synthetic: pd.DataFrame, columns: Sequence[str]) -> dict[str, Any]:
    one = {c: tvd(original, synthetic, [c]) for c in columns}
    two = {f"{a} × {b}": tvd(original, synthetic, [a, b]) for a, b in itertools.combinations(columns, 2)}
    out: dict[str, Any] = {"one_way": one, "one_way_mean": float(np.mean(list(one.values()))),
                           "one_way_max": max(one.values())}
    if two:
        worst = max(two, key=lambda k: two[k])
        out.update(two_way_mean=float(np.mean(list(two.values()))), two_way_max=two[worst], two_way_worst=worst)
    return out


class _Coder:
    """Both tables' columns as numbers on one scale: categorical values as shared integer codes, numeric ones as
    numbers divided by the original's range (so a difference of the whole range counts 1)."""

    def __init__(self, original: pd.DataFrame, columns: Sequence[str], numeric: set[str]):
        self.columns = list(columns)
        self.numeric = [c in numeric for c in self.columns]
        self.categories: dict[str, dict[str, int]] = {}
        self.scale: dict[str, tuple[float, float]] = {}
        for c, is_num in zip(self.columns, self.numeric):
            if is_num:
                x = pd.to_numeric(original[c], errors="coerce")
                low, high = float(np.nanmin(x)) if x.notna().any() else 0.0, float(np.nanmax(x)) if x.notna().any() else 1.0
                self.scale[c] = (low, (high - low) or 1.0)
            else:
                self.categories[c] = {v: i for i, v in enumerate(pd.unique(_text(original, c)))}

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        cols = []
        for c, is_num in zip(self.columns, self.numeric):
            if is_num:
                low, width = self.scale[c]
                x = pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=float)
                cols.append(np.where(np.isnan(x), -1e6, (x - low) / width))  # missing: far from every number
            else:
                index = self.categories[c]
                cols.append(np.array([index.get(v, -1) for v in _text(frame, c)], dtype=float))
        return np.column_stack(cols) if cols else np.zeros((len(frame), 0))


def closest_distances(queries: np.ndarray, reference: np.ndarray, numeric: Sequence[bool]) -> np.ndarray:
    """For each query row, the smallest mixed distance to a reference row (the module's definition)."""
    if len(reference) == 0:
        return np.full(len(queries), np.nan)
    reference, ref_counts = np.unique(reference, axis=0, return_counts=True)
    queries_unique, back = np.unique(queries, axis=0, return_inverse=True)
    back = np.asarray(back).ravel()
    k = max(1, len(numeric))
    chunk = max(1, CHUNK_CELLS // len(reference))
    best = np.empty(len(queries_unique))
    for start in range(0, len(queries_unique), chunk):
        q = queries_unique[start:start + chunk]
        total = np.zeros((len(q), len(reference)), dtype=np.float32)
        for j, is_num in enumerate(numeric):
            a, b = q[:, j][:, None], reference[:, j][None, :]
            if is_num:
                total += np.minimum(np.abs(a - b), 1.0).astype(np.float32)
            else:
                total += (a != b)
        best[start:start + len(q)] = total.min(axis=1) / k
    return best[back]


def closest_record(original: pd.DataFrame, synthetic: pd.DataFrame, columns: Sequence[str],
                   numeric: set[str]) -> dict[str, Any]:
    coder = _Coder(original, columns, numeric)
    d = closest_distances(coder.encode(synthetic), coder.encode(original), coder.numeric)
    return {"exact_copies": int((d == 0).sum()), "exact_copy_share": float((d == 0).mean()) if d.size else 0.0,
            "median": float(np.median(d)) if d.size else None,
            "p5": float(np.percentile(d, 5)) if d.size else None}


def rare_exact_copies(original: pd.DataFrame, synthetic: pd.DataFrame, columns: Sequence[str],
                      qi: Sequence[str], rare_below: int = 5, listed: int = 50) -> dict[str, Any]:
    """Synthetic rows that copy an original row whose QI combination is rare in the original."""
    cols = list(columns)
    orig = pd.DataFrame({c: _text(original, c) for c in cols})
    syn = pd.DataFrame({c: _text(synthetic, c) for c in cols})
    originals = set(map(tuple, orig.to_numpy().tolist()))
    copy = np.fromiter((tuple(r) in originals for r in syn.to_numpy().tolist()), dtype=bool, count=len(syn))
    qi = list(qi)
    flagged: dict[tuple, int] = {}
    rows_flagged = 0
    if qi and copy.any():
        counts = orig.groupby(qi, sort=False).size()
        # keys as tuples whatever the number of QIs (one QI groups on a plain Index, not a MultiIndex)
        frequency = {k if isinstance(k, tuple) else (k,): int(f) for k, f in zip(counts.index, counts.to_numpy())}
        copied = list(map(tuple, syn.loc[copy, qi].to_numpy().tolist()))
        for key in copied:
            f = frequency.get(key, 0)
            if f < rare_below:
                flagged[key] = f
        rows_flagged = sum(1 for key in copied if key in flagged)
    listing = [{"qi": dict(zip(qi, key)), "original_frequency": f}
               for key, f in sorted(flagged.items(), key=lambda kv: (kv[1], kv[0]))[:listed]]
    return {"rare_below": rare_below, "rows": rows_flagged, "combinations": len(flagged), "listed": listing}


def membership_auc(members: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame, columns: Sequence[str],
                   numeric: set[str], sample: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The distance-to-closest-synthetic-record attack's AUC (up to ``sample`` rows of each side, drawn with
    ``seed``)."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(seed)
    take = min(sample, len(members), len(holdout))
    if take == 0 or len(synthetic) == 0:
        return {"auc": None, "rows_each": 0}
    m = members.iloc[np.sort(rng.choice(len(members), take, replace=False))]
    h = holdout.iloc[np.sort(rng.choice(len(holdout), take, replace=False))]
    coder = _Coder(pd.concat([members, holdout], ignore_index=True), columns, numeric)
    syn = coder.encode(synthetic)
    score = -np.concatenate([closest_distances(coder.encode(m), syn, coder.numeric),
                             closest_distances(coder.encode(h), syn, coder.numeric)])
    labels = np.r_[np.ones(take), np.zeros(take)]
    return {"auc": float(roc_auc_score(labels, score)), "rows_each": take}


def synthetic_figures(original: pd.DataFrame, synthetic: pd.DataFrame, columns: Sequence[str],
                      kinds: Mapping[str, str] | None = None, qi: Sequence[str] = (),
                      holdout: pd.DataFrame | None = None, rare_below: int = 5, seed: int = 0) -> dict[str, Any]:
    """Every figure above. ``original``: the rows the synthesizer read; ``holdout``: original rows it did not
    read (for the membership test; None: no membership figure)."""
    numeric = {c for c in columns if (kinds or {}).get(c) == "numeric"}
    out: dict[str, Any] = {"rows_original": len(original), "rows_synthetic": len(synthetic)}
    out["tvd"] = marginal_distances(original, synthetic, columns)
    out["closest_record"] = closest_record(original, synthetic, columns, numeric)
    if qi:
        out["closest_record_qi"] = closest_record(original, synthetic, qi, numeric)
        out["rare_exact_copies"] = rare_exact_copies(original, synthetic, columns, qi, rare_below)
    if holdout is not None:
        out["membership"] = membership_auc(original, holdout, synthetic, columns, numeric, seed=seed)
    return out
