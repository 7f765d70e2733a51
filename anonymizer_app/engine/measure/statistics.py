"""Statistics before and after: the input's columns against the published table's (pure: numpy/pandas only).

What an analyst of the release would compute, computed on both tables so that the data holder sees what
changed (definitions.md, "Statistics before and after"):

- per column: records, non-missing, missing and distinct values, and in the published table the cells
  generalized to ``*`` (counted as missing) and the suppressed records;
- per numeric column: mean, median, standard deviation and the 5th, 25th, 50th, 75th and 95th percentiles.
  A published column that holds ranges (intervals.py) is estimated two ways, both labelled: (a) each range
  taken as its midpoint, (b) interval-aware, each range's records spread uniformly over it: the same mean
  (the midpoint is the mean of a uniform range), a standard deviation that adds the ranges' own spread
  (width² / 12) to the midpoints' variance, and percentiles read from the piecewise-linear distribution
  function of that mixture;
- frequency tables (value and count), numeric columns in value order;
- for a pair of columns: the contingency tables before and after and the association, Cramér's V (no
  continuity correction) for any pair and Pearson's and Spearman's correlation for two numeric columns (on
  midpoints after), each on the records where both cells are present.

Suppressed records are left out of every figure after and counted apart (``suppressed``), whether the run
published them as ``*`` rows or removed them. Everything works on each column's distinct values and their
counts (a Categorical's codes, or pd.factorize once), so a million rows cost a few array passes per column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..model.hierarchy import ROOT
from ..model.missing import NA_MARKERS, NULL_LABEL
from .intervals import Bounds, bounds_of, numbers

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
FREQUENCY_TOP = 30  # values listed per column (the rest summed in one line)
CROSS_TOP = 12  # rows and columns listed per contingency table (the rest summed in "other values")
HISTOGRAM_BINS = 20
OTHER = "(other values)"


@dataclass(frozen=True)
class Counted:
    """One column as its distinct texts, their counts, and each row's code into them (-1: left out)."""

    values: np.ndarray
    counts: np.ndarray
    codes: np.ndarray

    @property
    def rows(self) -> int:
        return int(self.counts.sum())


def counted(column: pd.Series | pd.Categorical, keep: np.ndarray | None = None) -> Counted:
    """The distinct texts of a column with their counts, over the rows ``keep`` marks (all by default): a
    Categorical's own codes, else one pd.factorize. Unused texts are dropped."""
    if isinstance(column, pd.Series) and isinstance(column.dtype, pd.CategoricalDtype):
        column = column.array
    if isinstance(column, pd.Categorical):
        codes = np.asarray(column.codes, dtype=np.int64)
        values = np.asarray(column.categories.astype(str), dtype=object)
    else:
        codes, uniques = pd.factorize(np.asarray(column, dtype=object), use_na_sentinel=True)
        codes = codes.astype(np.int64)
        values = np.asarray(uniques, dtype=object)
    if (codes < 0).any():  # a null cell: the empty text (what a run reads every missing marker as)
        values = np.append(values, "")
        codes = np.where(codes < 0, len(values) - 1, codes)
    if keep is not None:
        codes = np.where(keep, codes, -1)
    counts = np.bincount(codes[codes >= 0], minlength=len(values))
    used = counts > 0
    if not used.all():
        remap = np.cumsum(used) - 1
        codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
        values, counts = values[used], counts[used]
    return Counted(values, counts.astype(np.int64), codes)


def missing_mask(values: np.ndarray, markers: tuple[str, ...] = NA_MARKERS, published: bool = False,
                 numbers: np.ndarray | None = None) -> np.ndarray:
    """Texts that are missing: a marker (stripped, without case); after, also '*' and '(null)'. ``numbers``:
    the texts as floats, if known (a number is no marker: only the others are looked at)."""
    folded = {m.strip().casefold() for m in markers}
    if published:
        folded |= {ROOT, NULL_LABEL.casefold()}
    out = np.zeros(len(values), dtype=bool)
    look = np.arange(len(values)) if numbers is None else np.flatnonzero(~np.isfinite(numbers))
    out[look] = [str(v).strip().casefold() in folded for v in values[look]]
    return out


