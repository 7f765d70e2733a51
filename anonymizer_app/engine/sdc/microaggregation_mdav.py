"""MDAV microaggregation with a fixed group size k, grouping records exactly as sdcMicro's ``mdav()`` does.

sdcMicro (R/mdav.R, src/Mdav.cpp, OECD code) — the behaviour reproduced here, written anew:

* Distances are squared Euclidean with each variable weighted by 1/its population variance (no weight when the
  variance is 0). Each variable's term is computed in double precision, rounded to single precision, and the
  terms are added in single precision in column order: sdcMicro's distances are ``float``, and equal single
  precision distances are what decide its ties.
* A missing cell against a present one costs ``(max - min)^2 / variance`` of that variable; two missing cells
  cost 0. The centroid of a variable with no present value among the remaining records is itself missing.
* While at least 2k records remain: r = the record farthest from the centroid of the remaining records (the
  first one in row order on a tie); s = the record farthest from r (found among all remaining records, before
  r's group is taken out); r's group = the k records nearest to r; if at least 3k records remained at the start
  of the round, s's group = the k records nearest to s among those left. "The k nearest" follows sdcMicro's
  bucket sort: ascending distance, and on equal distance the *later* row first.
* The last fewer than 2k records form one group.
* A group's value is the plain mean of its members' present values, summed in the order the members were
  taken; the last group divides its sums by its number of records even when some of them are missing (sdcMicro
  does so, Mdav.cpp's final block); a missing cell stays missing in the output.

Differences from sdcMicro, on purpose: a cell holding exactly -999 is a value here (sdcMicro codes missing
values as -999 inside its C++ code, so a real -999 counts as missing there).

From KERNEL_FROM_ROWS rows, on tables without missing cells, a k-d tree search (microaggregation_mdav_tree,
numba, the optional ``fast`` extra) makes the same choices without passing over every remaining record each round
(1M rows in about half a CPU minute instead of half an hour). The loops below are the reference and the path for
missing cells: every distance pass is one vectorized numpy operation over the remaining records (the O(n^2/k) of the
algorithm itself); from KERNEL_FROM_ROWS rows a compiled loop (microaggregation_mdav_kernel) makes the same choices
with fewer passes per round. ``blocked_mdav_groups`` is a variant (MDAV inside consecutive blocks of a sort order;
not sdcMicro's grouping, and labelled so wherever it is used).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from ..errors import InputError


def _no_progress(fraction: float, phase: str) -> None:
    return None


@dataclass
class Grouping:
    """Records grouped for microaggregation: a group id per row (0, 1, ... in the order groups were formed) and,
    per group, its members in the order their values are summed."""

    group_of_row: np.ndarray  # int64, one per row
    members: list[np.ndarray]  # per group, the row positions in summing order
    last_divides_by_size: bool = False  # sdcMicro's last MDAV group divides sums by its size, missing or not
    rounds_summed: int = 0  # k-d tree search: rounds whose centroid was summed as the loops sum it (see its module)

    @property
    def sizes(self) -> np.ndarray:
        grouped = self.group_of_row[self.group_of_row >= 0]  # -1: a row in no group (its cell missing)
        return np.bincount(grouped, minlength=len(self.members))


def _sequential_sum(values: np.ndarray) -> float:
    """The sum added left to right, as a C loop adds it (numpy's sum adds pairwise, which rounds differently)."""
    if values.size == 0:
        return 0.0
    return float(np.add.accumulate(values)[-1])


def variable_weights(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per variable: 1/population variance (1 when the variance is 0) and the distance a missing cell costs."""
    p = x.shape[1]
    weights = np.ones(p)
    missing_cost = np.zeros(p, dtype=np.float32)
    for j in range(p):
        column = x[:, j]
        present = column[~np.isnan(column)]
        if present.size == 0:
            continue
        mean = _sequential_sum(present) / present.size
        squared = _sequential_sum(present * present) / present.size
        variance = squared - mean * mean  # as sdcMicro computes it: E[x^2] - E[x]^2
        if variance != 0.0:
            weights[j] = 1.0 / variance
        missing_cost[j] = np.float32((present.max() - present.min()) ** 2 * weights[j])
    return weights, missing_cost


def _distances(columns: list[np.ndarray], missing: list[np.ndarray | None], point: np.ndarray,
               weights: np.ndarray, missing_cost: np.ndarray) -> np.ndarray:
    """Single-precision weighted squared distances of every row to one point, term by term as sdcMicro adds them."""
    total = np.zeros(columns[0].shape[0], dtype=np.float32)
    for j, column in enumerate(columns):
        value = point[j]
        if np.isnan(value):
            # the point is missing here: a present cell costs the missing distance, a missing one nothing
            term = np.full(column.shape[0], missing_cost[j], dtype=np.float32)
            if missing[j] is not None:
                term[missing[j]] = 0.0
        else:
            diff = column - value
            term = (diff * diff * weights[j]).astype(np.float32)
            if missing[j] is not None:
                term[missing[j]] = missing_cost[j]
        total += term
    return total


def _nearest(distance: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k smallest distances in sdcMicro's order: ascending distance, later position first on a tie."""
    m = distance.shape[0]
    if m <= k:
        chosen = np.arange(m)
    else:
        threshold = np.partition(distance, k - 1)[k - 1]
        below = np.flatnonzero(distance < threshold)
        equal = np.flatnonzero(distance == threshold)
        chosen = np.concatenate([below, equal[len(equal) - (k - len(below)):]])
    return chosen[np.lexsort((-chosen, distance[chosen]))]


# from this many rows the compiled loop (microaggregation_mdav_kernel) repays numba's import and code load
KERNEL_FROM_ROWS = 3000


def _kernel() -> Callable[..., bool] | None:
    """The compiled loop, or None where numba (the optional ``fast`` extra) cannot be imported or set up."""
    try:
        from .microaggregation_mdav_kernel import mdav_loop
    except Exception:  # numba missing, or no writable place for its cache: the numpy loop does the same
        return None
    return mdav_loop


def _tree_module() -> ModuleType | None:
    """The k-d tree search (microaggregation_mdav_tree), or None where numba cannot be imported or set up."""
    try:
        from . import microaggregation_mdav_tree
    except Exception:  # numba missing, or no writable place for its cache: the loops group identically
        return None
    return microaggregation_mdav_tree


def tree_search_applies(x: np.ndarray, weights: np.ndarray) -> bool:
    """Whether the k-d tree search's bounds hold for this table: no missing cell, finite values, positive finite
    weights, and distances far from single precision's overflow (the bounds assume finite positive terms)."""
    if x.shape[0] == 0 or not np.isfinite(x).all() or not (np.isfinite(weights).all() and (weights > 0).all()):
        return False
    with np.errstate(over="ignore"):
        widest = float(((x.max(axis=0) - x.min(axis=0)) ** 2 * weights).sum())
    return bool(np.isfinite(widest) and widest < 1e36)


def _tree_groups(x: np.ndarray, k: int, weights: np.ndarray, module: ModuleType,
                 progress: Callable[[float, str], None], candidates: int | None = None) -> Grouping:
    n, p = x.shape
    values = np.ascontiguousarray(x, dtype=np.float64)
    tree = module.build_tree(values, weights)
    alive = np.ones(n, dtype=np.bool_)
    sums = np.zeros((p, 4))
    for j in range(p):
        column = values[:, j].tolist()
        sums[j, 0] = math.fsum(column)  # the exact sum, correctly rounded; the rest of it below
        sums[j, 1] = math.fsum(column + [-sums[j, 0]])
        sums[j, 2] = sums[j, 3] = math.fsum(np.abs(values[:, j]).tolist())
    state = np.array([n, 0, 0, 0, 0, n], dtype=np.int64)
    seq = np.arange(n)
    group_of_row = np.full(n, -1, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    budget = max(1, n // (200 * k))  # about 1 % of the rounds per call: progress between calls
    buffer = module.CANDIDATES if candidates is None else candidates
    while not module.mdav_tree_loop(values, weights, k, *tree, alive, sums, state, seq, group_of_row, order,
                                    budget, buffer):
        progress(1.0 - state[0] / n, "grouping records (MDAV, k-d tree)")
    full = (int(state[1]) - 1) * k if n >= 2 * k else 0
    in_order = [order[g * k:(g + 1) * k] for g in range(full // k)] + [order[full:]]
    progress(1.0, "grouping records (MDAV, k-d tree)")
    return Grouping(group_of_row, in_order, last_divides_by_size=True, rounds_summed=int(state[4]))


def mdav_groups(x: np.ndarray, k: int, progress: Callable[[float, str], None] = _no_progress,
                compiled: bool | None = None, search: str = "auto") -> Grouping:
    """Group the rows of ``x`` (n × p, NaN = missing) as sdcMicro's MDAV does; see the module's docstring.
    ``search``: "tree" = the k-d tree search (microaggregation_mdav_tree; tables without missing cells, numba),
    "scan" = the loops that pass over every remaining row, "auto" = the tree from KERNEL_FROM_ROWS rows where it
    applies, else the loops; all make the same groups. ``compiled`` (for the loops): None = the compiled loop from
    KERNEL_FROM_ROWS rows when numba is there; True/False to choose one of the loops (then "auto" does not take the
    tree; the tests compare all of them)."""
    n, p = x.shape
    if k < 1:
        raise InputError(f"the group size k must be at least 1, got {k}")
    if search not in ("auto", "tree", "scan"):
        raise InputError(f"unknown MDAV search {search!r}: 'auto', 'tree' or 'scan'")
    if n == 0:
        return Grouping(np.zeros(0, dtype=np.int64), [])
    weights, missing_cost = variable_weights(x)
    if search == "tree" or (search == "auto" and compiled is None and n >= KERNEL_FROM_ROWS):
        module = _tree_module()
        applies = tree_search_applies(x, weights)
        if module is not None and applies:
            return _tree_groups(x, k, weights, module, progress)
        if search == "tree":
            why = "numba (the optional 'fast' extra)" if module is None else \
                "a table without missing or infinite cells and with positive variances"
            raise InputError(f"the k-d tree MDAV search needs {why}")
    loop = _kernel() if (compiled or (compiled is None and n >= KERNEL_FROM_ROWS)) else None
    if compiled and loop is None:
        raise InputError("the compiled MDAV loop needs numba (the optional 'fast' extra)")
    if loop is not None:
        group_of_row = np.full(n, -1, dtype=np.int64)
        order = np.empty(n, dtype=np.int64)
        transposed = np.array(x.T, dtype=np.float64, order="C", copy=True)  # compacted in place: never x itself
        positions = np.arange(n)
        state = np.array([n, 0, 0], dtype=np.int64)
        budget = max(1, n // (200 * k))  # about 1 % of the rounds per call: progress between calls
        while not loop(transposed, positions, state, weights, missing_cost, k, group_of_row, order, budget):
            progress(1.0 - state[0] / n, "grouping records (MDAV, compiled)")
        full = (int(state[1]) - 1) * k if n >= 2 * k else 0
        in_order = [order[g * k:(g + 1) * k] for g in range(full // k)] + [order[full:]]
        progress(1.0, "grouping records (MDAV, compiled)")
        return Grouping(group_of_row, in_order, last_divides_by_size=True)
    alive = np.arange(n)  # original row positions still to group, ascending (sdcMicro's linked list order)
    columns = [np.ascontiguousarray(x[:, j]) for j in range(p)]
    has_missing = [bool(np.isnan(c).any()) for c in columns]
    group_of_row = np.full(n, -1, dtype=np.int64)
    members: list[np.ndarray] = []
    # the centroid's sums: missing cells add 0, which leaves a left-to-right sum unchanged
    zeroed = [np.where(np.isnan(c), 0.0, c) if h else c for c, h in zip(columns, has_missing, strict=True)]
    report_every = max(1, n // (200 * k))
    rounds = 0
    missing = [np.isnan(c) if h else None for c, h in zip(columns, has_missing, strict=True)]
    while alive.shape[0] >= 2 * k:
        m = alive.shape[0]
        centroid = np.empty(p)
        for j in range(p):
            present = m - (int(missing[j].sum()) if missing[j] is not None else 0)  # type: ignore[union-attr]
            centroid[j] = _sequential_sum(zeroed[j]) / present if present else np.nan
        r = int(np.argmax(_distances(columns, missing, centroid, weights, missing_cost)))
        point = np.array([c[r] for c in columns])
        two_groups = m >= 3 * k
        for round_group in range(2 if two_groups else 1):
            distance = _distances(columns, missing, point, weights, missing_cost)
            if round_group == 0:
                s = int(np.argmax(distance))
                next_point = np.array([c[s] for c in columns])
            taken = _nearest(distance, k)
            group = alive[taken]
            group_of_row[group] = len(members)
            members.append(group)
            keep = np.ones(alive.shape[0], dtype=bool)
            keep[taken] = False
            alive = alive[keep]
            columns = [c[keep] for c in columns]
            zeroed = [z[keep] for z in zeroed] if any(has_missing) else columns
            missing = [mm[keep] if mm is not None else None for mm in missing]
            point = next_point
        rounds += 1
        if rounds % report_every == 0:
            progress(1.0 - alive.shape[0] / n, "grouping records (MDAV)")
    last_group = alive.shape[0] > 0
    if last_group:
        group_of_row[alive] = len(members)
        members.append(alive)
    return Grouping(group_of_row, members, last_divides_by_size=last_group and len(members) > 0)


def group_means(x: np.ndarray, grouping: Grouping) -> np.ndarray:
    """Each row's group mean per variable (NaN where the row's own cell is missing), sums added in members' order.

    Groups of equal size are summed together, one vectorized addition per member position."""
    n, p = x.shape
    result = np.full((n, p), np.nan)
    zeroed = np.where(np.isnan(x), 0.0, x)
    present = (~np.isnan(x)).astype(np.int64)
    last = len(grouping.members) - 1
    by_size: dict[int, list[int]] = {}
    for g, rows in enumerate(grouping.members):
        by_size.setdefault(rows.shape[0], []).append(g)
    for size, gids in by_size.items():
        rows = np.stack([grouping.members[g] for g in gids])  # groups × size
        sums = zeroed[rows[:, 0]].copy()
        counts = present[rows[:, 0]].copy()
        for position in range(1, size):
            sums += zeroed[rows[:, position]]
            counts += present[rows[:, position]]
        with np.errstate(invalid="ignore", divide="ignore"):
            means = sums / counts
            if grouping.last_divides_by_size and last in gids:
                where = gids.index(last)
                means[where] = np.where(counts[where] > 0, sums[where] / size, np.nan)
        means[counts == 0] = np.nan
        result[rows.reshape(-1)] = np.repeat(means, size, axis=0)
    result[np.isnan(x)] = np.nan
    return result


def blocked_mdav_groups(x: np.ndarray, k: int, block: int = 5000,
                        progress: Callable[[float, str], None] = _no_progress) -> Grouping:
    """A faster MDAV for very large tables — NOT sdcMicro's grouping: the rows are sorted by the sum of their
    standardized values (missing counted as the mean), cut into consecutive blocks of ``block`` rows (the
    remainder joins the last block), and exact MDAV groups each block on its own. Work is O(n·block/k) instead
    of O(n²/k); every group still has at least k records (each block has at least 2k rows, or is one group)."""
    n, p = x.shape
    if block < 2 * k:
        raise InputError(f"the block size must be at least 2k = {2 * k}, got {block}")
    means = np.nanmean(x, axis=0) if n else np.zeros(p)
    sds = np.nanstd(x, axis=0) if n else np.ones(p)
    sds[~(sds > 0)] = 1.0
    score = np.where(np.isnan(x), 0.0, (x - means) / sds).sum(axis=1)
    order = np.argsort(score, kind="stable")
    starts = list(range(0, n, block))
    if len(starts) > 1 and n - starts[-1] < block:
        starts.pop()  # the remainder joins the last full block
    group_of_row = np.full(n, -1, dtype=np.int64)
    members: list[np.ndarray] = []
    for b, start in enumerate(starts):
        end = starts[b + 1] if b + 1 < len(starts) else n
        rows = np.sort(order[start:end])
        inner = mdav_groups(x[rows], k)
        for group in inner.members:
            group_of_row[rows[group]] = len(members)
            members.append(rows[group])
        progress(end / n, "grouping records (MDAV within sorted blocks)")
    return Grouping(group_of_row, members)
