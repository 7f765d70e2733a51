"""k-map (Sweeney) with an estimated population, as ARX enforces it (El Emam & Dankar 2008; Pannekoek 1999):
every published class should stand for at least k people of the population the table was sampled from.
Without the population at hand, a class of f sample records is tested against the hypothesis that its
population class holds only k people: such a class shows up in a sample of sampling fraction π with
about Poisson(λ = k·π) records (zero-truncated: a class in the sample holds at least one record). The
*derived k* k' is the smallest sample class size that this hypothesis makes improbable, at the
significance level α; the model then is k'-anonymity, and its *type-I error* (the chance that a class of
k' records still comes from a population class of k people) is reported with it.

The derivation follows ARX 3.9.2 (criteria/KMap.java) step for step, quirks included, so that k' and the
type-I error equal ARX's (tests/engine/test_kmap_estimators_arx.py):
- Poisson: c is the smallest count with P(X <= c) >= 1 - α, X ~ Poisson(λ); k' = c + 2 (ARX returns one more
  than the test's own threshold c + 1: more conservative); type-I error 1 - P(X <= c).
- zero-truncated Poisson: c is the smallest count >= 1 with P(X <= c | X >= 1) >= 1 - α; k' = c + 1;
  type-I error 1 - P(X <= c | X >= 1).
- both: once the count reaches k the search stops with type-I error 0 (a class of k records stands for at
  least k people for sure), and k' is at most k.
ARX also caps k' at the number of records; here a table with fewer records than k' is refused instead
(``infeasible``): one class of all of them would not pass the test.

The plain-expectation rule of earlier versions (a class of f records stands for f / π people) is gone: it
holds for every class once π <= 1/k, i.e. it protected nothing at realistic sampling fractions.
Monotonic with and without suppression, like k-anonymity (k' does not depend on the classes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from .base import Parameter, PrivacyModel

POISSON = "poisson"
ZERO_TRUNCATED_POISSON = "zero-truncated-poisson"
ESTIMATOR_LABELS = {POISSON: "Poisson", ZERO_TRUNCATED_POISSON: "zero-truncated Poisson"}


def _poisson_pmf(c: int, lam: float) -> float:
    """P(X = c) for X ~ Poisson(λ), through logarithms (no overflow for large c or λ)."""
    if c == 0:
        return math.exp(-lam)
    return math.exp(c * math.log(lam) - lam - math.lgamma(c + 1))


def derive_k(k: int, sampling_fraction: float, significance: float, estimator: str) -> tuple[int, float]:
    """(k', type-I error) of k-map with this cell-size estimator, as ARX derives them (see the module)."""
    lam = sampling_fraction * k
    threshold = 1.0 - significance
    if estimator == POISSON:
        counter, value, cdf = 0, 0.0, 0.0
        while value < threshold:
            cdf += _poisson_pmf(counter, lam)
            value = cdf
            counter += 1
            if counter >= k:  # a class of k records stands for at least k people: certain
                value = 1.0
                break
        derived = counter + 1
    elif estimator == ZERO_TRUNCATED_POISSON:
        nonzero = 1.0 - _poisson_pmf(0, lam)
        counter, value = 1, 0.0
        while value < threshold:
            value += _poisson_pmf(counter, lam) / nonzero
            counter += 1
            if counter >= k:
                value = 1.0
                break
        derived = counter
    else:
        raise ValueError(f"unknown cell-size estimator {estimator!r}")
    return min(k, derived), 1.0 - value


@dataclass(frozen=True)
class KMap(PrivacyModel):
    """Every published class holds at least the derived k' records (k-map with an estimated population)."""

    kmap_k: int
    sampling_fraction: float = 0.01
    estimator: str = POISSON
    significance: float = 0.01
    name: ClassVar[str] = "k-map"
    label: ClassVar[str] = "k-map (estimated population)"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("kmap_k", int, 5, "smallest number of people of the population a published class should "
                  "stand for", minimum=1, label="k of k-map", cli_flag="--kmap"),
        Parameter("sampling_fraction", float, 0.01, "records / population: the share of the population the "
                  "table holds (Adult's 30,162 records of the USA's 317,238,626 people: 9.508e-05)",
                  maximum=1.0, above=0.0, label="Sampling fraction π", cli_flag="--kmap-sampling-fraction"),
        Parameter("estimator", str, POISSON, "the model of a population class's records in the sample: "
                  "Poisson or zero-truncated Poisson (El Emam & Dankar 2008, as ARX)",
                  choices=(POISSON, ZERO_TRUNCATED_POISSON), label="Cell-size estimator",
                  cli_flag="--kmap-estimator"),
        Parameter("significance", float, 0.01, "the significance level α of the test: the largest accepted "
                  "chance that a class comes from a population class of fewer than k people",
                  minimum=0.0, maximum=1.0, label="Significance level α", cli_flag="--kmap-significance"),
    )
    group: ClassVar[str | None] = "kmap"
    group_label: ClassVar[str] = "k-map (estimated population)"
    enabled_by: ClassVar[tuple[str, ...]] = ("kmap_k",)
    card_label: ClassVar[str] = "smallest EC"

    def __post_init__(self) -> None:
        self._validate_parameters()

    @cached_property
    def _derived(self) -> tuple[int, float]:
        return derive_k(self.kmap_k, self.sampling_fraction, self.significance, self.estimator)

    @property
    def derived_k(self) -> int:
        """k': the class size the model requires."""
        return self._derived[0]

    @property
    def type1_error(self) -> float:
        """The chance that a class of k' records comes from a population class of k people (ARX's figure)."""
        return self._derived[1]

    def classes_failing(self, sizes, counts=None, domain=None):
        return np.asarray(sizes) < self.derived_k

    def card(self, sizes, counts=None, domain=None) -> dict:
        sizes = np.asarray(sizes)
        return {"value": int(sizes.min()) if len(sizes) else None,
                "value_label": f"smallest EC (derived k = {self.derived_k}, type-I error {self.type1_error:.3g})"}

    def summary(self) -> str:
        return (f"{self.kmap_k}-map at π={self.sampling_fraction:g} ({ESTIMATOR_LABELS[self.estimator]}, "
                f"α={self.significance:g}): derived k = {self.derived_k}, type-I error {self.type1_error:.3g}")

    def infeasible(self, n_records, values, suppression_limit):
        if n_records < self.derived_k:
            return (f"k-map: k={self.kmap_k} at sampling fraction {self.sampling_fraction:g} asks for classes of "
                    f"at least {self.derived_k} records (derived k, {ESTIMATOR_LABELS[self.estimator]}, "
                    f"α={self.significance:g}); the table has {n_records}")
        return None