# ---- numbers from values and counts -------------------------------------------------------------------
def weighted_quantile(x: np.ndarray, w: np.ndarray, p: float, ordered: bool = False) -> float:
    """The quantile of the values ``x`` repeated ``w`` times, as numpy's and pandas' default ("linear": the
    value at position (n - 1) p of the sorted values, interpolated between its two neighbours). ``ordered``:
    ``x`` is sorted already."""
    if not ordered:
        order = np.argsort(x, kind="stable")
        x, w = x[order], w[order]
    xs, cum = x, np.cumsum(w)
    n = int(cum[-1])
    h = (n - 1) * p
    lo = math.floor(h)
    hi = min(lo + 1, n - 1)
    a = xs[np.searchsorted(cum, lo, side="right")]
    b = xs[np.searchsorted(cum, hi, side="right")]
    return float(a + (h - lo) * (b - a))


def describe(x: np.ndarray, w: np.ndarray) -> dict:
    """Mean, median, sample standard deviation (n - 1) and QUANTILES of values ``x`` with counts ``w``."""
    n = float(w.sum())
    if n == 0:
        return {}
    order = np.argsort(x, kind="stable")
    x, w = x[order], w[order]
    mean = float((x * w).sum() / n)
    var = float((w * (x - mean) ** 2).sum() / (n - 1)) if n > 1 else float("nan")
    out = {"records": int(n), "mean": mean, "sd": math.sqrt(var) if var == var else None,
           "median": weighted_quantile(x, w, 0.5, ordered=True)}
    out.update({_qkey(p): weighted_quantile(x, w, p, ordered=True) for p in QUANTILES})
    return out


def _qkey(p: float) -> str:
    return f"p{round(p * 100)}"


def mixture_quantile(bounds: Bounds, w: np.ndarray, p: float) -> float:
    """The p-quantile (inf {x : F(x) >= p}) of the mixture in which each label's ``w`` records are spread
    uniformly over [low, high] (a point label: all on its value). F is linear between the bounds and jumps at
    points, so it is built once at the sorted bounds and the crossing is interpolated."""
    low, high = bounds.low, bounds.high
    width = high - low
    spread = width > 0
    marks = np.concatenate([low, high])
    slope_change = np.concatenate([np.where(spread, w / np.where(spread, width, 1), 0),
                                   np.where(spread, -w / np.where(spread, width, 1), 0)])
    jump = np.concatenate([np.where(spread, 0, w), np.zeros(len(w))]).astype(float)
    order = np.argsort(marks, kind="stable")
    b, slope_change, jump = marks[order], slope_change[order], jump[order]
    slope_after = np.cumsum(slope_change)  # the slope of F on (b[j], b[j+1])
    gaps = np.diff(b, prepend=b[0])
    rise_before = np.concatenate([[0.0], slope_after[:-1]]) * gaps  # F(b[j]-) - F(b[j-1])
    cdf = np.cumsum(rise_before + jump)  # F(b[j]) (right-continuous)
    left = cdf - jump  # F(b[j]-)
    target = p * float(w.sum())
    tolerance = 1e-9 * max(float(w.sum()), 1.0)  # the float sums of slopes x widths drift by far less
    j = int(np.searchsorted(cdf, target - tolerance, side="left"))
    j = min(j, len(b) - 1)
    if j > 0 and left[j] >= target - tolerance and rise_before[j] > 0:
        start = cdf[j - 1]
        return float(b[j - 1] + (target - start) / slope_after[j - 1])
    return float(b[j])


