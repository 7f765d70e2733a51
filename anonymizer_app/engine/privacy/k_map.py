"""k-map (Sweeney; El Emam & Dankar 2008) with an estimated population: every published class stands for
at least k people of the population the table was sampled from. The population is given by its sampling
fraction π (records / population); a class of f records is taken to stand for max(f, f / π) people, the
expected population class size under sampling with fraction π, as engine.risk.population estimates
journalist risk (ARX offers a Poisson-based estimate instead; ours is the plain expectation, said in
docs/definitions.md). A class fails when max(f, f / π) < k, i.e. f < k·π (f < k when π = 1): a bound on
class sizes alone, so monotonic with and without suppression, like k-anonymity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import _EPS, Parameter, PrivacyModel


@dataclass(frozen=True)
class KMap(PrivacyModel):
    """max(f, f / π) >= k for every published class of f records."""

    kmap_k: int
    sampling_fraction: float = 0.01
    name: ClassVar[str] = "k-map"
    label: ClassVar[str] = "k-map (estimated population)"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("kmap_k", int, 5, "smallest estimated number of people of the population a class stands for",
                  minimum=1, label="k of k-map", cli_flag="--kmap"),
        Parameter("sampling_fraction", float, 0.01, "records / population: the share of the population the "
                  "table holds", maximum=1.0, above=0.0, label="Sampling fraction π",
                  cli_flag="--kmap-sampling-fraction"),
    )
    group: ClassVar[str | None] = "kmap"
    group_label: ClassVar[str] = "k-map (estimated population)"
    enabled_by: ClassVar[tuple[str, ...]] = ("kmap_k",)
    card_label: ClassVar[str] = "smallest estimated population class"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def population_sizes(self, sizes: np.ndarray) -> np.ndarray:
        sizes = np.asarray(sizes, dtype=float)
        return np.maximum(sizes, sizes / self.sampling_fraction)

    def classes_failing(self, sizes, counts=None, domain=None):
        return self.population_sizes(sizes) < self.kmap_k - _EPS

    def card(self, sizes, counts=None, domain=None) -> dict:
        sizes = np.asarray(sizes)
        value = float(self.population_sizes(sizes).min()) if len(sizes) else None
        return {"value": value, "value_label": self.card_label}

    def summary(self) -> str:
        return f"{self.kmap_k}-map at π={self.sampling_fraction:g}"

    def infeasible(self, n_records, values, suppression_limit):
        if max(n_records, n_records / self.sampling_fraction) < self.kmap_k - _EPS:
            return (f"k-map: k={self.kmap_k} but the whole table of {n_records} records stands for about "
                    f"{n_records / self.sampling_fraction:.4g} people at sampling fraction {self.sampling_fraction:g}")
        return None
