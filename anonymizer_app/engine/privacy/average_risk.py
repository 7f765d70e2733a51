"""Average re-identification risk threshold (ARX's "average risk"): the average prosecutor risk of the
published records, classes / records (each record's risk is 1 / its class's size), is at most a threshold.

A property of the whole release, not of one class. ``classes_failing`` names the classes to leave out so
that it holds: the smallest first, as few as needed. Leaving out a smallest class never raises the
average (its size is at most the mean size, so (C - 1) / (n - s) <= C / n), so any superset of those
smallest classes (k-anonymity's failing classes, say) still satisfies it. Classes given with size 0 are
already left out by another model (``algorithms.base.Problem.failing`` passes them so: ``whole_table``).
Merging classes lowers C with n fixed, so the model is monotonic without suppression; with suppression
the classes left out change from node to node and it is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import EPS, Parameter, PrivacyModel


def average_risk(sizes: np.ndarray) -> float:
    """classes / records over the classes of positive size (0 for none)."""
    sizes = np.asarray(sizes)
    kept = sizes[sizes > 0]
    return float(len(kept) / kept.sum()) if len(kept) else 0.0


@dataclass(frozen=True)
class AverageRisk(PrivacyModel):
    """Average prosecutor risk (classes / records over the published records) <= threshold."""

    average_risk: float
    name: ClassVar[str] = "average-risk"
    label: ClassVar[str] = "average re-identification risk"
    monotonic: ClassVar[bool] = False
    monotonic_without_suppression: ClassVar[bool] = True
    whole_table: ClassVar[bool] = True
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("average_risk", float, 0.05, "largest average prosecutor risk of the published records "
                  "(classes / records)", minimum=0.0, maximum=1.0, above=0.0, label="Average risk at most"),
    )
    group: ClassVar[str | None] = "avgrisk"
    group_label: ClassVar[str] = "average re-identification risk threshold"
    enabled_by: ClassVar[tuple[str, ...]] = ("average_risk",)
    card_label: ClassVar[str] = "average prosecutor risk"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def classes_failing(self, sizes, counts=None, domain=None):
        sizes = np.asarray(sizes)
        failing = np.zeros(len(sizes), dtype=bool)
        order = np.flatnonzero(sizes > 0)
        order = order[np.argsort(sizes[order], kind="stable")]  # smallest first
        # after leaving out the first i: (C - i) / (n - sum of the i smallest); the first i where it holds
        left = len(order) - np.arange(len(order) + 1)
        records = sizes[order].sum() - np.concatenate(([0], np.cumsum(sizes[order])))
        with np.errstate(divide="ignore", invalid="ignore"):
            risk = np.where(records > 0, left / np.maximum(records, 1), 0.0)
        i = int(np.argmax(risk <= self.average_risk + EPS))
        failing[order[:i]] = True
        return failing

    def card(self, sizes, counts=None, domain=None) -> dict:
        return {"value": average_risk(sizes), "value_label": self.card_label}

    def summary(self) -> str:
        return f"average risk ≤ {self.average_risk:g}"

    def infeasible(self, n_records, values, suppression_limit):
        # with no suppression the best is one class: risk 1 / n
        if suppression_limit <= 0 and n_records and 1 / n_records > self.average_risk + EPS:
            return (f"average risk {self.average_risk:g} is below 1/{n_records}, the risk of the table's "
                    f"{n_records} records in a single class")
        return None
