"""δ-presence: δ_min <= P(t ∈ T | T*) <= δ_max for every record t of a public population table.

The table anonymized is the population; a marker column (``column``) says which of its records form
the research subset T, read by :func:`parse_marker`, the one parser of marker values (the engine's
domain, the publishing gate, the CLI's --research-column).

δ-presence alone counts the population (definitions.md, "The unit counted: the published record"); the
suppression budget counts research records, so a class without a research record that fails (P = 0 < δmin)
is left out at no cost. Monotonicity: a merged class's ratio lies between its parts', so with δmin = 0 (a
class without a research record never fails) δ-presence is monotonic without suppression. With δmin > 0 it is
not: a passing class (1 research record of 2) merged with a failing class left out for free (0 of 2) makes a
failing class of 1 of 4 that costs a research record; nor with suppression (a failing class's research
records grow under generalization). Lattice searches then check every node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import InputError
from .base import EPS, Parameter, SensitiveModel
from .distributions import MARKER_IN, MARKER_OUT, membership_domain, parse_marker  # noqa: F401  (re-exported)


@dataclass(frozen=True)
class DeltaPresence(SensitiveModel):
    """δ_min <= P(t ∈ T | T*) <= δ_max for every population record t: the table anonymized is the
    population, ``column`` marks the research subset T; in each class P = research records / records."""

    delta_min: float
    delta_max: float
    column: str | None = None
    name: ClassVar[str] = "delta-presence"
    label: ClassVar[str] = "δ-presence"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("delta_min", float, 0.0, "smallest probability that a population record is in the research "
                  "subset", minimum=0.0, maximum=1.0, label="δmin"),
        Parameter("delta_max", float, 1.0, "largest probability that a population record is in the research "
                  "subset", minimum=0.0, maximum=1.0, label="δmax"),
    )
    group: ClassVar[str | None] = "delta"
    group_label: ClassVar[str] = "δ-presence"
    enabled_by: ClassVar[tuple[str, ...]] = ("delta_min", "delta_max")
    column_source: ClassVar[str | None] = "research"
    column_label: ClassVar[str] = "Research-subset column (1 = in the research subset, 0 = population only)"
    card_label: ClassVar[str] = "presence range"

    def domain(self, frame, hierarchies: dict | None = None, numeric: bool | None = None):
        """The research-subset marker as members / non-members."""
        assert self.column is not None
        return membership_domain(frame, self.column)

    def __post_init__(self) -> None:
        self._validate_parameters()
        if self.delta_min > self.delta_max:
            raise InputError(f"delta_min {self.delta_min:g} is above delta_max {self.delta_max:g}")

    def values(self, counts, domain):
        return counts[:, 1] / np.maximum(counts.sum(axis=1), 1)

    def infeasible(self, n_records, values, suppression_limit):
        """With no suppression the classes split the whole population, so the research share of the whole
        population is a weighted mean of the classes' shares: outside [δmin, δmax] no class layout helps."""
        if values is None or suppression_limit > 0 or not len(values):
            return None
        share = float(parse_marker(values, self.column or "").mean())
        if share < self.delta_min - EPS or share > self.delta_max + EPS:
            return (f"delta_min={self.delta_min:g} and delta_max={self.delta_max:g} but {share:.3g} of the "
                    f"population is in the research subset (column {self.column!r}): with no suppression no "
                    f"table can be ({self.delta_min:g},{self.delta_max:g})-present")
        return None

    def is_monotonic(self, budget: int) -> bool:
        return budget == 0 and self.delta_min <= 0

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        p = self.values(counts, domain)
        return (p < self.delta_min - EPS) | (p > self.delta_max + EPS)

    def card_value(self, values):
        return [float(values.min()), float(values.max())]

    def summary(self) -> str:
        return f"({self.delta_min:g},{self.delta_max:g})-presence{self._where()}"
