"""A chosen full-domain transformation: one given level per QI, applied with the suppression limit.

Used by the solution lattice to evaluate a node and to keep it as a result, and from the CLI:
``--algorithm full-domain --levels 0,4,1,...`` (one level per quasi-identifier, in QI order). The
records of classes that break any privacy model of the run (k, l, t, β, δ) are suppressed; if more than the suppression limit
allows would be, the transformation is refused (it is not a solution).
"""

from __future__ import annotations

import time

from ..errors import InputError, UnsatisfiableError
from ..privacy import Parameter
from ..search.lattice import equivalence_classes
from .base import AlgorithmInfo, FullDomainRecoding, Problem, register

LEVELS = Parameter("levels", str, "", "the transformation: one generalization level per quasi-identifier, in "
                   "QI order, separated by commas (e.g. 0,4,1)")


def parse_levels(text: object, qi: list[str], heights: list[int]) -> list[int]:
    """'0,4,1' -> [0, 4, 1], checked against the QIs and their hierarchies' heights."""
    raw = str(text or "").strip()
    names = ", ".join(qi)
    if not raw:
        raise InputError(f"levels: give one level per quasi-identifier, in the order {names}")
    parts = [p.strip() for p in raw.split(",")]
    if len(parts) != len(qi):
        raise InputError(f"levels: {len(parts)} level(s) given for {len(qi)} quasi-identifier(s); "
                         f"give one per quasi-identifier, in the order {names}")
    levels = []
    for name, part, height in zip(qi, parts, heights):
        try:
            level = int(part)
        except ValueError:
            raise InputError(f"levels: the level of {name} must be an integer, got {part!r}") from None
        if not 0 <= level <= height:
            raise InputError(f"levels: the level of {name} must be between 0 and {height} (the height of its "
                             f"hierarchy), got {level}")
        levels.append(level)
    return levels


def full_domain(problem: Problem) -> FullDomainRecoding:
    started = time.perf_counter()
    qi = list(problem.table.qi)
    levels = parse_levels(problem.options.get("levels"), qi, [h.height for h in problem.hierarchies])
    problem.report(0.1, "applying the chosen transformation")
    inverse, sizes = equivalence_classes(problem.freq.codes, problem.freq.counts, problem.hierarchies, levels)
    _, outliers = problem.outcome(sizes, inverse)  # records, or persons with a person id
    unit = "record" if problem.persons is None else "person"
    shown = ",".join(map(str, levels))
    if outliers > problem.budget:
        models = ", ".join(m.describe() for m in problem.models)
        raise UnsatisfiableError(
            f"the transformation {shown} does not meet {models}: {outliers} {unit}(s) would have to be "
            f"suppressed, the suppression limit allows {problem.budget}")
    suppressed = problem.suppressed_rows(sizes, inverse)
    problem.report(1.0, f"transformation {shown}: {outliers} {unit}(s) suppressed")
    size = 1
    for h in problem.hierarchies:
        size *= h.height + 1
    info = {"algorithm": "full-domain", "strategy": "the chosen transformation",
            "levels": dict(zip(qi, levels)), "nodes_checked": 1, "lattice_size": size,
            "search_seconds": round(time.perf_counter() - started, 4)}
    return FullDomainRecoding(levels, suppressed, info=info)


register(
    AlgorithmInfo(
        name="full-domain",
        label="Chosen transformation",
        summary="Applies one given generalization level per quasi-identifier (a node of the lattice) and "
        "suppresses the records of classes that break the privacy model, within the suppression limit.",
        run=full_domain,
        recoding="full-domain",
        person_level=True,
        optimal=False,
        options=(LEVELS,),
        reference="",
    )
)
