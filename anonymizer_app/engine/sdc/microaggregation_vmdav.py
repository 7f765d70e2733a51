"""V-MDAV: microaggregation with variable group sizes k..2k−1 (Solanas & Martínez-Ballesté 2006).

sdcMicro has no variable-size method; this follows the paper. The distance is MDAV's (weighted by 1/variance,
missing cells as sdcMicro's MDAV treats them; microaggregation_mdav._distances). While at least k records remain:

1. e = the remaining record farthest from the centroid of the remaining records (the first one on a tie);
2. a group is e and its k−1 nearest remaining records (nearest first, the earlier row first on a tie);
3. the group grows while it has fewer than 2k−1 records: u = the remaining record nearest to the group
   (d_in = its distance to the nearest member; the earlier row on a tie), d_out = u's distance to the
   nearest other remaining record outside the group; u joins when d_in < γ·d_out, otherwise the group closes.

The fewer than k records left at the end each join the group whose centroid is nearest to them (their
distance to the group's mean vector), so a group can end above 2k−1. γ (gamma) trades within-group
homogeneity for size: the paper recommends 0.2 for scattered data and 1.1 for clustered data.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import InputError
from .microaggregation_mdav import Grouping, _distances, _no_progress, variable_weights


def _nearest_earlier_first(distance: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k smallest distances, ascending, the earlier position first on a tie."""
    m = distance.shape[0]
    if m <= k:
        chosen = np.arange(m)
    else:
        threshold = np.partition(distance, k - 1)[k - 1]
        below = np.flatnonzero(distance < threshold)
        equal = np.flatnonzero(distance == threshold)
        chosen = np.concatenate([below, equal[:k - len(below)]])
    return chosen[np.lexsort((chosen, distance[chosen]))]


def vmdav_groups(x: np.ndarray, k: int, gamma: float = 0.2,
                 progress: Callable[[float, str], None] = _no_progress) -> Grouping:
    n, p = x.shape
    if k < 1:
        raise InputError(f"the group size k must be at least 1, got {k}")
    if n < k:
        raise InputError(f"{n} records are fewer than the group size k = {k}")
    weights, missing_cost = variable_weights(x)
    # the remaining records only: their row positions (ascending) and columns, compacted after every group
    rows = np.arange(n)
    columns = [np.ascontiguousarray(x[:, j]) for j in range(p)]
    has_missing = [bool(np.isnan(c).any()) for c in columns]
    missing = [np.isnan(c) if h else None for c, h in zip(columns, has_missing, strict=True)]
    group_of_row = np.full(n, -1, dtype=np.int64)
    members: list[np.ndarray] = []
    inf = np.float32(np.inf)

    def distances_to(a: int) -> np.ndarray:
        point = np.array([c[a] for c in columns])
        return _distances(columns, missing, point, weights, missing_cost)

    report_every = max(1, n // (200 * k))
    while rows.shape[0] >= k:
        m = rows.shape[0]
        centroid = np.array([np.nanmean(c) if not np.isnan(c).all() else np.nan for c in columns])
        e = int(np.argmax(_distances(columns, missing, centroid, weights, missing_cost)))
        chosen = _nearest_earlier_first(distances_to(e), k)
        in_group = np.zeros(m, dtype=bool)
        in_group[chosen] = True
        size = k
        # d_in: each remaining record's distance to its nearest group member
        d_in = np.full(m, inf, dtype=np.float32)
        for member in chosen:
            np.minimum(d_in, distances_to(int(member)), out=d_in)
        while size < 2 * k - 1 and size < m:
            candidate_in = np.where(in_group, inf, d_in)
            u = int(np.argmin(candidate_in))
            from_u = distances_to(u)
            from_u[in_group] = inf
            from_u[u] = inf
            d_out = float(from_u.min()) if size + 1 < m else float("inf")
            if not float(candidate_in[u]) < gamma * d_out:
                break
            in_group[u] = True
            size += 1
            np.minimum(d_in, distances_to(u), out=d_in)
        group = rows[in_group]
        group_of_row[group] = len(members)
        members.append(group)
        keep = ~in_group
        rows = rows[keep]
        columns = [c[keep] for c in columns]
        missing = [mm[keep] if mm is not None else None for mm in missing]
        if len(members) % report_every == 0:
            progress(1.0 - rows.shape[0] / n, "grouping records (V-MDAV)")
    if rows.size:
        if not members:
            raise InputError(f"{n} records are fewer than the group size k = {k}")
        centroids = np.array([[np.nanmean(x[g, j]) if not np.isnan(x[g, j]).all() else np.nan for j in range(p)]
                              for g in members])
        centroid_columns = [centroids[:, j] for j in range(p)]
        centroid_missing = [np.isnan(c) if np.isnan(c).any() else None for c in centroid_columns]
        extra: dict[int, list[int]] = {}
        for row in rows:
            nearest = _distances(centroid_columns, centroid_missing, x[row], weights, missing_cost)
            extra.setdefault(int(np.argmin(nearest)), []).append(int(row))
        for g, rows_added in extra.items():
            members[g] = np.sort(np.concatenate([members[g], np.array(rows_added, dtype=np.int64)]))
            group_of_row[rows_added] = g
    return Grouping(group_of_row, members)
