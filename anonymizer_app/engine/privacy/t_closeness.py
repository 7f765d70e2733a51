"""t-closeness with its three ground distances (definitions.md): the Earth Mover's Distance between
every class's sensitive distribution and the table's is at most t.

The three EMDs are convex in the class distribution, so a merge of classes that all hold t-closeness
holds it: monotonic without suppression; with suppression a passing class merged with a failing one
may fail, so not monotonic then (as ARX decides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import InputError
from .base import EPS, Parameter, SensitiveModel, shares
from .distributions import sensitive_domain

DISTANCES = ("equal", "ordered", "hierarchical")
# How far from the threshold a class's EMD as equal_failing computes it must lie for its verdict to be the one
# the figure of ``values`` gives: both are within ~m x 1e-16 of the exact EMD (sums of m terms of magnitude <= 1 in
# float64), so 1e-10 leaves a wide margin; a class nearer than this is judged by the figure.
MARGIN = 1e-10
MAX_VALUES = 100_000  # (a sum of m terms errs by up to ~m x 1.1e-16: more values, and the margin would not hold)


def emd_equal(p: np.ndarray, q: np.ndarray, overwrite: bool = False) -> np.ndarray:
    """½ Σ |p_i - q_i| per row of p (``overwrite``: p, a float array, is used as the scratch space)."""
    d = np.subtract(p, q[None, :], out=p if overwrite else None)
    np.abs(d, out=d)
    return 0.5 * d.sum(axis=1)


def emd_ordered(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(1/(m-1)) Σ_i |Σ_{j<=i} (p_j - q_j)| per row of p (values in their order)."""
    m = p.shape[1]
    if m <= 1:
        return np.zeros(len(p))
    return np.abs(np.cumsum(p - q[None, :], axis=1)).sum(axis=1) / (m - 1)


def emd_hierarchical(p: np.ndarray, q: np.ndarray, hierarchy, leaf_of_value: np.ndarray) -> np.ndarray:
    """Li, Li & Venkatasubramanian 2007: Σ over inner nodes N of height(N)/H · min(pos_extra, neg_extra),
    extra(C) = Σ_{leaves under C} (p - q); values absent from the table weigh 0."""
    H = hierarchy.height
    if H == 0:
        return np.zeros(len(p))
    d = p - q[None, :]
    total = np.zeros(len(p))
    for lv in range(1, H + 1):
        child = hierarchy.maps[lv - 1][leaf_of_value]
        parent_of_child = np.zeros(len(hierarchy.labels[lv - 1]), dtype=np.int64)
        parent_of_child[child] = hierarchy.maps[lv][leaf_of_value]
        n_child, n_parent = len(hierarchy.labels[lv - 1]), len(hierarchy.labels[lv])
        extra = _add_columns(d, child, n_child)
        pos = _add_columns(np.maximum(extra, 0), parent_of_child, n_parent)
        neg = _add_columns(np.maximum(-extra, 0), parent_of_child, n_parent)
        total += (lv / H) * np.minimum(pos, neg).sum(axis=1)
    return total


