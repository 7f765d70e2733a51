"""A numeric sensitive column with many distinct values on the result page: its values in bins.

Homogeneity and distinct l on exact decimals say little (every EC of a wage column is "diverse" because no two
wages are equal, while an attacker still learns the wage to within a few dollars), and a table or a chart with a
row or a bar per value grows with the data. So a numeric sensitive column with more than MANY_VALUES distinct
values is read in BINS ranges of about equal frequency (deciles of the table's distribution): the attack report
counts the ECs whose published records all fall in one range (homogeneous on bins), the fewest ranges in an EC
(distinct l on bins) and the highest share of each range in an EC, computed from the published rows; its chart
stacks the ranges in value order. Other columns with many values get a capped table (services: attack rows).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

# the binning rule is the engine's (the attack report's ranges are the same)
from ..engine.measure.value_bins import (  # noqa: F401 (the page reads them here)
    BINS,
    MANY_VALUES,
    MISSING,
    Binning,
    as_number,
    binned_counts,
    binned_table,
    binning,
    continuous,
    figure,
)
from ..models import Result
from . import results, storage

# The figures on ranges read whole columns (the published QIs and sensitive column, a numeric QI of the dataset)
# where the result page otherwise reads one page of rows: only for tables up to this size (a few columns of
# 100,000 rows: tens of ms); larger results show the stored figures (the 30 most frequent values, the capped
# attack tables) and say the ranges were not read.
BINNED_MAX_ROWS = 100_000


def binned_attack(result: Result, report: dict, column: str, binning: Binning) -> dict | None:  # noqa: F811
    """The attack figures on ranges, from the published rows: ECs are the published records (suppressed ones
    aside) with equal quasi-identifiers. None when the rows are too many, the column is not published as is,
    or the ECs found are not the run's (a recoding whose classes are not its distinct QI tuples)."""
    qis = [q for q in report.get("quasi_identifiers", []) if q in results.output_columns(result)]
    n = int(report.get("input_records", report.get("records", 0)) or 0)
    if not qis or n > BINNED_MAX_ROWS or column not in results.output_columns(result):
        return None
    frame = storage.read_frame(storage.output_path(result), columns=[*qis, column, results.SUPPRESSED_COLUMN])
    frame = frame[~frame[results.SUPPRESSED_COLUMN].to_numpy(dtype=bool)]
    if not len(frame):
        return None
    classes = frame.groupby(qis, sort=False, dropna=False).ngroup().to_numpy()
    n_classes = int(classes.max()) + 1
    if n_classes != int((report.get("attack") or {}).get(column, {}).get("equivalence_classes", -1)):
        return None
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    where = binning.indices(values)
    counts = np.zeros((n_classes, binning.size if binning.labels[-1] == MISSING else binning.size + 1))
    np.add.at(counts, (classes, where), 1)
    counts = counts[:, :binning.size]
    sizes = counts.sum(axis=1)
    present = sizes > 0
    counts, sizes = counts[present], sizes[present]
    distinct = (counts > 0).sum(axis=1)
    homogeneous = distinct == 1
    shares = counts / sizes[:, None]
    best = shares.argmax(axis=0)
    table = counts.sum(axis=0) / counts.sum()
    return {
        "records": int(sizes.sum()), "classes": int(len(sizes)),
        "homogeneous_classes": int(homogeneous.sum()), "homogeneous_records": int(sizes[homogeneous].sum()),
        "l_min": int(distinct.min()),
        "posterior": [{"value": label, "prior": float(table[j]), "highest": float(shares[best[j], j]),
                       "class_size": int(sizes[best[j]])} for j, label in enumerate(binning.labels)],
    }


# ---- value distributions of numeric quasi-identifiers ---------------------------------------------------
HISTOGRAM_BINS = 20
NICE_STEPS = (1, 2, 2.5, 5, 10)


def nice_edges(low: float, high: float, bins: int = HISTOGRAM_BINS, integers: bool = False) -> list[float]:
    """Equal-width edges covering [low, high] with a round width (1, 2, 2.5 or 5 x 10^n; whole numbers for an
    integer column), at most about ``bins`` ranges: '20 – <25', not '18 – <21.05'."""
    span = high - low
    if span <= 0:
        return [low, low]
    raw = span / bins
    power = 10 ** math.floor(math.log10(raw))
    step = next(s * power for s in NICE_STEPS if s * power >= raw)
    if integers:
        step = max(1, math.ceil(step))
    start = math.floor(low / step) * step
    edges = [start]
    while edges[-1] <= high:
        edges.append(start + len(edges) * step)
    return edges


def histogram(values: pd.Series, edges: list[float] | None = None) -> dict | None:
    """Counts of a numeric column's values per range of ``edges`` (default: nice_edges over its values), in
    value order, as {"values": labels, "counts": [...], "edges": edges}; cells that are not numbers (blanks,
    '*') counted apart under their own text. None when fewer than half the cells are numbers."""
    numbers = pd.to_numeric(values, errors="coerce")
    present = numbers.notna().to_numpy()
    if present.sum() < 0.5 * len(values) or not present.any():
        return None
    x = numbers.to_numpy(dtype=float)[present]
    if edges is None:
        integers = bool(np.all(np.mod(x, 1) == 0))
        edges = nice_edges(float(x.min()), float(x.max()), integers=integers)
    if edges[0] == edges[-1]:
        labels, counts = [figure(edges[0], 6, False)], [int(present.sum())]
    else:
        where = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)
        counts = np.bincount(where, minlength=len(edges) - 1).tolist()
        labels = [f"{figure(lo, 6, False)} – <{figure(hi, 6, False)}" for lo, hi in zip(edges, edges[1:])]
    others = values[~present].astype(str).value_counts()
    return {"values": labels + [str(v) for v in others.index], "counts": counts + [int(c) for c in others],
            "edges": edges}


def value_order(label: str) -> tuple:
    """A published value in value order: by its first number ('[20-30)' at 20, '55' at 55), text after."""
    match = re.search(r"-?\d+(?:\.\d+)?", label)
    return (0, float(match.group()), label) if match else (1, 0.0, label)
