"""β-likeness (basic and enhanced): a bound on the relative gain of an attacker's belief in every
sensitive value. A linear bound per value: a merge of classes that all hold it holds it, so it is
monotonic without suppression, not with suppression.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import EPS, Parameter, SensitiveModel, shares


@dataclass(frozen=True)
class BetaLikeness(SensitiveModel):
    """basic: (q_i - p_i)/p_i <= β for every value with q_i > p_i; enhanced: q_i <= (1 + min(β, -ln p_i))·p_i
    (q_i: share in the class, p_i: share in the table)."""

    beta: float
    variant: str = "enhanced"
    column: str | None = None
    name: ClassVar[str] = "beta-likeness"
    label: ClassVar[str] = "β-likeness"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("beta", float, 1.0, "largest relative gain of an attacker's belief in a sensitive value",
                  minimum=0.0, label="β", above=0.0),
        Parameter("variant", str, "enhanced", "basic or enhanced β-likeness", choices=("basic", "enhanced"),
                  cli_flag="--beta-variant"),
    )
    group: ClassVar[str | None] = "beta"
    group_label: ClassVar[str] = "β-likeness"
    enabled_by: ClassVar[tuple[str, ...]] = ("beta",)
    card_label: ClassVar[str] = "largest relative gain"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def bounds(self, domain) -> np.ndarray:
        p = domain.table_distribution
        if self.variant == "basic":
            return (1 + self.beta) * p
        with np.errstate(divide="ignore"):
            gain = np.minimum(self.beta, -np.log(np.where(p > 0, p, 1.0)))
        return (1 + gain) * p

    def values(self, counts, domain):
        """Largest relative gain (q_i - p_i)/p_i per class."""
        p = domain.table_distribution
        q = shares(counts)
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.where(p > 0, (q - p[None, :]) / np.where(p > 0, p, 1.0), 0.0)
        return gain.max(axis=1) if gain.shape[1] else np.zeros(len(q))

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        q = shares(counts)
        return (q > self.bounds(domain)[None, :] + EPS).any(axis=1)

    def card_value(self, values):
        return float(values.max())

    def summary(self) -> str:
        return f"{self.variant} {self.beta:g}-likeness{self._where()}"
