"""m-invariance (Xiao & Tao 2007; seed 003 §2.6): the privacy model of a sequence of releases.

One release is *m-unique*: every published group holds at least m rows (counterfeits included) and no
sensitive value twice. The sequence is *m-invariant* when, besides, every record keeps the signature (the
set of sensitive values of its group) in every release it appears in. The second condition needs the
history of earlier releases: the m-invariance algorithm (engine/algorithms/m_invariance.py) builds such a
release and the publishing gate checks it against the history (engine/republication/check.py). What this
class checks on the classes is the first condition, the one a single release can be judged by.

Not monotonic: two m-unique groups merged may hold a value twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import Parameter, SensitiveModel


@dataclass(frozen=True)
class MInvariance(SensitiveModel):
    """Every group holds at least m rows with pairwise distinct sensitive values; the signatures of returning
    records are those of their earlier releases (checked against the history by the gate)."""

    m: int
    column: str | None = None
    name: ClassVar[str] = "m-invariance"
    label: ClassVar[str] = "m-invariance"
    monotonic: ClassVar[bool] = False
    monotonic_without_suppression: ClassVar[bool] = False
    # only the re-publication algorithm builds releases against a history
    algorithms: ClassVar[tuple[str, ...]] = ("m-invariance",)
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("m", int, 2, "rows with distinct sensitive values every published group holds, in every release",
                  minimum=1, label="m"),
    )
    card_label: ClassVar[str] = "smallest group (distinct values)"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def values(self, counts, domain):
        return counts.max(axis=1) if counts.shape[1] else np.zeros(len(counts), dtype=np.int64)

    def classes_failing(self, sizes, counts=None, domain=None):
        """``sizes``: the published groups' rows, counterfeits included; ``counts``: the real records'
        values per group (a counterfeit never repeats a real record's value in its group)."""
        self._need(counts, domain)
        sizes = np.asarray(sizes)
        return (sizes < self.m) | (self.values(counts, domain) > 1)

    def card(self, sizes, counts=None, domain=None) -> dict:
        sizes = np.asarray(sizes)
        if not len(sizes):
            return {"value": None, "value_label": ""}
        return {"value": int(sizes.min()), "value_label": self.card_label}

    def infeasible(self, n_records, values, suppression_limit):
        if values is None:
            return None
        distinct = int(values.nunique(dropna=False))
        if self.m <= distinct:
            return None
        return (f"m={self.m} but column {self.column!r} has only {distinct} distinct value"
                f"{'s' if distinct != 1 else ''}: no group can hold {self.m} distinct values")

    def refuse(self, algorithm_label: str) -> str:
        """Why an algorithm other than m-invariance may not publish under this model."""
        return (f"{algorithm_label} cannot honour m-invariance: only the m-invariance algorithm builds a release "
                f"against the history of the earlier ones (signatures kept, counterfeits where a value left)")

    def summary(self) -> str:
        return f"{self.m}-invariance{self._where()}"
