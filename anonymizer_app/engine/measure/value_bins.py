"""Ranges of a numeric sensitive column with many distinct values (pure: numpy/pandas only).

Homogeneity and distinct l on exact decimals say little (every EC of a wage column is "diverse" because no two
wages are equal, while an attacker still learns the wage to within a few dollars). So a numeric sensitive column
with more than MANY_VALUES distinct values is read in BINS ranges of about equal frequency (deciles of the
table's distribution, a value never split between two ranges). The attack report (measure.attack) and the
result page (services.sensitive_bins) use this one rule, so their ranges agree.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

MANY_VALUES = 20  # more distinct values than this: ranges instead of values (numeric), a capped table (others)
BINS = 10
MISSING = "(missing)"


def figure(value: float, digits: int = 4, grouping: bool = True) -> str:
    """A number with ``digits`` significant digits, without an exponent for ordinary magnitudes (thousands
    grouped unless ``grouping`` is False: codes such as ZIP codes)."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    magnitude = math.floor(math.log10(abs(value)))
    if -4 <= magnitude < 15:
        decimals = max(digits - 1 - magnitude, 0)
        text = f"{value:{',' if grouping else ''}.{decimals}f}"
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


def _numbers(distribution: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """The values of {value: share} as floats (NaN: not a number) and their shares, in one vectorized pass
    (a continuous column has one entry per record)."""
    values = pd.to_numeric(pd.Series(list(distribution), dtype=object), errors="coerce").to_numpy(dtype=float)
    values[~np.isfinite(values)] = np.nan
    return values, np.fromiter(distribution.values(), dtype=float, count=len(distribution))


def continuous(distribution: dict[str, float]) -> bool:
    """A numeric column with more than MANY_VALUES distinct values (non-numbers, e.g. blanks, aside)."""
    if len(distribution) <= MANY_VALUES:
        return False
    numbers = int(np.isfinite(_numbers(distribution)[0]).sum())
    return numbers > MANY_VALUES and numbers >= 0.9 * len(distribution)


def binning(distribution: dict[str, float], bins: int = BINS) -> Binning:
    """About equal-frequency ranges over the table's distribution {value: share}: an edge where the cumulative
    share passes i/bins, at a value of the table (a value is never split between two ranges)."""
    return binning_of(*_numbers(distribution), bins=bins)


def binning_of(values: np.ndarray, shares: np.ndarray, bins: int = BINS) -> Binning:
    """binning() over the values as floats (NaN: not a number) and their shares."""
    numeric = np.isfinite(values)
    order = np.argsort(values[numeric], kind="stable")
    xs, weights = values[numeric][order], shares[numeric][order]
    before = np.concatenate([[0.0], np.cumsum(weights)[:-1]])  # the share of the values below each one
    total = float(weights.sum()) or 1.0
    edges = [float(xs[0])]
    # candidates: the first value at which the share below reaches the next target (one per target)
    # (1e-9: the float sum of 100,000 shares drifts by ~1e-11; a share is at least 1 / records)
    for i in np.searchsorted(before, np.arange(1, bins) * total / bins - 1e-9, side="left"):
        if i < len(xs) and xs[i] > edges[-1]:
            edges.append(float(xs[i]))
    edges.append(float(xs[-1]))
    labels = [(figure(lo) if lo == hi else f"{figure(lo)} – {figure(hi)}") if i == len(edges) - 2
              else f"{figure(lo)} – <{figure(hi)}" for i, (lo, hi) in enumerate(zip(edges, edges[1:]))]
    if not numeric.all():
        labels.append(MISSING)
    return Binning(edges, labels)


def binned_table(binning: Binning, distribution: dict[str, float]) -> list[float]:
    """The table's {value: share} summed per range, vectorized (binned_counts for small dicts)."""
    values, shares = _numbers(distribution)
    return np.bincount(binning.indices(values), weights=shares, minlength=len(binning.edges))[:binning.size].tolist()


def binned_counts(binning: Binning, counts: dict[str, float]) -> list[float]:
    """{value: count or share} summed per range."""
    out = [0.0] * binning.size
    for value, count in counts.items():
        i = binning.index(as_number(value))
        if i < binning.size:
            out[i] += count
    return out
