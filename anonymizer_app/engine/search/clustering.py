"""Building blocks of the clustering algorithms (k-member, OKA, the disk-based hybrid of seed 003).

Records are handled by the index of their distinct QI tuple (``items``), so equal records share
their encoding. Every cluster id is an index into a :class:`~.distance.Centroids`.

With a person id (definitions.md, "The unit counted: the person") k-member and OKA cluster persons, not records
(:func:`units_of`): a person is placed once, by the tuple that stands for it, and all its records go to its
cluster, so a cluster of k units holds k distinct persons, and a person's records are in one class (the adversary
who knows all of a person's records learns no more than the class). :func:`finish` then judges the clusters per
person (search/persons.py) and suppresses whole persons within a budget of persons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..algorithms.base import CellRecoding, Problem
from ..errors import UnsatisfiableError
from ..model.persons import distinct_persons
from ..privacy import Parameter
from .distance import Centroids, Encoded, nearest
from .persons import PersonCounter
from .recoding import QISpace, cells_from_groups

# the random choices of the clustering algorithms (OKA, k-member, MHA, the disk hybrid): one option, one seed
SEED = Parameter("seed", int, 0, "seed of the random choices (cluster seeds, record order)", minimum=0)


def space_of(problem: Problem) -> QISpace:
    return QISpace(problem.hierarchies, [problem.table.is_numeric(c) for c in problem.table.qi], problem.codes)


def k_of(problem: Problem) -> int:
    return max((getattr(m, "k", 1) for m in problem.models), default=1)


@dataclass(frozen=True)
class Units:
    """What a clustering algorithm places, each by the frequency-set tuple that stands for it: a record, or with a
    person id a person (all its records then follow it into its cluster)."""

    item: np.ndarray  # unit -> frequency-set tuple
    counts: np.ndarray  # per frequency-set tuple: the units it stands for
    row_unit: np.ndarray | None = None  # row -> unit; None: the units are the rows
    word: str = "record"  # what a unit is, for the progress messages

    def rows(self, unit_group: np.ndarray) -> np.ndarray:
        """row -> group, from unit -> group."""
        unit_group = np.asarray(unit_group, dtype=np.int64)
        return unit_group if self.row_unit is None else unit_group[self.row_unit]


def units_of(problem: Problem) -> Units:
    """The records of the table, or with a person id its persons, each standing at its most frequent tuple (the
    first of them on a tie). A person whose quasi-identifiers change between records is placed by that tuple; its
    other records are generalized with its cluster, which costs information, not privacy."""
    freq = problem.freq
    if problem.persons is None:
        return Units(np.asarray(freq.inverse, dtype=np.int64), problem.tuple_rows)
    person = np.asarray(problem.persons.person, dtype=np.int64)
    n_persons = problem.persons.count
    T = max(len(freq.counts), 1)
    pairs, seen = np.unique(person * T + np.asarray(freq.inverse, dtype=np.int64), return_counts=True)
    owner, tup = pairs // T, pairs % T
    order = np.lexsort((tup, -seen, owner))  # per person: the most records first, then the lowest tuple
    first = order[np.r_[True, owner[order][1:] != owner[order][:-1]]]
    item = np.zeros(n_persons, dtype=np.int64)
    item[owner[first]] = tup[first]
    counts = np.bincount(item, minlength=len(freq.counts)).astype(np.int64)
    return Units(item, counts, person, "person")


def row_persons(problem: Problem) -> PersonCounter | None:
    """The run's persons counted over rows (each row its own 'tuple'): clusters are groups of rows, and rows of one
    tuple may lie in different clusters. None without a person id."""
    persons = problem.persons
    if persons is None:
        return None
    n = len(persons.person)
    return PersonCounter(np.arange(n, dtype=np.int64), persons.person, persons.count, n, persons.adversary,
                         persons.k)


def identical_clusters(tuple_of_row: np.ndarray, counts: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Rows of a tuple seen at least k times form count // k clusters of identical records (sizes k..2k-1).

    Returns the cluster of each row (-1: not placed) and the number of clusters made."""
    n = len(tuple_of_row)
    group = np.full(n, -1, dtype=np.int64)
    big = counts >= k
    if not big.any():
        return group, 0
    per_tuple = np.where(big, counts // k, 0)
    base = np.cumsum(per_tuple) - per_tuple
    order = np.argsort(tuple_of_row, kind="stable")
    t = tuple_of_row[order]
    start = np.searchsorted(t, t, side="left")
    rank = np.arange(n) - start
    sel = big[t]
    group[order[sel]] = base[t[sel]] + np.minimum(rank[sel] // k, per_tuple[t[sel]] - 1)
    return group, int(per_tuple.sum())


def oka_fill(enc: Encoded, items: np.ndarray, k: int, rng: np.random.Generator, batch: int = 2048,
             progress=None) -> tuple[Centroids, np.ndarray]:
    """OKA's one pass: floor(n/k) random seeds, every other record to its nearest centroid (the
    centroid moves as records join; records are placed in batches, the index rebuilt per batch)."""
    n = len(items)
    n_clusters = max(n // k, 1)
    perm = rng.permutation(n)
    seeds, rest = perm[:n_clusters], perm[n_clusters:]
    cent = Centroids(enc, items[seeds])
    cluster = np.empty(n, dtype=np.int64)
    cluster[seeds] = np.arange(n_clusters)
    for s in range(0, len(rest), batch):
        rows = rest[s:s + batch]
        best, _ = nearest(enc, cent, items[rows])
        cluster[rows] = best
        cent.add(best, items[rows])
        if progress is not None:  # every batch: the caller throttles (Problem.heartbeat)
            progress(s / max(len(rest), 1))
    return cent, cluster


def _assign_with_capacity(enc, cent, items, rows, cluster, sizes, capacity, allowed_fn, batch=4096, tick=None):
    """Place ``rows`` one batch at a time on their nearest allowed cluster without exceeding capacity;
    ``tick()`` (if given) before every batch."""
    pending = rows
    while len(pending):
        if tick is not None:
            tick()
        allowed = allowed_fn(sizes)
        if not allowed.any():
            break
        part = pending[:batch]
        best, dist = nearest(enc, cent, items[part], allowed)
        free = capacity(sizes)[best]
        order = np.lexsort((dist, best))
        b = best[order]
        start = np.searchsorted(b, b, side="left")
        rank = np.arange(len(b)) - start
        ok = np.zeros(len(part), dtype=bool)
        ok[order] = rank < free[order]
        placed = part[ok]
        cluster[placed] = best[ok]
        np.add.at(sizes, best[ok], 1)
        cent.add(best[ok], items[placed])
        pending = np.concatenate([part[~ok], pending[batch:]])
    return pending


def oka_adjust(enc: Encoded, items: np.ndarray, cent: Centroids, cluster: np.ndarray, k: int,
               tick: Callable[[], None] | None = None) -> np.ndarray:
    """OKA's adjustment (Lin & Wei 2008): clusters above k give up their records farthest from the
    centroid; those go first to the nearest clusters below k, the rest to the nearest clusters
    below 2k-1. ``tick()`` before every batch of records placed."""
    n_clusters = len(cent)
    dist = enc.distance_pairs(items, cent, cluster)
    order = np.lexsort((dist, cluster))
    c = cluster[order]
    rank = np.arange(len(c)) - np.searchsorted(c, c, side="left")
    pool = order[rank >= k]
    kept = order[rank < k]
    cluster = cluster.copy()
    cluster[pool] = -1
    cent.rebuild(cluster[kept], items[kept], np.arange(n_clusters))
    sizes = np.bincount(cluster[kept], minlength=n_clusters).astype(np.int64)
    pool = _assign_with_capacity(enc, cent, items, pool, cluster, sizes, lambda s: k - s, lambda s: s < k,
                                 tick=tick)
    pool = _assign_with_capacity(enc, cent, items, pool, cluster, sizes, lambda s: 2 * k - 1 - s,
                                 lambda s: s < 2 * k - 1, tick=tick)
    if len(pool):  # only when N < k records in all
        best, _ = nearest(enc, cent, items[pool])
        cluster[pool] = best
    return cluster


def redistribute_small(enc: Encoded, items: np.ndarray, cent: Centroids, cluster: np.ndarray, k: int,
                       allowed_extra: np.ndarray | None = None) -> np.ndarray:
    """Seed 003's removeSmallClusters: records of clusters below k go to the nearest cluster of at
    least k records (centroids of the receiving clusters are updated)."""
    sizes = np.bincount(cluster, minlength=len(cent))
    small = sizes < k
    if not small.any():
        return cluster
    big = ~small
    if not big.any():
        return np.zeros_like(cluster)  # fewer than k records in all: one cluster
    rows = np.flatnonzero(small[cluster])
    best, _ = nearest(enc, cent, items[rows], big)
    cluster = cluster.copy()
    cluster[rows] = best
    cent.add(best, items[rows])
    return cluster


def split_members(enc: Encoded, items: np.ndarray, k: int) -> list[np.ndarray]:
    """Split a cluster above 2k-1 records (``items``: their tuples) into clusters of k..2k-1: take the
    record farthest from the centroid and the one farthest from that one, cut the records into two
    halves by which of the two they are closer to; repeat on halves still too big. Returns positions.

    The distances are those of Centroids.rebuild, Encoded.distance_pairs and distance_to_item, bit for bit,
    with every categorical QI looked up at once (Encoded.lca_rows) and the per-QI terms summed in the same
    order (an accumulate along the row): a split costs a few numpy calls instead of a few per QI."""
    out, stack = [], [np.arange(len(items))]
    while stack:
        m = stack.pop()
        if len(m) <= 2 * k - 1:
            out.append(m)
            continue
        it = items[m]
        X, L = enc.X[it], enc.L[it]
        terms = np.zeros((len(it), 1 + len(enc.cat)))
        # the centroid: numeric sums in row order from 0.0 (bincount's), the mean over the count; per
        # categorical QI (LCA level, the first record's leaf), the level the highest of the records'
        if enc.num:
            mean = np.add.accumulate(X, axis=0)[-1] / max(len(it), 1)
            terms[:, 0] = np.abs(X - mean).sum(axis=-1)
        if enc.cat:
            # a record's term max(level, its LCA level) is the level itself: the level is the records' highest
            terms[:, 1:] = enc.lca_rows(L, L[0]).max(axis=0) / enc.H
        a = int(np.argmax(np.add.accumulate(terms, axis=1)[:, -1]))
        da = _distance_to_member(enc, X, L, a, terms)
        b = int(np.argmax(da))
        order = np.argsort(da - _distance_to_member(enc, X, L, b, terms), kind="stable")
        half = len(m) // 2
        stack.append(m[order[:half]])
        stack.append(m[order[half:]])
    return out


def _distance_to_member(enc: Encoded, X: np.ndarray, L: np.ndarray, i: int, terms: np.ndarray) -> np.ndarray:
    """Encoded.distance_to_item of the records (numeric values X, leaves L) to their record i, summed in its
    order; ``terms``: scratch space of the records' shape."""
    terms[:, 0] = np.abs(X - X[i]).sum(axis=1) if enc.num else 0.0
    if enc.cat:
        terms[:, 1:] = enc.lca_rows(L, L[i]) / enc.H
    return np.add.accumulate(terms, axis=1)[:, -1]


def split_big(enc: Encoded, items: np.ndarray, cluster: np.ndarray, k: int,
              tick: Callable[[], None] | None = None) -> np.ndarray:
    """Renumber clusters so that every cluster of more than 2k-1 records is split (see split_members);
    ``tick()`` (if given) before every cluster split."""
    sizes = np.bincount(cluster)
    out = cluster.copy()
    next_id = len(sizes)
    big = np.flatnonzero(sizes > 2 * k - 1)
    if not len(big):
        return out
    order = np.argsort(cluster, kind="stable")
    starts = np.searchsorted(cluster[order], big)
    for c, s in zip(big, starts):
        if tick is not None:
            tick()
        rows = order[s:s + sizes[c]]
        for i, part in enumerate(split_members(enc, items[rows], k)):
            if i:
                out[rows[part]] = next_id
                next_id += 1
    return out


def _dense_ids(group: np.ndarray) -> bool:
    """Whether the ids are exactly 0 .. m-1, each used: np.unique's inverse is then the array itself (k-member's
    clusters are; the sort it saves costs 0.14 s at 1M rows)."""
    if not len(group):
        return False
    lo, hi = int(group.min()), int(group.max())
    return lo == 0 and hi < len(group) and bool(np.bincount(group, minlength=hi + 1).all())


def finish(problem: Problem, group: np.ndarray, kind: str, info: dict, notes: list[str] | None = None) -> CellRecoding:
    """Suppress groups that break the models (within the budget), write each group's labels."""
    group = np.asarray(group, dtype=np.int64)
    if not _dense_ids(group):
        _, group = np.unique(group, return_inverse=True)
        group = group.reshape(-1)
    counter = row_persons(problem)
    merges = 0
    if problem.needs_classes:
        group, merges = grow_until_models_hold(problem, group, counter)
        info = dict(info, merges_for_sensitive_models=merges)
    if counter is not None:
        return _finish_persons(problem, counter, group, kind, info, notes)
    sizes = problem.row_sizes(group)  # research records with a population table
    failing = problem.failing(sizes, row_class=group)
    suppressed = failing[group]
    if problem.suppressed_records(suppressed) > problem.budget:
        raise UnsatisfiableError(
            f"{problem.suppressed_records(suppressed)} record(s) are in clusters that break the privacy model (the table has too "
            f"few records for it), more than the suppression limit allows ({problem.budget})")
    group = group.copy()
    group[suppressed] = -1
    cells = cells_from_groups(space_of(problem), problem.codes, group, problem.freq.inverse)
    kept_sizes = sizes[~failing]
    info = dict(info)
    info.update({"clusters": int(len(kept_sizes)),
                 "smallest_cluster": int(kept_sizes.min()) if len(kept_sizes) else 0,
                 "largest_cluster": int(kept_sizes.max()) if len(kept_sizes) else 0})
    return CellRecoding(cells, suppressed, kind, group, [], list(notes or []), info)


def _finish_persons(problem: Problem, counter: PersonCounter, group: np.ndarray, kind: str, info: dict,
                    notes: list[str] | None) -> CellRecoding:
    """finish() with a person id: the clusters judged per person (the fixpoint of the definitions), the persons of
    failing clusters suppressed with all their records, within the budget of persons."""
    n_groups = int(group.max()) + 1 if len(group) else 0
    judged = counter.judge(group, n_groups, problem.failing)
    if judged.cost > problem.budget:
        raise UnsatisfiableError(
            f"{judged.cost} person(s) are in clusters that break the privacy model (the table has too few persons "
            f"for it), more than the suppression limit allows ({problem.budget})")
    suppressed = counter.suppressed_rows(group, judged)
    group = group.copy()
    group[suppressed] = -1
    cells = cells_from_groups(space_of(problem), problem.codes, group, problem.freq.inverse)
    kept_sizes = judged.persons[~judged.failing]
    info = dict(info)
    info.update({"clusters": int(len(kept_sizes)),
                 "smallest_cluster": int(kept_sizes.min()) if len(kept_sizes) else 0,
                 "largest_cluster": int(kept_sizes.max()) if len(kept_sizes) else 0,
                 "cluster_sizes_in": "persons", "persons_suppressed": int(judged.cost)})
    return CellRecoding(cells, suppressed, kind, group, [], list(notes or []), info)


def _failing_clusters(problem: Problem, group: np.ndarray, n_clusters: int,
                      counter: PersonCounter | None) -> tuple[np.ndarray, np.ndarray]:
    """(sizes, failing) of the clusters, in records, or in persons with a person id (its persons' first round:
    a person's records lie in one cluster, so no further round changes it)."""
    if counter is None:
        sizes = problem.row_sizes(group)
        return sizes, problem.failing(sizes, row_class=group)
    sizes = distinct_persons(group, counter.person, counter.count, n_clusters)
    return sizes, counter.judge(group, n_clusters, problem.failing).failing


def grow_until_models_hold(problem: Problem, group: np.ndarray,
                           counter: PersonCounter | None = None) -> tuple[np.ndarray, int]:
    """Models on sensitive values (l-diversity, t-closeness, ...): every cluster that breaks them grows by
    merging with the cluster its records are nearest to (a passing one when there is one, else the
    nearest other cluster, smallest failing cluster first) until every cluster holds or one is left.
    With a person id (``counter``, see row_persons) sizes and sensitive values count persons.
    Returns (row -> cluster, number of merges)."""
    items = problem.freq.inverse
    enc = Encoded(space_of(problem), problem.freq.codes)
    merges = 0
    while True:
        _, group = np.unique(group, return_inverse=True)
        group = group.reshape(-1)
        n_clusters = int(group.max()) + 1 if len(group) else 0
        sizes, failing = _failing_clusters(problem, group, n_clusters, counter)
        if problem.research is not None:  # a cluster without a research record is left out at no cost
            failing &= sizes > 0
        failing = np.asarray(failing, dtype=bool)
        if not failing.any() or n_clusters <= 1:
            return group, merges
        cent = Centroids(enc, np.zeros(n_clusters, dtype=np.int64))
        cent.rebuild(group, items, np.arange(n_clusters))
        target = np.arange(n_clusters)
        if failing.all():
            movers = [int(np.flatnonzero(failing)[np.argmin(sizes[failing])])]
        else:
            movers = np.flatnonzero(failing).tolist()
        for c in movers:
            allowed = ~failing if not failing.all() else np.ones(n_clusters, dtype=bool)
            allowed = allowed.copy()
            allowed[c] = False
            rows = np.flatnonzero(group == c)
            best, _ = nearest(enc, cent, items[rows], allowed)
            target[c] = int(np.bincount(best).argmax())
            merges += 1
        group = target[group]
        problem.report(0.95, f"growing clusters until the privacy models hold: {merges} merge(s)")


def place_leftovers(enc: Encoded, tuple_of_row: np.ndarray, group: np.ndarray, rows: np.ndarray,
                    k: int) -> np.ndarray:
    """Fewer than k records left over: each joins the nearest existing cluster with room (below
    2k-1), else the nearest cluster; with no cluster at all they form one (suppressed if too small)."""
    group = group.copy()
    if not len(rows):
        return group
    placed = group >= 0
    if not placed.any():
        group[rows] = 0
        return group
    n_clusters = int(group.max()) + 1
    cent = Centroids(enc, np.zeros(n_clusters, dtype=np.int64))
    cent.rebuild(group[placed], tuple_of_row[placed], np.arange(n_clusters))
    sizes = np.bincount(group[placed], minlength=n_clusters).astype(np.int64)
    cluster = np.full(len(rows), -1, dtype=np.int64)
    pending = _assign_with_capacity(enc, cent, tuple_of_row[rows], np.arange(len(rows)), cluster, sizes,
                                    lambda s: 2 * k - 1 - s, lambda s: s < 2 * k - 1)
    if len(pending):
        best, _ = nearest(enc, cent, tuple_of_row[rows[pending]])
        cluster[pending] = best
    group[rows] = cluster
    return group
