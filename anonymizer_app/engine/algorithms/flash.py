"""Flash (Kohlmayer, Prasser, Eckert, Kemper, Kuhn 2012; seed 003 §2.4.2): optimal full-domain
generalization.

Nodes are visited level by level (sum of levels), and within a level by relative height. From every
node whose anonymity is not yet known a path of untagged generalizations is built upwards (FINDPATH)
and checked by binary search (CHECKPATH): a checked anonymous node tags all its generalizations
anonymous, a failing one tags all its specializations failing and goes to a heap, from whose nodes
further paths start. When all nodes are tagged the optimum for the chosen metric is taken among the
anonymous nodes (lattice_search.LatticeSearch.optimum). Models that are not monotonic are searched
exhaustively, as ARX does. With suppression and discernibility, nodes whose lower bound exceeds the
best value found so far are pruned with their generalizations instead of checked (lattice_search).
"""

from __future__ import annotations

import dataclasses
import heapq

import numpy as np

from ..search.lattice import ANONYMOUS, LARGE_FREQUENCY_SET, NOT_ANONYMOUS, PRUNED, UNKNOWN
from ..search.lattice_search import KEEP_LATTICE, METRIC, TARGET, WEIGHTS, LatticeSearch
from .base import AlgorithmInfo, FullDomainRecoding, Problem, register


def flash(problem: Problem) -> FullDomainRecoding:
    search = LatticeSearch(problem)
    # without suppression the binary searches check few nodes: hubs (NodeEvaluator._hub) seldom repay
    search.evaluator.few_checks = search.budget == 0
    # paths treat EXCLUDED nodes as failing (check_path): the incumbent's outlier cap may tighten the budget
    search.excluding = search.pruning and search.outlier_lb is not None
    lat = search.lattice
    # cached nodes that no node still to be checked can roll up from are dropped as the search goes (5M rows, 8
    # QIs, 4%: the cache held ~8.5M classes, ~210 MB, at its end; now at most ~2.6M)
    search.evaluator.needed = search.needed_sources
    search.evaluator.sweep_step = search.evaluator.class_budget // 16
    try:
        if not search.monotonic:
            search.exhaustive(_size_region(search))
            strategy = "exhaustive (a privacy model is not monotonic)"
        else:
            _flash(search)
            strategy = "flash"
        problem.report(0.9, f"Flash: {search.checks} of {lat.size} nodes checked; choosing the optimum")
        levels, value = search.optimum()
    finally:
        search.evaluator.release()  # the cache freed before the output is built
    problem.report(1.0, f"Flash done: optimum {''.join(map(str, levels))}, {search.metric_name} {value:g}")
    info: dict[str, object] = {"algorithm": "flash", "strategy": strategy}
    if not search.pruned:  # with pruned regions the anonymous nodes are not all known
        info["minimal_anonymous_nodes"] = int(search.minimal_anonymous().sum())
    return search.recoding(levels, info)


def _size_region(search: LatticeSearch) -> np.ndarray | None:
    """The nodes within the budget on the models that judge a class by its size alone (k-anonymity), found
    by a Flash search of those models only (monotonic: few nodes checked), as a lattice-shaped bool array;
    None without such models. Any other node suppresses more than the budget with them alone, so with all
    the models too: the exhaustive search of a model that is not monotonic (t-closeness with suppression)
    checks only this region (Adult, 8 QIs, 5-anonymity, 4%: 2,277 of 4,320 nodes, the smaller ones)."""
    if search.evaluator.m >= LARGE_FREQUENCY_SET:
        # the region's nodes are rolled up from the cache, whose histograms are kept up to a budget: past it
        # they are summed from the frequency set again, which on a large one costs more than the odometer's
        # roll-ups from its neighbours (1M rows, 4%: 4,239 of 4,320 nodes in the region, 18 s against 12)
        return None
    p = search.problem
    sized = [m for m in p.models if not getattr(m, "needs_sensitive", False) and not getattr(m, "whole_table", False)]
    if not sized:
        return None
    report = p.progress
    progress = None if report is None else (lambda fraction, phase: report(0.3 * fraction, phase))
    sub = LatticeSearch(dataclasses.replace(p, models=sized, progress=progress), "discernibility")
    if not sub.monotonic:
        return None
    sub.pruning = False  # every node tagged: anonymous or not
    _flash(sub)
    return sub.tags != NOT_ANONYMOUS


