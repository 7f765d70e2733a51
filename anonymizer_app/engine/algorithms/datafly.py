"""Datafly (Sweeney 2002; seed 001 Figure 1; seed 003 §2.4.4).

On the frequency list of QI tuples: while the tuples that break the model hold more records than
the suppression budget, generalize by one level the QI with the most distinct values (ties go to
the QI listed first); then suppress the tuples that still break it. Greedy, not optimal.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsatisfiableError
from ..search.lattice import equivalence_classes
from .base import AlgorithmInfo, FullDomainRecoding, Problem, register


def datafly(problem: Problem) -> FullDomainRecoding:
    hs = problem.hierarchies
    freq = problem.freq
    names = problem.table.qi
    levels = [0] * len(hs)
    total_height = sum(h.height for h in hs) or 1
    steps: list[dict] = []
    while True:
        inverse, sizes = equivalence_classes(freq.codes, freq.counts, hs, levels)
        failing, outliers = problem.outcome(sizes, inverse)  # records, or persons with a person id
        distinct = [len(np.unique(h.maps[lv][freq.codes[:, j]])) for j, (h, lv) in enumerate(zip(hs, levels))]
        step = {
            "iteration": len(steps) + 1,
            "levels": dict(zip(names, levels)),
            "distinct": dict(zip(names, distinct)),
            "equivalence_classes": int(len(sizes)),
            ("records_in_failing_classes" if problem.persons is None else "persons_to_suppress"): outliers,
        }
        steps.append(step)
        problem.report(sum(levels) / total_height, f"Datafly iteration {step['iteration']}: "
                       f"{outliers} {'person' if problem.persons is not None else 'record'}(s) to suppress, "
                       f"budget {problem.budget}")
        if outliers <= problem.budget:
            break
        candidates = [j for j, (h, lv) in enumerate(zip(hs, levels)) if lv < h.height]
        if not candidates:
            raise UnsatisfiableError(
                f"every quasi-identifier is at the top of its hierarchy and {outliers} records still "
                f"break the privacy model, more than the suppression limit allows ({problem.budget}); "
                + problem.unsatisfiable_advice()
            )
        j = max(candidates, key=lambda c: (distinct[c], -c))
        step["generalized"] = names[j]
        levels[j] += 1
    suppressed = problem.suppressed_rows(sizes, inverse)
    problem.report(1.0, f"Datafly done: {int(suppressed.sum())} record(s) suppressed")
    return FullDomainRecoding(levels, suppressed, steps)


register(
    AlgorithmInfo(
        name="datafly",
        label="Datafly",
        summary="Greedy full-domain generalization: generalize the QI with most distinct values until the "
        "records in classes below k fit the suppression limit, then suppress them (Sweeney 2002).",
        run=datafly,
        recoding="full-domain",
        person_level=True,
        optimal=False,
        reference="L. Sweeney, Achieving k-anonymity privacy protection using generalization and "
        "suppression, IJUFKS 10(5), 2002",
    )
)
