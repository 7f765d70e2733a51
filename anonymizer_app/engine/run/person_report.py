"""The report's section on persons (definitions.md, "The unit counted: the person"): when the table has a person
id, the run's persons (Result.persons) with the published classes counted in persons, each privacy model
checked per person, and the risk per person beside the record-level figures."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..measure.metrics import RISK_THRESHOLD
from ..measure.risk.persons import person_risks
from ..model.table import Table
from .person_check import class_persons, person_verdicts, persons_of
from .report_model import model_check


def person_section(result_persons: dict, table: Table, models: list, sizes: np.ndarray, row_class: np.ndarray,
                   domain_of: Callable[[Any], Any], suppression_limit: float) -> dict | None:
    """report["persons"], None without a person id. ``sizes``/``row_class``: the published classes in records
    (row -> class, -1 not published), as the gate checked them; ``suppression_limit``: a share of the persons."""
    persons = persons_of(table)
    if persons is None:
        return None
    verdicts = list(person_verdicts(list(models), row_class, persons, len(sizes), domain_of))
    # every verdict carries the classes' persons: counted once for the checks and the figures
    counted = verdicts[0].sizes if verdicts else class_persons(row_class, persons, len(sizes))
    published = counted > 0
    smallest = int(np.argmin(np.where(published, counted, np.iinfo(np.int64).max))) if published.any() else None
    section = {"column": persons.column, **result_persons}
    section.update({
        # the most persons the run could suppress (run/person_check.check_person_suppression's budget)
        "suppression_budget": int(np.floor(suppression_limit * persons.count + 1e-9)),
        "min_class_persons": int(counted[smallest]) if smallest is not None else 0,
        # the records of that smallest class: "5 persons (12 records)"
        "min_class_records": int(sizes[smallest]) if smallest is not None else 0,
        "class_size_histogram": _histogram(counted[published]),
        "model_checks": [model_check(v) for v in verdicts],
        "risk": person_risks(row_class, persons.codes, RISK_THRESHOLD),
    })
    return section


def _histogram(sizes: np.ndarray) -> dict[str, int]:
    values, counts = np.unique(sizes, return_counts=True)
    return {str(int(v)): int(c) for v, c in zip(values, counts)}