def _relative_heights(lat) -> np.ndarray:
    """Per node (index order) the sum over QIs of its level / the QI's height (a height of 0 taken as 1), as
    the floats of (all_levels() / heights).sum(axis=1): numpy sums each row pairwise (fewer than 8 terms in
    order; 8 to 128 in 8 running sums, combined as a tree, then the rest in order), and so do the lattice-
    shaped broadcast sums here, without the size x q matrix. Checked against numpy's row sums on sample
    nodes; the matrix is summed where they differ (another numpy) or q > 128."""
    q = lat.q
    if q == 0:
        return np.zeros(lat.size)
    heights = np.maximum(lat.heights, 1).astype(float)
    terms = []
    for j, dim in enumerate(lat.shape):
        shape = [1] * q
        shape[j] = dim
        terms.append((np.arange(dim) / heights[j]).reshape(shape))
    rel = None
    if q <= 128:
        if q < 8:
            total = terms[0]
            for t in terms[1:]:
                total = total + t
        else:
            acc = terms[:8]
            i = 8
            while i < q - q % 8:
                acc = [a + t for a, t in zip(acc, terms[i:i + 8])]
                i += 8
            total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
            for t in terms[i:]:
                total = total + t
        rel = np.ascontiguousarray(np.broadcast_to(total, lat.shape)).reshape(-1)
        sample = np.unique(np.linspace(0, lat.size - 1, 64).astype(np.int64))
        levels = np.stack(np.unravel_index(sample, lat.shape), axis=1)
        if not np.array_equal((levels / heights).sum(axis=1), rel[sample]):
            rel = None
    if rel is None:
        fractions = np.empty(lat.shape + (q,))
        for j, t in enumerate(terms):
            fractions[..., j] = t
        rel = fractions.reshape(-1, q).sum(axis=1)
    return rel


def _flash(search: LatticeSearch) -> None:
    """Start nodes by rank, then relative height, then index; paths and heap as in the paper. Nodes are held
    as (levels tuple, lattice index), tags read through a memoryview of the flat tags (several times faster
    from Python than indexing the array), relative heights likewise."""
    lat = search.lattice
    q = lat.q
    tags = search.tags
    flat = tags.reshape(-1)  # a view: tags set through either are seen by both
    flat_tags = flat.data
    rel = _relative_heights(lat)
    rel_of = rel.data
    tops = [int(h) for h in lat.heights]
    strides = lat.strides
    dims = range(q)
    check, prune = search.check_tuple, search.prune

    def find_path(node: tuple[int, ...], at: int) -> tuple[list[tuple[int, ...]], list[int]]:
        """Upwards from node, always to the untagged direct generalization of least relative height (ties:
        the least index, i.e. the least levels tuple)."""
        nodes, ats = [node], [at]
        while True:
            best = -1
            best_rel = 0.0
            best_j = 0
            for j in dims:
                if node[j] < tops[j]:
                    up = at + strides[j]
                    if flat_tags[up] == UNKNOWN:
                        r = rel_of[up]
                        # j ascending: the index falls, so on a tie the later one is the lesser
                        if best < 0 or r <= best_rel:
                            best, best_rel, best_j = up, r, j
            if best < 0:
                return nodes, ats
            node = node[:best_j] + (node[best_j] + 1,) + node[best_j + 1:]
            at = best
            nodes.append(node)
            ats.append(at)

    heap: list = []

    def check_path(path: tuple[list[tuple[int, ...]], list[int]]) -> None:
        nodes, ats = path
        lo, hi = 0, len(nodes) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            node, at = nodes[mid], ats[mid]
            if flat_tags[at] == UNKNOWN and not prune(node):
                check(node)
            tag = flat_tags[at]
            if tag == ANONYMOUS or tag == PRUNED:
                hi = mid - 1
            else:
                heapq.heappush(heap, (rel_of[at], at, node))  # (relative height, index): as (…, levels)
                lo = mid + 1

    size = lat.size
    ranks = lat.ranks()
    by_rank = np.argsort(ranks.astype(np.int16 if lat.max_rank < 2**15 else np.int64), kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(ranks, minlength=lat.max_rank + 1)))).tolist()
    for r in range(lat.max_rank + 1):
        # the nodes of rank r still untagged (tags only ever leave UNKNOWN), by relative height then index
        bucket = by_rank[bounds[r]:bounds[r + 1]]
        live = bucket[flat[bucket] == UNKNOWN]
        if not len(live):
            continue
        live = live[np.argsort(rel[live], kind="stable")]
        for i, idx in enumerate(live.tolist()):
            if flat_tags[idx] != UNKNOWN:
                continue
            check_path(find_path(lat.levels(idx), idx))
            while heap:
                _, low_at, low = heapq.heappop(heap)
                for j in dims:
                    if low[j] < tops[j]:
                        up_at = low_at + strides[j]
                        if flat_tags[up_at] == UNKNOWN:
                            check_path(find_path(low[:j] + (low[j] + 1,) + low[j + 1:], up_at))
            search.problem.report(0.85 * (bounds[r] + i) / size, f"Flash: {search.checks} nodes checked")


register(
    AlgorithmInfo(
        name="flash",
        label="Flash",
        summary="Optimal full-domain generalization: binary search on paths of the lattice with predictive "
        "tagging; the optimum for the chosen metric among all anonymous nodes (Kohlmayer et al. 2012, "
        "the algorithm of ARX).",
        run=flash,
        recoding="full-domain",
        person_level=True,
        optimal=True,
        options=(METRIC, WEIGHTS, TARGET, KEEP_LATTICE),
        reference="F. Kohlmayer, F. Prasser, C. Eckert, A. Kemper, K. A. Kuhn, Flash: efficient, stable and "
        "optimal k-anonymity, PASSAT/SocialCom 2012",
        lattice=True,
        cluster=True,
    )
)
