"""k-anonymity: every equivalence class holds at least k records.

Monotonic with and without suppression: a class merged with any other keeps >= k records, so the
records in failing classes can only shrink under generalization. Offered by the run's own k (the
form's k field, the CLI's --k), not as a group beside k.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import Parameter, PrivacyModel


@dataclass(frozen=True)
class KAnonymity(PrivacyModel):
    """Every equivalence class holds at least k records."""

    k: int
    name: ClassVar[str] = "k-anonymity"
    label: ClassVar[str] = "k-anonymity"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("k", int, 2, "smallest number of records that may share one QI combination", minimum=1),
    )
    card_label: ClassVar[str] = "smallest EC"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def classes_failing(self, sizes: np.ndarray, counts: np.ndarray | None = None, domain=None) -> np.ndarray:
        return np.asarray(sizes) < self.k

    def card(self, sizes, counts=None, domain=None) -> dict:
        sizes = np.asarray(sizes)
        return {"value": int(sizes.min()) if len(sizes) else 0, "value_label": self.card_label}

    def summary(self) -> str:
        return f"{self.k}-anonymity"

    def infeasible(self, n_records, values, suppression_limit):
        if self.k > n_records:
            return f"k={self.k} is larger than the table's {n_records} records"
        return None
