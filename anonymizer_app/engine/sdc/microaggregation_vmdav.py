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


def vmdav_groups(x: np.ndarray, k: int, gamma: float = 0.2,
                 progress: Callable[[float, str], None] = _no_progress) -> Grouping:
    n, p = x.shape
    if k < 1:
        raise InputError(f"the group size k must be at least 1, got {k}")
    if n < k:
        raise InputError(f"{n} records are fewer than the group size k = {k}")
    weights, missing_cost = variable_weights(x)
    columns = [np.ascontiguousarray(x[:, j]) for j in range(p)]
    missing_all = [np.isnan(c) if np.isnan(c).any() else None for c in columns]
    alive = np.ones(n, dtype=bool)
    group_of_row = np.full(n, -1, dtype=np.int64)
    members: list[np.ndarray] = []
    inf = np.float32(np.inf)

    def distances_to(row: int) -> np.ndarray:
        point = np.array([c[row] for c in columns])
        return _distances(columns, missing_all, point, weights, missing_cost)

    report_every = max(1, n // (200 * k))
    while alive.sum() >= k:
        rows = np.flatnonzero(alive)
        centroid = np.array([np.nanmean(c[rows]) if np.any(~np.isnan(c[rows])) else np.nan for c in columns])
        to_centroid = _distances(columns, missing_all, centroid, weights, missing_cost)
        to_centroid[~alive] = -inf
        e = int(np.argmax(to_centroid))
        from_e = distances_to(e)
        from_e[~alive] = inf
        chosen = np.argsort(from_e, kind="stable")[:k]
        in_group = np.zeros(n, dtype=bool)
        in_group[chosen] = True
        # d_in: each remaining record's distance to its nearest group member
        d_in = np.full(n, inf, dtype=np.float32)
        for member in chosen:
            np.minimum(d_in, distances_to(int(member)), out=d_in)
        while in_group.sum() < 2 * k - 1:
            outside = alive & ~in_group
            if not outside.any():
                break
            candidate_in = np.where(outside, d_in, inf)
            u = int(np.argmin(candidate_in))
            from_u = distances_to(u)
            others = outside.copy()
            others[u] = False
            d_out = float(from_u[others].min()) if others.any() else float("inf")
            if not float(candidate_in[u]) < gamma * d_out:
                break
            in_group[u] = True
            np.minimum(d_in, from_u, out=d_in)
        group = np.flatnonzero(in_group)
        group_of_row[group] = len(members)
        members.append(group)
        alive &= ~in_group
        if len(members) % report_every == 0:
            progress(1.0 - alive.sum() / n, "grouping records (V-MDAV)")
    left = np.flatnonzero(alive)
    if left.size:
        if not members:
            raise InputError(f"{n} records are fewer than the group size k = {k}")
        centroids = np.array([[np.nanmean(c[g]) if np.any(~np.isnan(c[g])) else np.nan for c in columns]
                              for g in members])
        extra: dict[int, list[int]] = {}
        for row in left:
            nearest = _distances([centroids[:, j] for j in range(p)],
                                 [np.isnan(centroids[:, j]) if np.isnan(centroids[:, j]).any() else None
                                  for j in range(p)],
                                 x[row], weights, missing_cost)
            extra.setdefault(int(np.argmin(nearest)), []).append(int(row))
        for g, rows_added in extra.items():
            members[g] = np.sort(np.concatenate([members[g], np.array(rows_added, dtype=np.int64)]))
            group_of_row[rows_added] = g
    return Grouping(group_of_row, members)
