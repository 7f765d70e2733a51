"""(α,k)-anonymity (Wong, Li, Fu & Wang, KDD 2006): every class holds at least k records and in every
class each sensitive value's relative frequency is at most α (the general form: every value, not one
chosen value). Both are bounds a merge of two classes that satisfy them still satisfies, so the model is
monotonic without suppression; with suppression (as β-likeness and l-diversity here) it is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import EPS, Parameter, SensitiveModel, shares


@dataclass(frozen=True)
class AlphaKAnonymity(SensitiveModel):
    """size >= k and max_v share(v) <= α in every class."""

    alpha: float
    k: int = 2
    column: str | None = None
    name: ClassVar[str] = "alpha-k-anonymity"
    label: ClassVar[str] = "(α,k)-anonymity"
    monotonic_without_suppression: ClassVar[bool] = True
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("alpha", float, 0.5, "largest relative frequency of one sensitive value in a class",
                  minimum=0.0, maximum=1.0, above=0.0, label="α", cli_flag="--ak-alpha"),
        Parameter("k", int, 2, "smallest number of records in a class", minimum=1, cli_flag="--ak-k"),
    )
    group: ClassVar[str | None] = "alphak"
    group_label: ClassVar[str] = "(α,k)-anonymity"
    enabled_by: ClassVar[tuple[str, ...]] = ("alpha",)
    card_label: ClassVar[str] = "largest share of one value"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def values(self, counts, domain):
        return shares(counts).max(axis=1) if counts.shape[1] else np.zeros(len(counts))

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        return (np.asarray(sizes) < self.k) | (self.values(counts, domain) > self.alpha + EPS)

    def card_value(self, values):
        return float(values.max())

    def summary(self) -> str:
        return f"({self.alpha:g},{self.k})-anonymity{self._where()}"

    def infeasible(self, n_records, values, suppression_limit):
        if self.k > n_records:
            return f"(α,k)-anonymity: k={self.k} is larger than the table's {n_records} records"
        if values is None or suppression_limit > 0 or not len(values):
            return None
        # with no suppression the classes split the table: some class holds the most frequent value at
        # least at its share of the whole table
        top = float(values.astype(str).value_counts(normalize=True).iloc[0])
        if top > self.alpha + EPS:
            return (f"α={self.alpha:g} but the most frequent value of {self.column!r} is {top:.3g} of the table: "
                    f"with no suppression some class holds it at least that often")
        return None
