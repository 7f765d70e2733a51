"""Population uniqueness threshold (ARX's "population uniqueness" model): the share of the population
that is unique on the published QIs, estimated by Dankar et al. 2012's rule over the Pitman, Zayatz and
SNB estimators (engine.measure.risk.uniqueness) from the published classes' size frequencies, is at most a
threshold. The population is given by its sampling fraction π: the published records n stand for
N = round(n / π) people.

A property of the whole release: when it fails, every published class fails (the estimators are not
monotone in which classes are left out, so no smaller choice is made); when the chosen estimator does
not converge the release is refused too (no number is no guarantee). Classes given with size 0 are
already left out by another model (``whole_table``). Not monotonic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..measure.risk.uniqueness import population_uniqueness
from .base import EPS, Parameter, PrivacyModel


@dataclass(frozen=True)
class PopulationUniqueness(PrivacyModel):
    """Dankar's estimate of population uniques / N <= threshold on the published classes."""

    uniqueness: float
    sampling_fraction: float = 0.01
    name: ClassVar[str] = "population-uniqueness"
    label: ClassVar[str] = "population uniqueness threshold"
    monotonic: ClassVar[bool] = False
    monotonic_without_suppression: ClassVar[bool] = False
    whole_table: ClassVar[bool] = True
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("uniqueness", float, 0.01, "largest share of the population unique on the published QIs "
                  "(Dankar's estimate)", minimum=0.0, maximum=1.0, label="Population uniqueness at most",
                  cli_flag="--population-uniqueness"),
        Parameter("sampling_fraction", float, 0.01, "records / population: the share of the population the "
                  "table holds", maximum=1.0, above=0.0, label="Sampling fraction π",
                  cli_flag="--uniqueness-sampling-fraction"),
    )
    group: ClassVar[str | None] = "uniqueness"
    group_label: ClassVar[str] = "population uniqueness threshold"
    enabled_by: ClassVar[tuple[str, ...]] = ("uniqueness",)
    card_label: ClassVar[str] = "estimated population uniqueness"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def estimate(self, sizes: np.ndarray) -> dict:
        """Dankar's choice ({"model", "uniques", "share", "converged", "why"}) on the classes of positive size."""
        sizes = np.asarray(sizes)
        kept = sizes[sizes > 0]
        n = int(kept.sum())
        if n == 0:
            return {"model": None, "uniques": 0.0, "share": 0.0, "converged": True, "why": "no records"}
        size, count = np.unique(kept, return_counts=True)
        hist = {int(s): int(c) for s, c in zip(size, count)}
        population = max(n, int(round(n / self.sampling_fraction)))
        return population_uniqueness(hist, population, n / population)["dankar"]

    def classes_failing(self, sizes, counts=None, domain=None):
        sizes = np.asarray(sizes)
        chosen = self.estimate(sizes)
        holds = chosen["converged"] and chosen["share"] is not None and chosen["share"] <= self.uniqueness + EPS
        return np.zeros(len(sizes), dtype=bool) if holds else sizes > 0

    def card(self, sizes, counts=None, domain=None) -> dict:
        chosen = self.estimate(np.asarray(sizes))
        return {"value": chosen["share"] if chosen["converged"] else None, "value_label": self.card_label}

    def summary(self) -> str:
        return f"population uniqueness ≤ {self.uniqueness:g} at π={self.sampling_fraction:g}"