def describe_intervals(bounds: Bounds, w: np.ndarray) -> dict:
    """Interval-aware figures of labels with ``bounds`` and counts ``w`` (see the module docstring)."""
    n = float(w.sum())
    if n == 0:
        return {}
    mid = bounds.midpoint
    mean = float((mid * w).sum() / n)
    between = float((w * (mid - mean) ** 2).sum() / (n - 1)) if n > 1 else float("nan")
    within = float((w * (bounds.high - bounds.low) ** 2 / 12).sum() / n)
    var = between + within
    out = {"records": int(n), "mean": mean, "sd": math.sqrt(var) if var == var else None,
           "median": mixture_quantile(bounds, w, 0.5)}
    out.update({_qkey(p): mixture_quantile(bounds, w, p) for p in QUANTILES})
    return out


# ---- one column ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Side:
    """A column on one side: its counted values, which are missing, and their numbers (bounds) if numeric."""

    counted: Counted
    missing: np.ndarray
    bounds: Bounds | None

    @property
    def present(self) -> np.ndarray:
        ok = ~self.missing
        return ok if self.bounds is None else ok & self.bounds.known


def sides(before: pd.Series, after: pd.Series, keep: np.ndarray | None,
          markers: tuple[str, ...] = NA_MARKERS) -> tuple[Side, Side, str]:
    """Both sides of a column and its kind: "numeric" when every non-missing input value is a number."""
    b, a = counted(before), counted(after, keep)
    b_numbers, a_numbers = numbers(b.values), numbers(a.values)
    b_missing = missing_mask(b.values, markers, numbers=b_numbers)
    a_missing = missing_mask(a.values, markers, published=True, numbers=a_numbers)
    b_bounds = bounds_of(np.where(b_missing, "", b.values), points=b_numbers)
    numeric = bool((~b_missing).any() and (b_bounds.known | b_missing).all() and not b_bounds.generalized.any())
    if not numeric:
        return Side(b, b_missing, None), Side(a, a_missing, None), "categorical"
    ok = b_bounds.known
    support = (float(b_bounds.low[ok].min()), float(b_bounds.high[ok].max()))
    a_bounds = bounds_of(np.where(a_missing, "", a.values), support, points=a_numbers)
    return Side(b, b_missing, b_bounds), Side(a, a_missing, a_bounds), "numeric"


def column_statistics(name: str, before: pd.Series, after: pd.Series, suppressed: np.ndarray | None = None,
                      markers: tuple[str, ...] = NA_MARKERS, removed: int = 0) -> dict:
    """Counts, numbers and frequencies of one column before (every input row) and after (the published rows
    that are not suppressed; ``suppressed``: the flag of each published row; ``removed``: suppressed records
    the published table does not hold at all)."""
    keep = None if suppressed is None else ~np.asarray(suppressed, dtype=bool)
    b, a, kind = sides(before, after, keep, markers)
    n_suppressed = removed + (0 if suppressed is None else int(np.asarray(suppressed, dtype=bool).sum()))
    out: dict = {"column": name, "kind": kind, "before": _counts(b), "after": _counts(a)}
    out["after"]["suppressed"] = n_suppressed
    star = a.missing.copy()  # '*' is among the missing texts: only those are looked at
    star[star] = [str(v).strip() == ROOT for v in a.counted.values[star]]
    out["after"]["generalized_to_root"] = int(a.counted.counts[star].sum())
    if kind == "numeric":
        assert b.bounds is not None and a.bounds is not None
        out["after"]["not_a_number"] = int(a.counted.counts[~a.missing & ~a.bounds.known].sum())
        out["after"]["ranges"] = int(a.counted.counts[a.bounds.generalized].sum())
        ok = b.present
        out["before"]["numbers"] = describe(b.bounds.low[ok], b.counted.counts[ok])
        ok = a.present
        if a.bounds.generalized[ok].any():
            mids = a.bounds.midpoint[ok]
            out["after"]["numbers"] = describe(mids, a.counted.counts[ok])
            out["after"]["interval_aware"] = describe_intervals(
                Bounds(a.bounds.low[ok], a.bounds.high[ok]), a.counted.counts[ok])
        else:
            out["after"]["numbers"] = describe(a.bounds.low[ok], a.counted.counts[ok])
        out["histogram"] = histogram(b, a)
    out["before"]["frequencies"] = frequencies(b)
    out["after"]["frequencies"] = frequencies(a)
    return out


