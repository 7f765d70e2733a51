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

from ..lattice import ANONYMOUS, LARGE_FREQUENCY_SET, NOT_ANONYMOUS, PRUNED, UNKNOWN
from ..lattice_search import KEEP_LATTICE, METRIC, LatticeSearch
from ..privacy import PRIVACY_MODELS
from . import AlgorithmInfo, register
from .base import FullDomainRecoding, Problem


def flash(problem: Problem) -> FullDomainRecoding:
    search = LatticeSearch(problem)
    # without suppression the binary searches check few nodes: hubs (NodeEvaluator._hub) seldom repay
    search.evaluator.few_checks = search.budget == 0
    # paths treat EXCLUDED nodes as failing (check_path): the incumbent's outlier cap may tighten the budget
    search.excluding = search.pruning and search.outlier_lb is not None
    lat = search.lattice
    if not search.monotonic:
        search.exhaustive(_size_region(search))
        strategy = "exhaustive (a privacy model is not monotonic)"
    else:
        _flash(search)
        strategy = "flash"
    problem.report(0.9, f"Flash: {search.checks} of {lat.size} nodes checked; choosing the optimum")
    levels, value = search.optimum()
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


def _flash(search: LatticeSearch) -> None:
    lat = search.lattice
    tags = search.tags
    heights = np.maximum(lat.heights, 1).astype(float)
    allv = lat.all_levels()
    rel = (allv / heights).sum(axis=1)
    order = np.lexsort((np.arange(lat.size), rel, lat.ranks()))
    rel_of = rel.tolist()

    tops = [int(h) for h in lat.heights]
    strides = lat.strides
    # a view, tags set through either are seen by both; a memoryview reads one from Python several times
    # faster than the array (the scan below reads every node's)
    flat_tags = tags.reshape(-1).data

    def find_path(start: tuple[int, ...]) -> list[tuple[int, ...]]:
        """Upwards from start, always to the untagged direct generalization of least relative height."""
        path = [start]
        node, at = start, lat.index(start)
        while True:
            best = None
            for j, lv in enumerate(node):
                if lv < tops[j] and flat_tags[at + strides[j]] == UNKNOWN:
                    up = node[:j] + (lv + 1,) + node[j + 1:]
                    cand = (rel_of[at + strides[j]], up)
                    if best is None or cand < best[0]:
                        best = (cand, at + strides[j])
            if best is None:
                return path
            (_, node), at = best
            path.append(node)

    heap: list = []

    def check_path(path: list[tuple[int, ...]]) -> None:
        lo, hi = 0, len(path) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            node = path[mid]
            if tags[node] == UNKNOWN and not search.prune(node):
                search.check(node)
            if tags[node] == ANONYMOUS or tags[node] == PRUNED:
                hi = mid - 1
            else:
                heapq.heappush(heap, (rel_of[lat.index(node)], node))
                lo = mid + 1

    size = lat.size
    for count, idx in enumerate(order.tolist()):
        if flat_tags[idx] != UNKNOWN:
            continue
        node = lat.levels(idx)
        check_path(find_path(node))
        while heap:
            _, low = heapq.heappop(heap)
            for up in lat.successors(low):
                if tags[up] == UNKNOWN:
                    check_path(find_path(up))
        search.problem.report(0.85 * count / size, f"Flash: {search.checks} nodes checked")


register(
    AlgorithmInfo(
        name="flash",
        label="Flash",
        summary="Optimal full-domain generalization: binary search on paths of the lattice with predictive "
        "tagging; the optimum for the chosen metric among all anonymous nodes (Kohlmayer et al. 2012, "
        "the algorithm of ARX).",
        run=flash,
        models=tuple(PRIVACY_MODELS),
        recoding="full-domain",
        optimal=True,
        options=(METRIC, KEEP_LATTICE),
        reference="F. Kohlmayer, F. Prasser, C. Eckert, A. Kemper, K. A. Kuhn, Flash: efficient, stable and "
        "optimal k-anonymity, PASSAT/SocialCom 2012",
    )
)
