"""δ-disclosure privacy (Brickell & Shmatikov, KDD 2008): in every class, for every sensitive value v,
|ln(p_class(v) / p_table(v))| < δ. Taken over the values present in the class, as ARX does (a value
absent from a class gives ln 0 = -∞, which would forbid every class that lacks a value); the table
distribution is over all N input records. A merge of classes can dilute a value present in one part
only below p_table(v)·e^-δ, so the model is not monotonic, with or without suppression.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import EPS, Parameter, SensitiveModel, shares


@dataclass(frozen=True)
class DeltaDisclosure(SensitiveModel):
    """max over present values of |ln(q_v / p_v)| < δ in every class."""

    delta: float
    column: str | None = None
    name: ClassVar[str] = "delta-disclosure"
    label: ClassVar[str] = "δ-disclosure privacy"
    monotonic_without_suppression: ClassVar[bool] = False
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("delta", float, 1.5, "bound on |ln(share in a class / share in the table)| of every "
                  "sensitive value", minimum=0.0, above=0.0, label="δ", cli_flag="--delta-disclosure"),
    )
    group: ClassVar[str | None] = "ddisclosure"
    group_label: ClassVar[str] = "δ-disclosure privacy"
    enabled_by: ClassVar[tuple[str, ...]] = ("delta",)
    card_label: ClassVar[str] = "largest |ln(q/p)|"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def values(self, counts, domain):
        """Per class, the largest |ln(q_v / p_v)| over the values present in it."""
        p = np.asarray(domain.table_distribution, dtype=float)
        q = shares(counts)
        present = counts > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.abs(np.log(np.where(present, q, 1.0) / np.where(present, p[None, :], 1.0)))
        ratio = np.where(present, ratio, 0.0)
        return ratio.max(axis=1) if ratio.shape[1] else np.zeros(len(q))

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        return self.values(counts, domain) >= self.delta - EPS

    def card_value(self, values):
        return float(values.max())

    def summary(self) -> str:
        return f"{self.delta:g}-disclosure privacy{self._where()}"
