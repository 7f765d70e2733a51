"""Exhaustive lattice search: every node checked (roll-up along an odometer), the optimum for the
chosen metric among all anonymous nodes. The reference the optimal searches are tested against."""

from __future__ import annotations

from ..search.lattice_search import KEEP_LATTICE, METRIC, TARGET, WEIGHTS, LatticeSearch
from .base import AlgorithmInfo, FullDomainRecoding, Problem, register


def exhaustive(problem: Problem) -> FullDomainRecoding:
    search = LatticeSearch(problem, tagging=False)
    search.exhaustive()
    levels, value = search.optimum()
    problem.report(1.0, f"exhaustive search done: {search.checks} nodes, {search.metric_name} {value:g}")
    return search.recoding(levels, {"algorithm": "exhaustive", "strategy": "every node checked"})


register(
    AlgorithmInfo(
        name="exhaustive",
        label="Exhaustive lattice search",
        summary="Checks every full-domain generalization and returns the optimum for the chosen metric; "
        "slow on large lattices, the reference for the optimal algorithms.",
        run=exhaustive,
        recoding="full-domain",
        person_level=True,
        optimal=True,
        options=(METRIC, WEIGHTS, TARGET, KEEP_LATTICE),
        reference="",
        lattice=True,
    )
)