def _add_columns(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """out[:, g] = Σ values[:, i] over the columns i with group[i] = g, added in ascending i from 0: what
    np.add.at(out.T, group, values.T) computes, to the last bit, one column at a time (np.add.at goes element by
    element: ~20x slower on a node's classes)."""
    columns = np.ascontiguousarray(values.T)  # (rows of the transposes: contiguous additions)
    out = np.zeros((n_groups, len(values)))
    for i, g in enumerate(group.tolist()):
        out[g] += columns[i]
    # C order, as np.add.at's target was: the callers' row sums then add in the same order
    return np.ascontiguousarray(out.T)


def _reference(domain) -> tuple[np.ndarray, float, np.ndarray]:
    """The table's distribution q, its float sum and a vector of ones over the values, kept on the domain while
    its table counts are the same array (lattice searches check thousands of nodes against one domain)."""
    hit = domain.__dict__.get("_t_closeness_reference")
    if hit is not None and hit[0] is domain.table_counts:
        return hit[1]
    q = np.asarray(domain.table_distribution, dtype=np.float64)
    ref = (q, float(q.sum()), np.ones(len(q)))
    domain.__dict__["_t_closeness_reference"] = (domain.table_counts, ref)
    return ref


def equal_failing(counts: np.ndarray, domain, threshold: float) -> np.ndarray:
    """Per class (a row of ``counts``), whether emd_equal(shares(counts), q) > ``threshold``: the same verdicts
    in fewer passes over the matrix and no temporary of its size (the search checks every class of thousands
    of nodes: on Adult, 8 QIs, 4% + 0.2-closeness, a million classes x 14 values).

    With p = c/s (s >= 1 records) and Σ p_i = 1: ½ Σ|p_i - q_i| = ½ (1 + Q) - Σ min(p_i, q_i), Q = Σ q_i (1 up
    to rounding); row sums as matrix-vector products (BLAS; exact for the counts, integers below 2^53). So
    computed, the EMD may differ from ``values``' figure in its last bits (both are within ~1e-14 of the exact
    one): when a class lies within MARGIN of the threshold, or has no records (its p is 0, not a distribution),
    the whole matrix is judged by that figure instead, as before."""
    n, m = counts.shape
    if not n:
        return np.zeros(0, dtype=bool)
    q, total, ones = _reference(domain)
    f = np.array(counts, dtype=np.float64)  # its own copy: the caller may hand the counts to another model
    s = f @ ones
    if m > MAX_VALUES or s.min() < 1.0:
        return emd_equal(shares(counts), q, overwrite=True) > threshold
    f *= (1.0 / s)[:, None]
    np.minimum(f, q, out=f)
    emd = 0.5 * (1.0 + total) - f @ ones
    if ((emd > threshold - MARGIN) & (emd <= threshold + MARGIN)).any():
        return emd_equal(shares(counts), q, overwrite=True) > threshold
    return emd > threshold


SIZE_TABLE_CELLS = 4_000_000  # sizes x values of the table of sizes that always fail (sure_failing_sizes)


def sure_failing_sizes(domain, threshold: float) -> np.ndarray:
    """Per class size s = 0 .. L, whether every class of s records fails equal-distance closeness at
    ``threshold``, whatever values it holds (kept on the domain per threshold; sizes above L: not known).

    The least EMD of s records, exactly: with a_i = s T_i / N (T the table's counts, N their total), the EMD of
    counts c is 1 - Σ min(c_i, a_i) / s, and Σ min(c_i, a_i) is largest (each term concave in c_i, so greedily)
    when every value takes floor(a_i) records and the r = s - Σ floor(a_i) left go to the r largest fractional
    parts: in integers, s·N·least = s·N - N Σ floor(a_i) - (the r largest remainders of s T_i mod N). A size
    is sure to fail when that least EMD exceeds the threshold by MARGIN (the figure ``values`` computes errs by far
    less); an empty class (its shares all 0) has EMD ½. Every unfilled value leaves less than 1/s, so from
    s = m / threshold on the least EMD is below the threshold: the table stops there."""
    key = ("_t_closeness_sure_sizes", threshold)
    hit = domain.__dict__.get(key)
    if hit is not None and hit[0] is domain.table_counts:
        return hit[1]
    table_counts = np.asarray(domain.table_counts, dtype=np.int64)
    n_total, m = int(table_counts.sum()), len(table_counts)
    last = 0
    if n_total > 0 and m:
        last = min(int(m / threshold) + 1, n_total, SIZE_TABLE_CELLS // m, (1 << 62) // n_total)
    sure = np.zeros(last + 2, dtype=bool)  # the last entry: every size above L (not known)
    sure[0] = n_total > 0 and 0.5 > threshold + MARGIN  # (with no records in the table q is 0, and so its EMD)
    if last:
        s = np.arange(1, last + 1, dtype=np.int64)
        floors, remainders = np.divmod(s[:, None] * table_counts[None, :], n_total)
        left = s - floors.sum(axis=1)  # 0 <= left <= the values with a remainder (their fractions sum to left)
        remainders = -np.sort(-remainders, axis=1)
        top = np.zeros((last, m + 1), dtype=np.int64)
        np.cumsum(remainders, axis=1, out=top[:, 1:])
        gap = s * n_total - n_total * floors.sum(axis=1) - top[np.arange(last), left]
        sure[1:last + 1] = gap / (s * n_total) > threshold + MARGIN
    domain.__dict__[key] = (domain.table_counts, sure)
    return sure


@dataclass(frozen=True)
class TCloseness(SensitiveModel):
    """The EMD between every class's sensitive distribution and the table's is at most t."""

    t: float
    distance: str = "equal"
    column: str | None = None
    name: ClassVar[str] = "t-closeness"
    label: ClassVar[str] = "t-closeness"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("t", float, 0.2, "largest Earth Mover's Distance from the table's distribution", minimum=0.0,
                  maximum=1.0, label="t", above=0.0),
        Parameter("distance", str, "equal", "ground distance: equal, ordered (numeric values) or hierarchical "
                  "(the sensitive column's hierarchy)", choices=DISTANCES, label="Ground distance",
                  cli_flag="--t-distance"),
    )
    group: ClassVar[str | None] = "t"
    group_label: ClassVar[str] = "t-closeness"
    enabled_by: ClassVar[tuple[str, ...]] = ("t",)
    card_label: ClassVar[str] = "largest EMD"

    def domain(self, frame, hierarchies: dict | None = None, numeric: bool | None = None):
        """Hierarchical distance: the values placed in the column's own hierarchy."""
        assert self.column is not None
        hierarchy = None
        if self.distance == "hierarchical":
            hierarchy = (hierarchies or {}).get(self.column)
            if hierarchy is None:
                raise InputError(f"hierarchical t-closeness needs a hierarchy for the sensitive column {self.column!r}")
        return sensitive_domain(frame, self.column, hierarchy, numeric)

    def __post_init__(self) -> None:
        self._validate_parameters()

    def values(self, counts, domain):
        p, q = shares(counts), domain.table_distribution
        if self.distance == "equal":
            return emd_equal(p, q, overwrite=True)  # p is this call's own
        if self.distance == "ordered":
            if not domain.numeric:
                raise InputError(f"ordered distance needs a numeric sensitive column; {domain.column!r} is not")
            return emd_ordered(p, q)
        if domain.hierarchy is None:
            raise InputError(f"hierarchical distance needs a hierarchy for {domain.column!r}")
        return emd_hierarchical(p, q, domain.hierarchy, domain.leaf_of_value)

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        if self.distance == "equal" and counts.ndim == 2 and counts.shape[1] == domain.m:
            return equal_failing(counts, domain, self.t + EPS)
        return self.values(counts, domain) > self.t + EPS

    def failing_by_size(self, sizes, domain=None):
        """Equal distance: the classes too small for any distribution of their values to be within t of the
        table's (sure_failing_sizes; 1 to 6 and 10, 11 records for occupation on Adult at t = 0.2)."""
        if self.distance != "equal" or domain is None:
            return None
        sure = sure_failing_sizes(domain, self.t + EPS)
        return sure[np.minimum(np.asarray(sizes, dtype=np.int64), len(sure) - 1)]

    def card_value(self, values):
        return float(values.max())

    def summary(self) -> str:
        return f"{self.t:g}-closeness ({self.distance} distance){self._where()}"
