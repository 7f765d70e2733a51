"""Samarati (2001; seed 003): binary search over the height (sum of levels) of the lattice for the
lowest height at which some node is anonymous. With a monotonic model, if a node of height h is
anonymous so is one of every greater height, so the search is sound. All nodes of that minimal
height are checked and the best of those anonymous by the chosen metric is returned: minimal-height
solutions, not necessarily the global optimum of the metric."""

from __future__ import annotations

import numpy as np

from ..errors import UnsatisfiableError
from ..search.lattice import ANONYMOUS, UNKNOWN
from ..search.lattice_search import KEEP_LATTICE, METRIC, TARGET, WEIGHTS, LatticeSearch
from .base import AlgorithmInfo, FullDomainRecoding, Problem, register


def samarati(problem: Problem) -> FullDomainRecoding:
    search = LatticeSearch(problem)
    lat = search.lattice
    ranks = lat.ranks()
    by_rank = [np.flatnonzero(ranks == r) for r in range(lat.max_rank + 1)]
    probes: list[dict] = []
    if not search.monotonic:  # the binary search needs monotonic models: check every node instead
        search.exhaustive()
        search.optimum()  # raises UnsatisfiableError when no node is anonymous
        anon = (search.tags == ANONYMOUS).reshape(-1)
        lowest = int(ranks[anon].min())
        at = np.flatnonzero(anon & (ranks == lowest))
        best = at[int(np.argmin(search.values.reshape(-1)[at]))]
        return search.recoding(lat.levels(int(best)), {
            "algorithm": "samarati", "minimal_height": lowest, "solutions_at_minimal_height": int(len(at)),
            "strategy": "exhaustive (a privacy model is not monotonic), then the lowest anonymous height"})

    def any_anonymous(r: int) -> bool:
        for idx in by_rank[r].tolist():
            node = lat.levels(idx)
            if search.tags[node] == UNKNOWN:
                search.check(node)
            if search.tags[node] == ANONYMOUS:
                return True
        return False

    lo, hi = 0, lat.max_rank
    if not any_anonymous(hi):
        search.optimum()  # raises UnsatisfiableError with the usual message
        raise UnsatisfiableError("no anonymous node")
    while lo < hi:
        mid = (lo + hi) // 2
        found = any_anonymous(mid)
        probes.append({"height": mid, "anonymous_node": found})
        problem.report(0.8 * len(probes) / max(lat.max_rank.bit_length(), 1),
                       f"Samarati: height {mid} {'has' if found else 'has no'} anonymous node")
        if found:
            hi = mid
        else:
            lo = mid + 1
    # every node of the minimal height: its anonymous ones are the minimal-height solutions
    for idx in by_rank[lo].tolist():
        node = lat.levels(idx)
        if search.tags[node] == UNKNOWN or np.isnan(search.values[node]) and search.tags[node] == ANONYMOUS:
            search.check(node)
    at = by_rank[lo]
    values = search.values.reshape(-1)[at]
    solutions = at[~np.isnan(values)]
    best = solutions[int(np.argmin(search.values.reshape(-1)[solutions]))]
    levels = lat.levels(int(best))
    info = {"algorithm": "samarati", "minimal_height": int(lo), "solutions_at_minimal_height": int(len(solutions)),
            "solutions": ["".join(map(str, lat.levels(int(i)))) for i in solutions[:50]],
            "probes": probes, "strategy": "binary search over the lattice height"}
    return search.recoding(levels, info)


register(
    AlgorithmInfo(
        name="samarati",
        label="Samarati",
        summary="Binary search over the lattice height for the lowest generalizations that are anonymous; the "
        "best of them by the chosen metric (Samarati 2001). Minimal height, not a global optimum.",
        run=samarati,
        recoding="full-domain",
        person_level=True,
        optimal=False,
        options=(METRIC, WEIGHTS, TARGET, KEEP_LATTICE),
        reference="P. Samarati, Protecting respondents' identities in microdata release, IEEE TKDE 13(6), 2001",
        lattice=True,
    )
)
