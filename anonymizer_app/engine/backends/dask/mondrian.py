"""Mondrian on a Dask cluster: the top-level cuts from per-partition histograms counted on the workers
(or, for models on sensitive values, on the merged frequency set), each region finished on a worker by
the registered Mondrian code (``algorithms.mondrian``), the result identical to a single process's.

Mondrian splits a region by looking at that region alone, so the final partitions do not depend on the
order in which regions are split: the driver makes the first cuts exactly as ``mondrian.partition`` does
(the same ``Space`` widths, the same ``cut`` medians and allowable test on the merged counts) until
there are enough regions to keep every worker busy, and each region then goes to a worker, which runs
``mondrian.partition`` on it. The pieces are put back together as ``mondrian.mondrian`` does: each QI
tuple's records form part of one partition (the strict variant), a partition that breaks a model is
suppressed, and every partition's cells are its numeric ranges and lowest common ancestors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...algorithms import mondrian as mondrian_code
from ...algorithms.base import CellRecoding, Problem
from ...errors import InputError, UnsatisfiableError
from ...model.table import FrequencySet, Role
from ...run.weighted import FrequencyTable, WeightedDomain
from ...search.attribute_weights import problem_factors
from ...search.recoding import QISpace, cells_from_groups
from . import partitions

REGIONS_PER_WORKER = 4


@dataclass
class Shared:
    """What every worker needs to finish a region: the merged frequency set as weighted rows."""

    tuple_codes: np.ndarray  # m x q leaf codes of the distinct QI tuples
    inverse: np.ndarray  # weighted row -> tuple
    weights: np.ndarray
    sensitive: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, bool]]  # column -> values, codes, table counts
    hierarchies: list
    qi: list[str]
    types: dict[str, str]
    models: list
    suppression_limit: float
    budget: int
    options: dict
    na_values: tuple[str, ...] = ()


def region_problem(shared: Shared, idx: np.ndarray) -> Problem:
    """The Problem of the region of tuples ``idx``: its tuples and their weighted rows only, the numeric
    spans and the sensitive distributions of the whole table (as a single-process run sees them)."""
    local = np.full(len(shared.tuple_codes), -1, dtype=np.int64)
    local[idx] = np.arange(len(idx))
    rows = np.flatnonzero(local[shared.inverse] >= 0)
    inverse = local[shared.inverse[rows]]
    weights = shared.weights[rows]
    counts = np.bincount(inverse, weights=weights, minlength=len(idx)).astype(np.int64)
    freq = FrequencySet(shared.tuple_codes[idx], counts, inverse)
    columns = list(shared.qi) + [c for c in shared.sensitive if c not in shared.qi]
    table = FrequencyTable(pd.DataFrame({c: pd.Series(dtype=object) for c in columns}),
                           {c: (Role.QUASI_IDENTIFYING if c in shared.qi else Role.SENSITIVE) for c in columns},
                           {c: shared.types[c] for c in columns}, na_values=shared.na_values, weights=weights)
    domains = {c: WeightedDomain(c, values, codes[rows], table_counts, numeric, weights=weights)
               for c, (values, codes, table_counts, numeric) in shared.sensitive.items()}
    # codes: every tuple of the table, so that QISpace's numeric spans are the whole table's
    return Problem(table, shared.hierarchies, shared.tuple_codes, freq, shared.models, shared.suppression_limit,
                   shared.budget, dict(shared.options), None, domains)


def finish_region(shared: Shared, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """On a worker: mondrian.partition on the region; (tuple, partition within the region, cuts per QI)."""
    tup, part, _, cuts, _ = mondrian_code.partition(region_problem(shared, idx))
    return idx[tup], part, cuts


def top_cuts(problem: Problem, regions: int) -> tuple[list, list, np.ndarray]:
    """mondrian.partition's loop on the whole frequency set until ``regions`` regions wait to be split:
    (final partitions as tuple-index arrays, regions left, cuts made per QI)."""
    freq = problem.freq
    space = QISpace(problem.hierarchies, [problem.table.is_numeric(c) for c in problem.table.qi], problem.codes)
    sp = mondrian_code.Space(space, freq.codes)
    factors = problem_factors(problem)  # attribute weights: the same cut order as mondrian.partition
    allowable = mondrian_code.default_allowable(problem)
    k_min = max((getattr(m, "k", 1) for m in problem.models), default=1)
    cuts = np.zeros(space.q, dtype=np.int64)
    todo = [(np.arange(len(freq.counts)), freq.counts.astype(np.int64))]
    final: list[np.ndarray] = []
    while todo and len(todo) < regions:
        todo.sort(key=lambda region: -int(region[1].sum()))  # the largest region next
        idx, w = todo.pop(0)
        split = None
        if int(w.sum()) >= 2 * k_min and len(idx) > 1:
            width, lca = sp.widths(idx)
            for j in mondrian_code.cut_order(width, factors):
                split = mondrian_code.cut(sp, int(j), idx, w, lca, False, allowable)
                if split is not None:
                    cuts[j] += 1
                    break
        if split is None:
            final.append(idx)
        else:
            todo.extend(split)
    return final, [idx for idx, _ in todo], cuts


Box = list  # one boolean mask over the leaves per QI: the records whose every QI leaf is in its mask
Histograms = Callable[[list], list]  # boxes -> per QI a len(boxes) x leaves matrix of record counts


def _box_cut(space: QISpace, j: int, lca: int, box: Box, hist: np.ndarray, rank: dict, allowable) -> tuple | None:
    """mondrian.cut (strict variant) along QI ``j`` on the box's histogram of QI ``j``'s leaves alone:
    the same median or balanced children, so the same halves; None when no allowable cut exists."""
    present = np.flatnonzero(hist > 0)
    w = hist[present]
    if j in rank:  # numeric: the cut after the distinct value whose cumulated weight is closest to half
        r = rank[j][present]
        ranks, inv = np.unique(r, return_inverse=True)
        if len(ranks) < 2:
            return None
        cum = np.cumsum(np.bincount(inv.reshape(-1), weights=w)).astype(np.int64)
        best = int(np.argmin(np.abs(cum[:-1] * 2 - int(cum[-1]))))
        left = r <= ranks[best]
    else:  # categorical: the children one level below the LCA, balanced as mondrian.balanced_subset does
        child = space.anc[j][present, lca - 1].astype(np.int64)
        codes, inv = np.unique(child, return_inverse=True)
        if len(codes) < 2:
            return None
        weights = np.bincount(inv.reshape(-1), weights=w).astype(np.int64)
        left = mondrian_code.balanced_subset(weights)[inv.reshape(-1)]
    lw, rw = w[left].astype(np.int64), w[~left].astype(np.int64)
    if not allowable(None, lw, None, rw):
        return None
    halves = []
    for side in (left, ~left):
        mask = np.zeros_like(box[j])
        mask[present[side]] = True
        halves.append([mask if i == j else m for i, m in enumerate(box)])
    return halves[0], halves[1]


def top_cuts_by_histograms(problem: Problem, regions: int, histograms: Histograms) -> tuple[list, list, np.ndarray]:
    """top_cuts from per-QI leaf histograms of boxes alone (``histograms``, computed where the records are):
    round by round every waiting box is measured, the largest split first, until ``regions`` boxes wait.

    A strict Mondrian cut along QI j sends each record left or right by its leaf of QI j alone, so every
    region of the cut tree is a box, and its widths, its LCAs and the median or balanced cut along any QI
    follow from the region's marginal leaf counts: the cuts equal mondrian.partition's. Only for models
    without sensitive values (the allowable test then needs the two halves' sizes alone)."""
    hierarchies = problem.hierarchies
    numeric = [problem.table.is_numeric(c) for c in problem.table.qi]
    whole: Box = [np.ones(len(h.leaves), dtype=bool) for h in hierarchies]
    first = histograms([whole])
    space = QISpace(hierarchies, numeric, present=[m[0] > 0 for m in first])  # spans over the leaves that occur
    vals = {j: space.sortable_values(j) for j in range(space.q) if numeric[j]}
    rank = {j: np.unique(v, return_inverse=True)[1].reshape(-1) for j, v in vals.items()}
    share = {j: [h.leaf_counts(lv) / len(h.leaves) for lv in range(h.level_count)]
             for j, h in enumerate(hierarchies) if not numeric[j]}
    span = {j: space.span[j] or 1.0 for j in vals}
    factors = problem_factors(problem)
    allowable = mondrian_code.default_allowable(problem)
    k_min = max((getattr(m, "k", 1) for m in problem.models), default=1)
    cuts = np.zeros(space.q, dtype=np.int64)
    final: list[Box] = []
    todo: list[Box] = [whole]
    measured = first
    while todo and len(todo) < regions:
        hists = [[measured[j][b] for j in range(space.q)] for b in range(len(todo))]
        order = sorted(range(len(todo)), key=lambda b: -int(hists[b][0].sum()))  # the largest first
        waiting: list[Box] = []
        for pos, b in enumerate(order):
            box, hist = todo[b], hists[b]
            if len(waiting) + (len(order) - pos) >= regions:  # enough: the rest wait for the workers
                waiting.extend(todo[c] for c in order[pos:])
                break
            split = None
            distinct = any(int((h > 0).sum()) > 1 for h in hist)
            if int(hist[0].sum()) >= 2 * k_min and distinct:
                width = np.zeros(space.q)
                lca = np.zeros(space.q, dtype=np.int64)
                for j in range(space.q):
                    present = np.flatnonzero(hist[j] > 0)
                    if j in vals:
                        v = vals[j][present]
                        width[j] = (v.max() - v.min()) / span[j]
                    else:
                        a = space.anc[j][present]
                        lo, hi = a.min(0), a.max(0)
                        lv = int((lo != hi).sum())
                        lca[j] = lv
                        if lv:
                            width[j] = share[j][lv][int(lo[lv])]
                for j in mondrian_code.cut_order(width, factors):
                    split = _box_cut(space, int(j), int(lca[j]), box, hist[j], rank, allowable)
                    if split is not None:
                        cuts[j] += 1
                        break
            if split is None:
                final.append(box)
            else:
                waiting.extend(split)
        todo = waiting
        if todo and len(todo) < regions:
            measured = histograms(todo)
    return final, todo, cuts


def box_tuples(codes: np.ndarray, box: Box) -> np.ndarray:
    """The distinct QI tuples (rows of ``codes``) inside the box."""
    inside = np.ones(len(codes), dtype=bool)
    for j, mask in enumerate(box):
        inside &= mask[codes[:, j]]
    return np.flatnonzero(inside)


def keeps_encodings(algorithm: str, models: list) -> bool:
    """Whether the frequency-set pass keeps each partition's encoded tuples on its worker: Mondrian with models on
    class sizes alone cuts from box histograms (top_cuts_by_histograms) counted on them."""
    return algorithm == "mondrian" and not any(getattr(m, "needs_sensitive", False) for m in models)


def kept_histograms(client, kept: list, boxes: list, sizes: list[int]) -> list[np.ndarray]:
    """Per QI, the records per (box, leaf) counted on the workers on each partition's kept encoded tuples
    (partitions.tuple_histograms) and summed here: exact integer sums, the merged counts are the whole table's."""
    from distributed import as_completed

    regions = [list(box) for box in boxes]
    futures = [client.submit(partitions.tuple_histograms, f, regions, sizes, pure=False) for f in kept]
    total: list[np.ndarray] | None = None
    try:
        for future in as_completed(futures):
            hists = future.result()
            total = hists if total is None else [a + b for a, b in zip(total, hists)]
            future.release()
    except BaseException:
        client.cancel(futures)
        raise
    assert total is not None
    return total


@dataclass
class OnCluster:
    """What Mondrian on a cluster needs of its run besides the problem: the weighted rows' records, the columns'
    types and missing markers (for the workers' regions), the client, the box histograms and a way to let the
    workers drop the partitions' kept encodings."""

    weights: np.ndarray
    types: dict[str, str]
    na_values: tuple[str, ...]
    client: Any  # a distributed.Client (no dask imported here)
    histograms: Histograms
    release: Callable[[], None]


def mondrian_on_cluster(problem: Problem, run: OnCluster) -> CellRecoding:
    """The CellRecoding of Mondrian over the weighted rows: the top cuts here, each region left finished by
    mondrian.partition on a worker, the pieces put together as mondrian.mondrian does."""
    if problem.options.get("variant", "strict") != "strict":
        raise InputError("on a Dask cluster Mondrian runs its strict variant (the relaxed one splits the records "
                         "of one QI tuple between partitions)")
    workers = max(1, len(run.client.scheduler_info().get("workers", {})))
    final, regions, cuts = _top_regions(problem, REGIONS_PER_WORKER * workers, run)
    part_of_tuple = np.full(len(problem.freq.counts), -1, dtype=np.int64)
    for n_parts, idx in enumerate(final):
        part_of_tuple[idx] = n_parts
    n_parts = len(final)
    if regions:
        n_parts = _finish_regions(problem, run, regions, part_of_tuple, n_parts, cuts)
    if (part_of_tuple < 0).any():
        raise InputError("Mondrian left a QI tuple outside every partition")
    return _recoding(problem, run.weights, part_of_tuple, n_parts, cuts)


def _top_regions(problem: Problem, regions: int, run: OnCluster) -> tuple[list, list, np.ndarray]:
    """The top cuts: (final partitions, regions left for the workers, cuts per QI) as tuple-index arrays."""
    if problem.needs_classes:
        # the allowable test weighs each half's sensitive values, which a box's marginals do not give
        problem.report(0.0, "Mondrian: top-level cuts on the merged frequency set")
        run.release()
        return top_cuts(problem, regions)
    problem.report(0.0, "Mondrian: top-level cuts from the partitions' histograms")
    try:
        boxes, waiting, cuts = top_cuts_by_histograms(problem, regions, run.histograms)
    finally:  # the regions are finished from the frequency set: the workers' encoded partitions can go
        run.release()
    codes = problem.freq.codes
    return [box_tuples(codes, box) for box in boxes], [box_tuples(codes, box) for box in waiting], cuts


def _finish_regions(problem: Problem, run: OnCluster, regions: list, part_of_tuple: np.ndarray, n_parts: int,
                    cuts: np.ndarray) -> int:
    """Each region finished on a worker (finish_region); its partitions numbered after the ``n_parts`` made, its
    cuts added. Returns the partitions made."""
    freq = problem.freq
    shared = Shared(freq.codes, freq.inverse, run.weights,
                    {c: (d.values, d.codes, d.table_counts, d.numeric) for c, d in problem.domains.items()},
                    problem.hierarchies, list(problem.table.qi), dict(run.types), problem.models,
                    problem.suppression_limit, problem.budget, problem.options, tuple(run.na_values))
    problem.report(0.2, f"Mondrian: {len(regions)} region(s) finished on the workers")
    client = run.client
    handle = client.scatter(shared, broadcast=True, hash=False)
    futures = [client.submit(finish_region, handle, idx, pure=False) for idx in regions]
    for done, future in enumerate(futures, 1):
        tup, part, region_cuts = future.result()
        part_of_tuple[tup] = part + n_parts
        n_parts += int(part.max()) + 1 if len(part) else 0
        cuts += region_cuts
        problem.report(0.2 + 0.7 * done / len(futures), f"Mondrian: {done} of {len(futures)} regions finished")
    return n_parts


def _recoding(problem: Problem, weights: np.ndarray, part_of_tuple: np.ndarray, n_parts: int,
              cuts: np.ndarray) -> CellRecoding:
    """As mondrian.mondrian: the records of each tuple in its partition; partitions breaking a model suppressed
    (within the budget); every partition's cells its numeric ranges and lowest common ancestors."""
    freq = problem.freq
    group = part_of_tuple[freq.inverse]
    sizes = np.bincount(group, weights=weights, minlength=n_parts).astype(np.int64)
    failing = problem.failing(sizes, row_class=group)
    suppressed = failing[group]
    if int(weights[suppressed].sum()) > problem.budget:
        raise UnsatisfiableError(
            f"{int(weights[suppressed].sum())} record(s) cannot be grouped into classes that satisfy the privacy "
            f"model (the table is too small for it), more than the suppression limit allows ({problem.budget})")
    group[suppressed] = -1
    space = QISpace(problem.hierarchies, [problem.table.is_numeric(c) for c in problem.table.qi], problem.codes)
    cells = cells_from_groups(space, problem.codes, group, freq.inverse)
    names = problem.table.qi
    info: dict[str, object] = {"partitions": int(n_parts), "variant": "strict", "cuts": {names[j]: int(c) for j, c in enumerate(cuts)}}
    factors = problem_factors(problem)
    if factors is not None:  # as mondrian.mondrian's info
        info["weight_factors"] = {names[j]: float(f) for j, f in enumerate(factors)}
    problem.report(1.0, f"Mondrian done: {n_parts} partition(s)")
    return CellRecoding(cells, suppressed, "multidimensional", group, [], [], info)
