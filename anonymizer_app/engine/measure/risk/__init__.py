"""Risk analysis of a table on chosen quasi-identifiers, before any run or on a result's published rows.

The one entry point of the risk page, the result pages, the comparison page and ``manage.py risk``:
``analyze(frame, qi, ...)`` returns a plain dict (JSON-ready) with the class statistics, the prosecutor,
journalist and marketer risks, the risk bands, distinction and separation of QIs and QI combinations,
identifier suggestions and population uniqueness by every estimator with Dankar's choice.
One concept per module: classes (sample classes and risks), population (the population model and the
journalist risk), uniqueness (the estimators), attributes (distinction, separation, identifiers).
"""

from __future__ import annotations

import pandas as pd

from .attributes import IDENTIFIER_DISTINCTION, attribute_risks, combination_count
from .classes import RISK_BAND_EDGES, Classes, column_codes, sample_risks
from .population import REGIONS, Population, journalist_risks, population_class_sizes, population_model
from .uniqueness import Estimate, dankar, pitman, population_uniqueness, snb, snb_classes, zayatz

DEFAULT_THRESHOLD = 0.2


def analyze(frame: pd.DataFrame, qi: list[str], *, threshold: float = DEFAULT_THRESHOLD,
            population: Population | None = None, combinations: int = 1, combination_limit: int | None = None,
            identifier_distinction: float = IDENTIFIER_DISTINCTION) -> dict:
    """Every risk figure of ``frame`` on the QIs ``qi`` (see the module docstring)."""
    codes = column_codes(frame, qi)
    classes = Classes.of(codes)
    out: dict = {"quasi_identifiers": list(qi), **sample_risks(classes.sizes, threshold)}
    out["attributes"] = attribute_risks(codes, list(qi), combinations, combination_limit, identifier_distinction)
    if population is None:
        out["population"] = None
        return out
    out["population"] = {"size": population.size, "sampling_fraction": population.sampling_fraction,
                         "source": population.source}
    out.update(journalist_risks(classes, population_class_sizes(classes, frame, qi, population), threshold))
    if population.table is not None:
        out["population"]["uniques"] = _table_uniques(population.table, qi)
    out["population_uniqueness"] = population_uniqueness(classes.size_histogram(), population.size,
                                                         population.sampling_fraction)
    return out


def _table_uniques(table: pd.DataFrame, qi: list[str]) -> dict:
    """Population uniques counted in a population table (no estimate needed)."""
    pop = Classes.of(column_codes(table, qi))
    uniques = int((pop.sizes == 1).sum())
    return {"uniques": uniques, "share": uniques / pop.n if pop.n else 0.0}


__all__ = [
    "DEFAULT_THRESHOLD", "IDENTIFIER_DISTINCTION", "REGIONS", "RISK_BAND_EDGES", "Classes", "Estimate",
    "Population", "analyze", "attribute_risks", "column_codes", "combination_count", "dankar",
    "journalist_risks", "pitman", "population_class_sizes", "population_model", "population_uniqueness",
    "sample_risks", "snb", "snb_classes", "zayatz",
]