def _counts(side: Side) -> dict:
    c = side.counted
    return {"records": c.rows, "non_missing": int(c.counts[~side.missing].sum()),
            "missing": int(c.counts[side.missing].sum()), "distinct": int((~side.missing).sum())}


def _value_order(side: Side, index: np.ndarray) -> np.ndarray:
    """``index`` (positions of values) in value order for a numeric side (by low bound, then high), missing
    and text last; as given otherwise."""
    if side.bounds is None:
        return index
    low = np.where(side.bounds.known[index], side.bounds.low[index], np.inf)
    high = np.where(side.bounds.known[index], side.bounds.high[index], np.inf)
    return index[np.lexsort((high, low))]


def _by_count(side: Side, counts: np.ndarray) -> np.ndarray:
    """Positions of the values by count, most frequent first; ties in value order (numeric), else by text."""
    candidates = np.arange(len(counts))
    if len(counts) > 4 * FREQUENCY_TOP:  # only values as frequent as the FREQUENCY_TOP-th can be listed first
        threshold = np.partition(counts, len(counts) - FREQUENCY_TOP)[len(counts) - FREQUENCY_TOP]
        candidates = np.flatnonzero(counts >= threshold)
        if len(candidates) > 100_000:  # a continuous column (every count 1): in value order among the ties
            candidates = candidates[:100_000]
    low = np.zeros(len(candidates)) if side.bounds is None else \
        np.where(side.bounds.known[candidates], side.bounds.low[candidates], np.inf)
    first = candidates[np.lexsort((side.counted.values[candidates].astype(str), low, -counts[candidates]))]
    rest = np.setdiff1d(np.arange(len(counts)), first, assume_unique=True)
    return np.concatenate([first, rest[np.argsort(-counts[rest], kind="stable")]])


def frequencies(side: Side, top: int = FREQUENCY_TOP) -> dict:
    """The ``top`` most frequent values with their counts (numeric: listed in value order; ties by text), and
    what the others hold."""
    c = side.counted
    by_count = _by_count(side, c.counts)
    shown = _value_order(side, by_count[:top])
    rest = by_count[top:]
    return {"values": [str(v) for v in c.values[shown]], "counts": c.counts[shown].tolist(),
            "order": "value" if side.bounds is not None else "frequency",
            "other_values": int(len(rest)), "other_records": int(c.counts[rest].sum())}


# ---- histograms on one scale --------------------------------------------------------------------------
def nice_edges(low: float, high: float, bins: int = HISTOGRAM_BINS, integers: bool = False) -> np.ndarray:
    """Equal-width edges over [low, high] with a round width (1, 2, 2.5 or 5 x 10^n; a whole width for a
    column of whole numbers: no bin '22.5 – <25' of ages)."""
    if high <= low:
        return np.array([low, low + 1.0])
    raw = (high - low) / bins
    power = 10 ** math.floor(math.log10(raw))
    step = next(s * power for s in (1, 2, 2.5, 5, 10) if s * power >= raw)
    if integers:
        step = max(1, math.ceil(step))
    start = math.floor(low / step) * step
    count = math.floor((high - start) / step) + 1  # the last bin holds the highest value
    return start + step * np.arange(count + 1)


