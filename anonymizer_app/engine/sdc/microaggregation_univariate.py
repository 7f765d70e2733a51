"""Univariate microaggregation: one variable on its own, grouped as sdcMicro's ``mafast`` (and ``onedims``) do.

sdcMicro (R/mafast.R, used by ``microaggregation`` whenever a single variable is chosen; R/microaggregation.R
``micro_onedims`` for several variables each on its own) sorts the values (ties keep row order), cuts the
sorted list into floor(n/k) consecutive groups of k and joins the n mod k left-over values to the last group,
so the last group has k..2k-1 values. Each value is replaced by its group's mean or median.

Missing cells stay missing and are left out of the grouping (sdcMicro sorts them last and their group's mean
becomes missing for every member; here the present values keep their information).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .microaggregation_mdav import Grouping


def univariate_groups(values: np.ndarray, k: int) -> Grouping:
    """Group the present values of one variable: sorted, consecutive groups of k, the remainder in the last."""
    n = values.shape[0]
    present = np.flatnonzero(~np.isnan(values))
    group_of_row = np.full(n, -1, dtype=np.int64)
    if present.size == 0:
        return Grouping(group_of_row, [])
    if present.size < k:
        raise InputError(f"only {present.size} values are present, fewer than the group size k = {k}")
    order = present[np.argsort(values[present], kind="stable")]
    groups = max(1, present.size // k)
    position_group = np.minimum(np.arange(present.size) // k, groups - 1)
    group_of_row[order] = position_group
    bounds = np.searchsorted(position_group, np.arange(groups + 1))
    members = [order[bounds[g]:bounds[g + 1]] for g in range(groups)]
    return Grouping(group_of_row, members)


def univariate_values(values: np.ndarray, grouping: Grouping, measure: str) -> np.ndarray:
    """Each present value replaced by its group's mean or median; the members of a group are in sorted order."""
    result = np.full(values.shape[0], np.nan)
    if not grouping.members:
        return result
    rows = np.concatenate(grouping.members)
    sizes = np.array([m.shape[0] for m in grouping.members])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    ordered = values[rows]
    if measure == "mean":
        totals = np.add.reduceat(ordered, starts)
        per_group = totals / sizes
    else:
        low = ordered[starts + (sizes - 1) // 2]
        high = ordered[starts + sizes // 2]
        per_group = np.where(sizes % 2 == 1, low, (low + high) / 2.0)
    result[rows] = np.repeat(per_group, sizes)
    return result
