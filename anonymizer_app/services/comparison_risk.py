"""The comparison page's population figures: journalist risk and population uniqueness of the input and of
every run, for a population model chosen on the page (sampling fraction, population size, region preset or a
population table), computed in the request from what the comparison stored and stored nowhere.

Every run stored its published classes' size histogram ({size: classes}, services.comparison.run_risk), which is
all the figures need: a run publishing n of the input's records is a sample of n from the same population of N
people (π = n / N), its class of f records stands for max(f, f / π) people (docs/definitions.md, "Risk
analysis"), and the estimators read the histogram. With a population table the input's classes are counted in
it; a run's published values are generalized, so for the runs the table gives its size N only, as on a
result's risk page. Comparisons stored before the histograms were kept show no figures for their runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine import InputError
from ..engine.measure.risk import Classes, Population, analyze, journalist_risks, population_uniqueness
from ..models import Job
from . import datasets
from .risk import owned_population, population_for

JOURNALIST_FIELDS = ("journalist_risk_highest", "journalist_risk_average", "journalist_records_at_risk")


def sizes_of(histogram: dict) -> np.ndarray:
    """Class sizes from a histogram {size: number of classes} (keys as stored: strings)."""
    if not histogram:
        return np.zeros(0, dtype=np.int64)
    size = np.array([int(s) for s in histogram], dtype=np.int64)
    count = np.array([int(c) for c in histogram.values()], dtype=np.int64)
    return np.repeat(size, count)


def histogram_figures(histogram: dict, population_size: int, threshold: float) -> dict:
    """Journalist risk and population uniqueness of a table of these classes drawn from ``population_size``
    people (π = records / population_size, each class estimated as max(f, f/π) people)."""
    sizes = sizes_of(histogram)
    n = int(sizes.sum())
    if n == 0:
        return {"records": 0, "sampling_fraction": 0.0, "journalist_risk_highest": None,
                "journalist_risk_average": None, "journalist_records_at_risk": None, "population_uniqueness": None}
    pi = n / population_size
    classes = Classes(np.zeros(0, dtype=np.int64), sizes)
    figures = journalist_risks(classes, np.maximum(sizes, sizes / pi).astype(float), threshold)
    hist = {int(s): int(c) for s, c in histogram.items()}
    return {"records": n, "sampling_fraction": pi, **{f: figures[f] for f in JOURNALIST_FIELDS},
            "population_uniqueness": population_uniqueness(hist, population_size, pi)}


def comparison_population_risk(job: Job, report: dict, population: dict, threshold: float) -> dict:
    """The figures of the input ("before") and of every run of a finished comparison (``report``: its stored
    report) for the page's population model (``population``: RiskForm.population_options; a population table
    must be the owner's)."""
    qi = list(report.get("quasi_identifiers") or [])
    if not qi:
        raise InputError("this comparison names no quasi-identifiers")
    options = owned_population(job.dataset, population)
    frame = datasets.load_frame(job.dataset, columns=qi)
    model: Population | None = population_for(len(frame), **options, qi=qi)
    if model is None:
        raise InputError("choose a population model")
    return population_risk(frame, qi, report.get("comparison", []), model, threshold)


def population_risk(frame: pd.DataFrame, qi: list[str], rows: list[dict], model: Population, threshold: float) -> dict:
    """The figures of the input ``frame`` on ``qi`` and of every comparison row (services.comparison.compare) for
    the population ``model`` of the input (the web page and ``manage.py compare``)."""
    before = analyze(frame, qi, threshold=threshold, population=model)
    runs = []
    for row in rows:
        histogram = row.get("class_size_histogram")
        figures = None if row.get("error") or histogram is None else \
            histogram_figures(histogram, model.size, threshold)
        runs.append({"algorithm": row["algorithm"], "k": row["k"], "error": row.get("error", ""),
                     "stored": histogram is not None, "figures": figures})
    return {"population": {"size": model.size, "sampling_fraction": model.sampling_fraction,
                           "source": model.source, "table": model.table is not None},
            "before": {"records": before["records"], "sampling_fraction": model.sampling_fraction,
                       **{f: before[f] for f in JOURNALIST_FIELDS},
                       "population_uniqueness": before["population_uniqueness"],
                       "table_uniques": (before.get("population") or {}).get("uniques")},
            "runs": runs}