def spread_counts(bounds: Bounds, w: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Records per bin [edges[i], edges[i+1]) (the last one closed): points where they fall, each range's
    records spread uniformly over it (the interval-aware reading)."""
    out = np.zeros(len(edges) - 1)
    point = bounds.known & ~bounds.generalized
    if point.any():
        where = np.clip(np.searchsorted(edges, bounds.low[point], side="right") - 1, 0, len(edges) - 2)
        out += np.bincount(where, weights=w[point], minlength=len(edges) - 1)
    spread = bounds.generalized
    if spread.any():
        lo, hi, c = bounds.low[spread][:, None], bounds.high[spread][:, None], w[spread][:, None]
        share = np.clip((edges[None, :] - lo) / (hi - lo), 0, 1)
        out += (np.diff(share, axis=1) * c).sum(axis=0)
    return out


def histogram(before: Side, after: Side) -> dict:
    """Records per bin of one set of round edges over the input's range, before and after (after: ranges
    spread uniformly), so both sides are drawn in value order on the same axes."""
    assert before.bounds is not None and after.bounds is not None
    b_ok, a_ok = before.present, after.present
    values = before.bounds.low[b_ok]
    low, high = float(values.min()), float(values.max())
    if a_ok.any():
        low, high = min(low, float(after.bounds.low[a_ok].min())), max(high, float(after.bounds.high[a_ok].max()))
    edges = nice_edges(low, high, integers=bool(np.all(np.mod(values, 1) == 0)))
    b_bounds = Bounds(before.bounds.low[b_ok], before.bounds.high[b_ok])
    a_bounds = Bounds(after.bounds.low[a_ok], after.bounds.high[a_ok])
    return {"edges": edges.tolist(),
            "before": spread_counts(b_bounds, before.counted.counts[b_ok].astype(float), edges).tolist(),
            "after": spread_counts(a_bounds, after.counted.counts[a_ok].astype(float), edges).tolist()}


# ---- pairs --------------------------------------------------------------------------------------------
def cramers_v(table: np.ndarray) -> float | None:
    """Cramér's V of a contingency table, without continuity correction: sqrt(χ² / (n (min(r, c) - 1))) over
    its non-empty rows and columns; None when either has fewer than two."""
    table = np.asarray(table, dtype=float)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    r, c = table.shape
    n = table.sum()
    if min(r, c) < 2 or n == 0:
        return None
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    chi2 = n * ((table ** 2 / np.outer(rows, cols)).sum() - 1)
    return math.sqrt(max(chi2, 0.0) / (n * (min(r, c) - 1)))


def _weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float | None:
    n = w.sum()
    if n < 2:
        return None
    mx, my = (w * x).sum() / n, (w * y).sum() / n
    sxy = (w * (x - mx) * (y - my)).sum()
    sxx, syy = (w * (x - mx) ** 2).sum(), (w * (y - my) ** 2).sum()
    if sxx <= 0 or syy <= 0:
        return None
    return float(sxy / math.sqrt(sxx * syy))


def _average_ranks(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The average rank (1-based, ties shared) of each value of ``x`` repeated ``w`` times."""
    distinct, inverse = np.unique(x, return_inverse=True)
    counts = np.bincount(inverse, weights=w)
    below = np.cumsum(counts) - counts
    return (below + (counts + 1) / 2)[inverse]


def pair_statistics(a: Side, b: Side) -> dict:
    """The contingency table of two columns on one side (rows where both are present) with Cramér's V, and
    when both are numeric Pearson's and Spearman's correlation (on midpoints)."""
    ok = a.present[np.maximum(a.counted.codes, 0)] & b.present[np.maximum(b.counted.codes, 0)]
    ok &= (a.counted.codes >= 0) & (b.counted.codes >= 0)
    ca, cb = a.counted.codes[ok], b.counted.codes[ok]
    joint, cells = np.unique(ca * len(b.counted.values) + cb, return_counts=True)
    ra, rb = joint // len(b.counted.values), joint % len(b.counted.values)
    # dense indices of the present values, for the χ² over non-empty rows and columns (a sparse sum)
    rows = np.bincount(ra, weights=cells, minlength=len(a.counted.values))
    cols = np.bincount(rb, weights=cells, minlength=len(b.counted.values))
    n = float(cells.sum())
    out: dict = {"records": int(n), "cramers_v": None, "pearson": None, "spearman": None}
    r, c = int((rows > 0).sum()), int((cols > 0).sum())
    if n > 0 and min(r, c) >= 2:
        chi2 = n * ((cells.astype(float) ** 2 / (rows[ra] * cols[rb])).sum() - 1)
        out["cramers_v"] = math.sqrt(max(chi2, 0.0) / (n * (min(r, c) - 1)))
    if a.bounds is not None and b.bounds is not None and n > 0:
        x, y, w = a.bounds.midpoint[ra], b.bounds.midpoint[rb], cells.astype(float)
        out["pearson"] = _weighted_pearson(x, y, w)
        out["spearman"] = _weighted_pearson(_average_ranks(x, w), _average_ranks(y, w), w)
    out["table"] = _shown_table(a, b, ra, rb, cells)
    return out


