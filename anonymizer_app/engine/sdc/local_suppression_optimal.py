"""Optimal local suppression for small tables: the fewest suppressed key cells that give every record fk >= k
(a missing cell matching any value), as an integer program solved by scipy.optimize.milp (HiGHS).

Variables: s[i, c] = 1 when record i's key c is suppressed (observed cells only), y[i, j] = 1 when records i and
j (i < j) are counted together. Two records count together only if every key where both are observed and differ
is suppressed in one of them (y[i, j] <= s[i, c] + s[j, c]); every record needs k - 1 others (sum_j y[i, j] >=
k - 1). The objective is the number of suppressed cells, plus a tie-break below one cell in total that prefers
the less important variables (the importance order of the heuristic).

The program has one variable per pair of records, so it is refused above ``MAX_RECORDS`` records: use the
heuristic there."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix

from ..errors import InputError
from .local_suppression_fk import MISSING

MAX_RECORDS = 60
TIME_LIMIT_SECONDS = 60.0


def optimal_codes(codes: np.ndarray, k: int, importance: Sequence[int]) -> np.ndarray:
    """The code matrix (-1 missing) with the fewest cells set to missing so that every fk >= k."""
    n, m = codes.shape
    if n > MAX_RECORDS:
        raise InputError(f"the optimal local suppression solves an integer program with one variable per pair of "
                         f"records: at most {MAX_RECORDS} records, this table has {n}; choose the heuristic strategy")
    if n < k:
        raise InputError(f"local suppression: k = {k} is larger than the {n} records")
    if k <= 1 or n == 0:
        return codes.copy()
    observed = codes != MISSING
    cells = np.argwhere(observed)  # (i, c) of every observed cell, one variable each
    cell_var = -np.ones((n, m), dtype=np.int64)
    cell_var[cells[:, 0], cells[:, 1]] = np.arange(len(cells))
    first, second = np.triu_indices(n, 1)
    pair_var = len(cells) + np.arange(len(first))
    size = len(cells) + len(first)

    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    n_constraints = 0
    for c in range(m):  # y[i, j] - s[i, c] - s[j, c] <= 0 where i and j are observed in c and differ
        conflict = observed[first, c] & observed[second, c] & (codes[first, c] != codes[second, c])
        at = np.flatnonzero(conflict)
        ids = n_constraints + np.arange(len(at))
        rows += [ids, ids, ids]
        cols += [pair_var[at], cell_var[first[at], c], cell_var[second[at], c]]
        vals += [np.ones(len(at)), -np.ones(len(at)), -np.ones(len(at))]
        n_constraints += len(at)
    conflicts = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                           shape=(n_constraints, size))
    # sum over j of y[i, j] >= k - 1 for every record i
    record = np.concatenate([first, second])
    together = coo_matrix((np.ones(2 * len(first)), (record, np.concatenate([pair_var, pair_var]))), shape=(n, size))

    ranks = np.asarray(importance, dtype=float)
    tie_break = (m - ranks) / (m * (len(cells) + 1))  # the least important variable (largest rank) costs least
    cost = np.zeros(size)
    cost[:len(cells)] = 1.0 + tie_break[cells[:, 1]]
    constraints = [LinearConstraint(together, lb=k - 1, ub=np.inf)]
    if n_constraints:
        constraints.append(LinearConstraint(conflicts, lb=-np.inf, ub=0))
    solved = milp(cost, constraints=constraints, integrality=np.ones(size), bounds=Bounds(0, 1),
                  options={"time_limit": TIME_LIMIT_SECONDS, "mip_rel_gap": 0.0})
    if solved.status != 0 or solved.x is None:
        raise InputError(f"the optimal local suppression found no proven optimum ({solved.message}); choose the "
                         f"heuristic strategy")
    chosen = np.round(solved.x[:len(cells)]).astype(bool)
    result = codes.copy()
    result[cells[chosen, 0], cells[chosen, 1]] = MISSING
    return result
