"""Incognito (LeFevre, DeWitt, Ramakrishnan 2005; seed 002/003): all anonymous full-domain
generalizations, found bottom-up over subsets of the quasi-identifiers.

For i = 1..q, for every i-subset S of the QIs whose (i-1)-subsets all have anonymous nodes, the
candidate nodes of S are the level combinations whose every projection onto an (i-1)-subset is
anonymous there (subset property: projecting merges classes, so it never adds outliers, with or
without a suppression budget). S's candidates are visited breadth-first (by height); an anonymous node
marks all its generalizations anonymous without checking them. A node of S is evaluated as the full
node with the QIs outside S at their (one-label) root, rolled up from a cached specialization. At
i = q the anonymous nodes are all k-anonymous full-domain generalizations; the optimum for the chosen
metric is taken among them.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ..errors import UnsatisfiableError
from ..search.lattice import ANONYMOUS, NOT_ANONYMOUS
from ..search.lattice_search import KEEP_LATTICE, METRIC, TARGET, WEIGHTS, LatticeSearch
from .base import AlgorithmInfo, FullDomainRecoding, Problem, register


def incognito(problem: Problem) -> FullDomainRecoding:
    search = LatticeSearch(problem, tagging=False)
    lat = search.lattice
    if not search.monotonic:  # subset pruning needs monotonic models: check every node instead
        search.exhaustive()
        levels, _ = search.optimum()
        return search.recoding(levels, {"algorithm": "incognito",
                                        "strategy": "exhaustive (a privacy model is not monotonic)"})
    q = lat.q
    heights = [int(h) for h in lat.heights]
    if any(len(h.labels[h.height]) != 1 for h in problem.hierarchies):
        raise UnsatisfiableError("Incognito needs every hierarchy to end in one root label")
    anonymous: dict[tuple[int, ...], np.ndarray] = {(): np.ones((), dtype=bool)}
    checked_per_size = []
    candidates_total = 0
    for i in range(1, q + 1):
        checked_before = search.checks
        for subset in combinations(range(q), i):
            parents = [subset[:t] + subset[t + 1:] for t in range(i)]
            if any(p not in anonymous or not anonymous[p].any() for p in parents):
                continue  # a projection has no anonymous node: neither has S
            shape = tuple(heights[j] + 1 for j in subset)
            cand = np.ones(shape, dtype=bool)
            for t, p in enumerate(parents):
                cand &= np.expand_dims(anonymous[p], axis=t)
            candidates_total += int(cand.sum())
            anonymous[subset] = _search_subset(search, subset, shape, cand, heights)
        checked_per_size.append(search.checks - checked_before)
        problem.report(0.85 * i / q, f"Incognito: subsets of {i} QI(s) done, {search.checks} nodes checked")
    full = tuple(range(q))
    if full not in anonymous:
        anonymous[full] = np.zeros(lat.shape, dtype=bool)
    # all anonymous full-domain generalizations: tags for the optimum search
    search.tags[...] = np.where(anonymous[full], ANONYMOUS, NOT_ANONYMOUS)
    levels, value = search.optimum()
    info = {"algorithm": "incognito", "strategy": "subset pruning, breadth-first with marking, roll-up",
            "anonymous_generalizations": int(anonymous[full].sum()),
            "subsets_searched": len(anonymous) - 1, "candidate_nodes": candidates_total,
            "nodes_checked_per_subset_size": checked_per_size}
    return search.recoding(levels, info)


def _search_subset(search: LatticeSearch, subset, shape, cand: np.ndarray, heights) -> np.ndarray:
    """Anonymous nodes among the candidates of one QI subset (others at their root)."""
    anon = np.zeros(shape, dtype=bool)
    if not cand.any():
        return anon
    idx = np.flatnonzero(cand.reshape(-1))
    grid = np.stack(np.unravel_index(idx, shape), axis=1)
    order = np.argsort(grid.sum(axis=1), kind="stable")
    full = list(heights)
    for row in grid[order].tolist():
        node = tuple(row)
        if anon[node]:
            continue  # marked by an anonymous specialization
        for j, lv in zip(subset, row):
            full[j] = lv
        evaluated = search.evaluator.classes(tuple(full))
        search.checks += 1
        for j in subset:
            full[j] = heights[j]
        if evaluated.cost <= search.budget:
            anon[tuple(slice(x, None) for x in row)] = True
    return anon


register(
    AlgorithmInfo(
        name="incognito",
        label="Incognito",
        summary="All anonymous full-domain generalizations, bottom-up over QI subsets with subset pruning and "
        "roll-up; the optimum for the chosen metric among them (LeFevre et al. 2005).",
        run=incognito,
        recoding="full-domain",
        person_level=True,
        optimal=True,
        options=(METRIC, WEIGHTS, TARGET, KEEP_LATTICE),
        reference="K. LeFevre, D. J. DeWitt, R. Ramakrishnan, Incognito: efficient full-domain k-anonymity, "
        "SIGMOD 2005",
        lattice=True,
    )
)