def _shown_table(a: Side, b: Side, ra: np.ndarray, rb: np.ndarray, cells: np.ndarray) -> dict:
    """The contingency table as listed: the CROSS_TOP most frequent values of each column (numeric: in value
    order), the rest summed in one row and column named OTHER."""
    def axis(side: Side, codes: np.ndarray) -> tuple[list[str], np.ndarray]:
        totals = np.bincount(codes, weights=cells, minlength=len(side.counted.values))
        by_count = _by_count(side, totals)
        by_count = by_count[totals[by_count] > 0]
        shown = _value_order(side, by_count[:CROSS_TOP])
        position = np.full(len(side.counted.values), len(shown), dtype=np.int64)
        position[shown] = np.arange(len(shown))
        labels = [str(v) for v in side.counted.values[shown]] + ([OTHER] if len(by_count) > CROSS_TOP else [])
        return labels, position

    row_labels, row_at = axis(a, ra)
    col_labels, col_at = axis(b, rb)
    width = len(col_labels) + 1
    flat = np.bincount(row_at[ra] * width + col_at[rb], weights=cells, minlength=(len(row_labels) + 1) * width)
    table = flat.astype(np.int64).reshape(len(row_labels) + 1, width)[:len(row_labels), :len(col_labels)]
    return {"rows": row_labels, "columns": col_labels, "counts": table.tolist()}


def association(a_name: str, b_name: str, before: tuple[pd.Series, pd.Series], after: tuple[pd.Series, pd.Series],
                suppressed: np.ndarray | None = None, markers: tuple[str, ...] = NA_MARKERS) -> dict:
    """Contingency tables and association of two columns before and after, and the change (after - before)."""
    keep = None if suppressed is None else ~np.asarray(suppressed, dtype=bool)
    a_before, a_after, a_kind = sides(before[0], after[0], keep, markers)
    b_before, b_after, b_kind = sides(before[1], after[1], keep, markers)
    first, then = pair_statistics(a_before, b_before), pair_statistics(a_after, b_after)
    change = {key: (None if first[key] is None or then[key] is None else then[key] - first[key])
              for key in ("cramers_v", "pearson", "spearman")}
    return {"columns": [a_name, b_name], "kinds": [a_kind, b_kind], "before": first, "after": then,
            "change": change}


def table_statistics(before: pd.DataFrame, after: pd.DataFrame, suppressed: np.ndarray | None = None,
                     markers: tuple[str, ...] = NA_MARKERS, removed: int = 0) -> dict:
    """column_statistics of every column both tables hold (in the input's order). ``suppressed``: the flag of
    each published row; ``removed``: suppressed records the published table does not hold."""
    columns = [c for c in before.columns if c in after.columns]
    flags = None if suppressed is None else np.asarray(suppressed, dtype=bool)
    flagged = 0 if flags is None else int(flags.sum())
    # records_after: the published table's rows that count after (suppressed records left out)
    return {"records_before": int(len(before)), "records_after": int(len(after)) - flagged,
            "suppressed": flagged + removed,
            "columns": [column_statistics(c, before[c], after[c], flags, markers, removed) for c in columns]}
