"""Differential privacy for counts and randomized response, with OpenDP's mechanisms (no noise sampled here).

dp_counts: the histogram of one column or of a combination of columns over a domain the user declares public
(every cell of it is released, also the empty ones, plus an "(other)" cell for records outside it), with
Laplace noise (continuous, on float counts) or the geometric mechanism (two-sided geometric, i.e. discrete
Laplace, on integer counts), scale b = sensitivity/ε with sensitivity 1 (add/remove-one neighbours change one
cell by 1). The privacy loss is read back from OpenDP's measurement (measurement.map(d_in=1)).

randomized_response: each record keeps its value with probability p = e^ε/(e^ε+K-1), otherwise it gets one
of the K-1 other categories uniformly (OpenDP's make_randomized_response, Warner 1965; the records of one
category drawn in one call through OpenDP's composition, see draw_responses), and the distribution
is estimated without bias as π_j = (q_j - r)/(p - r), r = (1-p)/(K-1), q_j the perturbed share of j.

The histogram's noisy counts are then post-processed (engine/dp_postprocess.py: none, round, round and clamp
at 0, or consistent totals), which spends no ε; the release is the post-processed counts.

OpenDP draws from the operating system's CSPRNG and cannot be seeded: releases are not reproducible, and the
tests check the distributions statistically. Formulas and citations: docs/definitions.md, "Differential
privacy".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import product

import numpy as np
import opendp.prelude as dp
import pandas as pd

from . import dp_postprocess
from .errors import InputError

# OpenDP keeps its mechanisms (Laplace, geometric, randomized response, count_by_categories) behind the
# "contrib" flag until their proofs are vetted; enabling it is the library's documented opt-in.
dp.enable_features("contrib")

MECHANISMS = ("laplace", "geometric")
OTHER = "(other)"
MAX_CELLS = 100_000  # cells of a released histogram (the product of the columns' domains)
DEFAULT_BINS = 10
# ε outside this range breaks the mechanisms rather than giving a weak or strong release: below it the
# geometric noise saturates at OpenDP's 32-bit integers; above it e^ε/(e^ε+K-1) rounds to 1 (no randomization).
MIN_EPSILON, MAX_EPSILON = 0.001, 20.0
SEPARATOR = " | "


@dataclass
class CountsRelease:
    columns: list[str]
    mechanism: str
    epsilon: float
    scale: float
    epsilon_spent: float  # OpenDP's measurement.map(d_in=1)
    cells: list[str]  # the labels, in release order; the last is OTHER
    true_counts: list[int]
    noisy_counts: list[float]
    domains: list[list[str]] = field(default_factory=list)  # each column's declared domain
    errors: dict = field(default_factory=dict)  # of the released (post-processed) counts against the truth
    post_processing: str = dp_postprocess.NONE
    released_counts: list = field(default_factory=list)  # noisy_counts post-processed: what is published

    def frame(self) -> pd.DataFrame:
        """The release: one column per counted column (OTHER in each for the outside cell), then noisy_count."""
        rows = [list(combo) for combo in product(*self.domains)] + [[OTHER] * len(self.columns)]
        out = pd.DataFrame(rows, columns=self.columns)
        out["noisy_count"] = self.released_counts or self.noisy_counts
        return out

    def summary(self) -> dict:
        return {"columns": self.columns, "mechanism": self.mechanism, "epsilon": self.epsilon,
                "scale": self.scale, "sensitivity": 1, "epsilon_spent": self.epsilon_spent,
                "post_processing": self.post_processing,
                "cells": [{"cell": c, "true_count": t, "noisy_count": n, "released_count": r}
                          for c, t, n, r in zip(self.cells, self.true_counts, self.noisy_counts,
                                                self.released_counts or self.noisy_counts)],
                "utility_cost": self.errors}


@dataclass
class RandomizedResponseRelease:
    column: str
    epsilon: float
    keep_probability: float
    epsilon_spent: float
    categories: list[str]
    perturbed: pd.Series
    true_counts: list[int]
    perturbed_counts: list[int]
    estimated_counts: list[float]
    errors: dict = field(default_factory=dict)

    def summary(self) -> dict:
        return {"column": self.column, "mechanism": "randomized response", "epsilon": self.epsilon,
                "keep_probability": self.keep_probability, "epsilon_spent": self.epsilon_spent,
                "categories": [{"category": c, "true_count": t, "perturbed_count": p, "estimated_count": e}
                               for c, t, p, e in zip(self.categories, self.true_counts, self.perturbed_counts,
                                                     self.estimated_counts)],
                "utility_cost": self.errors}


def check_epsilon(epsilon: float | str) -> float:
    """ε (a number or its text, as typed) as a float, or an InputError naming the value and the accepted range."""
    message = f"ε must be a number above 0, from {MIN_EPSILON:g} to {MAX_EPSILON:g}, got {epsilon!r}"
    try:
        value = float(epsilon)
    except (TypeError, ValueError):
        raise InputError(message) from None
    if not math.isfinite(value) or not MIN_EPSILON <= value <= MAX_EPSILON:
        raise InputError(message)
    return value


def error_figures(true: list[int] | list[float], estimate: list[int] | list[float]) -> dict:
    """Mean and max absolute error per cell, and the total absolute error over the total true count."""
    t = np.asarray(true, dtype=float)
    e = np.asarray(estimate, dtype=float)
    diff = np.abs(e - t)
    total = float(t.sum())
    return {"mean_absolute_error": float(diff.mean()) if len(diff) else 0.0,
            "max_absolute_error": float(diff.max()) if len(diff) else 0.0,
            "relative_error": float(diff.sum() / total) if total else math.nan}


def _label(value) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _numeric_labels(series: pd.Series, column: str, bounds: tuple[float, float], bins: int) -> tuple[list[str], pd.Series]:
    lo, hi = float(bounds[0]), float(bounds[1])
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise InputError(f"column {column!r}: the bounds must be two numbers, lower below upper, got {bounds!r}")
    if not 1 <= bins <= MAX_CELLS:
        raise InputError(f"column {column!r}: the number of bins must be from 1 to {MAX_CELLS:,}, got {bins}")
    edges = np.linspace(lo, hi, bins + 1)
    labels = [f"[{_fmt(edges[i])}, {_fmt(edges[i + 1])}{']' if i == bins - 1 else ')'}" for i in range(bins)]
    values = pd.to_numeric(series, errors="coerce")
    index = np.searchsorted(edges, values.to_numpy(dtype=float), side="right") - 1
    index = np.where(values.to_numpy(dtype=float) == hi, bins - 1, index)
    inside = (index >= 0) & (index < bins) & values.notna().to_numpy()
    out = pd.Series([labels[i] if ok else OTHER for i, ok in zip(index, inside)], index=series.index)
    return labels, out


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.6g}"


def _column_domain(table: pd.DataFrame, column: str, numeric: bool, bounds: dict, categories: dict,
                   bins: int) -> tuple[list[str], pd.Series]:
    """The column's public domain (declared or, for categories, taken from the data) and each record's cell."""
    series = table[column]
    if column in bounds:
        return _numeric_labels(series, column, bounds[column], bins)
    if column in categories:
        domain = [str(c) for c in categories[column]]
        if not domain:
            raise InputError(f"column {column!r}: the declared categories are empty")
    elif numeric:
        raise InputError(f"column {column!r} is numeric: declare its bounds (lower and upper), "
                         "the domain of a differentially private histogram must not come from the data")
    else:
        domain = sorted({_label(v) for v in series})
    labels = series.map(_label)
    return domain, labels.where(labels.isin(set(domain)), OTHER)


def _check_columns(table: pd.DataFrame, columns: list[str]) -> None:
    if not columns:
        raise InputError("choose at least one column to count")
    for c in columns:
        if c not in table.columns:
            raise InputError(f"unknown column {c!r}; the table has: {', '.join(map(str, table.columns))}")
    if len(set(columns)) != len(columns):
        raise InputError("a column is named twice")


def counts_measurement(cells: list[str], epsilon: float, mechanism: str):
    """count_by_categories (sensitivity 1 under add/remove-one) chained with the noise mechanism, scale 1/ε."""
    if mechanism not in MECHANISMS:
        raise InputError(f"unknown mechanism {mechanism!r}: choose laplace or geometric")
    scale = 1.0 / epsilon
    space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    if mechanism == "laplace":
        count = dp.t.make_count_by_categories(*space, categories=cells, null_category=True, TOA=float)
        return count, count >> dp.m.then_laplace(scale=scale), scale
    count = dp.t.make_count_by_categories(*space, categories=cells, null_category=True)
    return count, count >> dp.m.then_geometric(scale=scale), scale


def dp_counts(table: pd.DataFrame, columns: list[str], epsilon: float, mechanism: str = "laplace", *,
              numeric_columns: set[str] | None = None, bounds: dict | None = None,
              categories: dict | None = None, bins: int = DEFAULT_BINS,
              max_cells: int = MAX_CELLS, post_processing: str = dp_postprocess.NONE) -> CountsRelease:
    """An ε-differentially private histogram of `columns` over their declared domain (see the module doc).

    numeric_columns: those that need bounds {column: (lower, upper)} (cut into `bins` equal bins); other
    columns take `categories` {column: [...]} or their distinct values, which the caller declares public.
    post_processing: one of dp_postprocess.MODES, applied to the noisy counts (free in privacy terms).
    """
    epsilon = check_epsilon(epsilon)
    if mechanism not in MECHANISMS:
        raise InputError(f"unknown mechanism {mechanism!r}: choose laplace or geometric")
    if post_processing not in dp_postprocess.MODES:
        raise InputError(f"unknown post-processing {post_processing!r}: choose one of {', '.join(dp_postprocess.MODES)}")
    _check_columns(table, columns)
    numeric_columns = numeric_columns or set()
    domains, keys = [], []
    for c in columns:
        domain, labels = _column_domain(table, c, c in numeric_columns, bounds or {}, categories or {}, bins)
        domains.append(domain)
        keys.append(labels)
    size = math.prod(len(d) for d in domains)
    if size + 1 > max_cells:
        raise InputError(f"the histogram would have {size + 1:,} cells (the product of the columns' domains and "
                         f"'{OTHER}'), more than {max_cells:,}: choose fewer columns or fewer bins")
    cells = [SEPARATOR.join(combo) for combo in product(*domains)]
    if OTHER in cells:
        raise InputError(f"a category reads {OTHER!r}, the name of the cell for records outside the domain: rename it")
    if len(set(cells)) != len(cells):
        raise InputError(f"two cells read the same once joined with {SEPARATOR!r}: rename the categories")
    if len(columns) == 1:
        record_cells = keys[0]
    else:
        outside = pd.concat([k == OTHER for k in keys], axis=1).any(axis=1)
        joined = keys[0].astype(str)
        for k in keys[1:]:
            joined = joined + SEPARATOR + k.astype(str)
        record_cells = joined.where(~outside, OTHER)
    data = record_cells.astype(str).tolist()
    count, measurement, scale = counts_measurement(cells, epsilon, mechanism)
    true_counts = [int(x) for x in count(data)]
    # the geometric mechanism's counts stay whole numbers
    noisy: list[float] = [int(x) if mechanism == "geometric" else float(x) for x in measurement(data)]
    spent = float(measurement.map(1))
    released = dp_postprocess.post_process(noisy, post_processing)
    return CountsRelease(columns=list(columns), mechanism=mechanism, epsilon=epsilon, scale=scale,
                         epsilon_spent=spent, cells=cells + [OTHER], true_counts=true_counts,
                         noisy_counts=noisy, domains=domains, errors=error_figures(true_counts, released),
                         post_processing=post_processing, released_counts=released)


def is_numeric(series: pd.Series) -> bool:
    """Every non-empty value reads as a number (such a column needs declared bounds)."""
    values = series.dropna().astype(str).str.strip()
    values = values[values != ""]
    return bool(len(values)) and bool(pd.to_numeric(values, errors="coerce").notna().all())


def keep_probability(epsilon: float, k: int) -> float:
    """p = e^ε / (e^ε + K - 1), written to stay finite for a large ε."""
    return 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))


def estimate_distribution(perturbed_counts: list[int], p: float) -> list[float]:
    """Unbiased estimate of the true counts: n·(q_j - r)/(p - r), r = (1-p)/(K-1)."""
    k = len(perturbed_counts)
    n = sum(perturbed_counts)
    r = (1 - p) / (k - 1)
    return [n * ((c / n if n else 0.0) - r) / (p - r) for c in perturbed_counts]


def draw_responses(measurement, labels: pd.Series) -> np.ndarray:
    """One draw of ``measurement`` (OpenDP's randomized response on one value) per record, in record order.

    Invoking the measurement once per record costs one round trip through OpenDP's C interface each (about
    2 s for 30,000 records). The records of one true category all need independent draws of the same
    measurement on the same input, which is what OpenDP's composition of n copies of it computes in one
    invocation (make_composition runs each copy in turn on the input, each drawing afresh): one call per
    category. The composition's own privacy map (n·ε, as if one person answered n times) is not the
    guarantee: each draw is a different record's, and each record's answer is ε-locally private."""
    values = labels.to_numpy(dtype=object)
    out = np.empty(len(values), dtype=object)
    codes, uniques = pd.factorize(values)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
    for code, value in enumerate(uniques):
        rows = order[bounds[code]:bounds[code + 1]]
        composed = dp.c.make_composition([measurement] * len(rows))
        out[rows] = composed(str(value))
    return out


def randomized_response(series: pd.Series, epsilon: float, categories: list[str] | None = None,
                        max_categories: int = MAX_CELLS) -> RandomizedResponseRelease:
    """Each record's value kept with probability e^ε/(e^ε+K-1), else a uniform other category (OpenDP)."""
    epsilon = check_epsilon(epsilon)
    column = str(series.name)
    labels = series.map(_label)
    domain = [str(c) for c in categories] if categories is not None else sorted(set(labels))
    if len(set(domain)) != len(domain):
        raise InputError(f"column {column!r}: a category is declared twice")
    if len(domain) > max_categories:
        raise InputError(f"column {column!r} has {len(domain):,} categories, more than {max_categories:,}: "
                         "randomized response is for a categorical column")
    if len(domain) < 2:
        raise InputError(f"column {column!r}: randomized response needs at least 2 categories, got {len(domain)}")
    unknown = sorted(set(labels) - set(domain))
    if unknown:
        raise InputError(f"column {column!r}: value {unknown[0]!r} is not one of the declared categories")
    p = keep_probability(epsilon, len(domain))
    measurement = dp.m.make_randomized_response(categories=domain, prob=p, T=str)
    perturbed = pd.Series(draw_responses(measurement, labels), index=series.index, name=series.name)
    true_counts = [int(x) for x in labels.value_counts().reindex(domain, fill_value=0)]
    perturbed_counts = [int(x) for x in perturbed.value_counts().reindex(domain, fill_value=0)]
    estimated = estimate_distribution(perturbed_counts, p)
    return RandomizedResponseRelease(
        column=column, epsilon=epsilon, keep_probability=p, epsilon_spent=float(measurement.map(1)),
        categories=domain, perturbed=perturbed, true_counts=true_counts, perturbed_counts=perturbed_counts,
        estimated_counts=estimated, errors={"estimate": error_figures(true_counts, estimated),
                                            "perturbed": error_figures(true_counts, [float(c) for c in perturbed_counts])})
