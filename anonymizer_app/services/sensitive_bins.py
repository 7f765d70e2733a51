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

import bisect
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..models import Result
from . import results, storage

MANY_VALUES = 20  # more distinct values than this: ranges instead of values (numeric), a capped table (others)
BINS = 10
BINNED_MAX_ROWS = 2_000_000  # the binned figures read the published QI and sensitive columns: not past this
MISSING = "(missing)"


def figure(value: float, digits: int = 4) -> str:
    """A number with ``digits`` significant digits, without an exponent for ordinary magnitudes."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    magnitude = math.floor(math.log10(abs(value)))
    if -4 <= magnitude < 15:
        decimals = max(digits - 1 - magnitude, 0)
        text = f"{value:,.{decimals}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{value:.{digits - 1}e}"


def as_number(text: str) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


@dataclass
class Binning:
    """Ranges [edges[i], edges[i+1]) (the last one closed), their labels, and non-numbers as MISSING."""

    edges: list[float]
    labels: list[str]

    def index(self, value: float | None) -> int:
        """The range of ``value``; len(edges) - 1 (the MISSING bin) for a value that is not a number."""
        if value is None:
            return len(self.edges) - 1
        return min(max(bisect.bisect_right(self.edges, value) - 1, 0), len(self.edges) - 2)

    def indices(self, values: np.ndarray) -> np.ndarray:
        """The ranges of an array of floats (NaN: the MISSING bin)."""
        inner = np.asarray(self.edges[1:-1], dtype=float)
        out = np.searchsorted(inner, values, side="right")
        out[np.isnan(values)] = len(self.edges) - 1
        return out

    @property
    def size(self) -> int:
        return len(self.labels)


def continuous(distribution: dict[str, float]) -> bool:
    """A numeric column with more than MANY_VALUES distinct values (non-numbers, e.g. blanks, aside)."""
    numbers = sum(1 for v in distribution if as_number(v) is not None)
    return numbers > MANY_VALUES and numbers >= 0.9 * len(distribution)


def binning(distribution: dict[str, float], bins: int = BINS) -> Binning:
    """About equal-frequency ranges over the table's distribution {value: share}: an edge where the cumulative
    share passes i/bins, at a value of the table (a value is never split between two ranges)."""
    pairs = sorted((x, share) for v, share in distribution.items() if (x := as_number(v)) is not None)
    xs = [x for x, _ in pairs]
    total = sum(share for _, share in pairs) or 1.0
    edges, cumulative, target = [xs[0]], 0.0, 1
    for x, share in pairs:
        if cumulative >= target * total / bins - 1e-12 and x > edges[-1]:
            edges.append(x)
            while cumulative >= target * total / bins - 1e-12:
                target += 1
        cumulative += share
    edges.append(xs[-1])
    labels = [f"{figure(lo)} – {figure(hi)}" if i == len(edges) - 2 else f"{figure(lo)} – <{figure(hi)}"
              for i, (lo, hi) in enumerate(zip(edges, edges[1:]))]
    if any(as_number(v) is None for v in distribution):
        labels.append(MISSING)
    if len(edges) == 2 and edges[0] == edges[1]:
        labels[0] = figure(edges[0])
    return Binning(edges, labels)


def binned_counts(binning: Binning, counts: dict[str, float]) -> list[float]:
    """{value: count or share} summed per range."""
    out = [0.0] * binning.size
    for value, count in counts.items():
        i = binning.index(as_number(value))
        if i < binning.size:
            out[i] += count
    return out


def binned_attack(result: Result, report: dict, column: str, binning: Binning) -> dict | None:
    """The attack figures on ranges, from the published rows: ECs are the published records (suppressed ones
    aside) with equal quasi-identifiers. None when the rows are too many, the column is not published as is,
    or the ECs found are not the run's (a recoding whose classes are not its distinct QI tuples)."""
    qis = [q for q in report.get("quasi_identifiers", []) if q in results.output_columns(result)]
    n = int(report.get("records", 0) or 0)
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
