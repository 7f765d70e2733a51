"""k-map against a population table (Sweeney 2002; ARX's KMap with a population given as a data subset): every
published class matches at least k records of the population table, counted on the population generalized by
the same transformation.

The machinery is δ-presence's: the table anonymized is the population, a marker column (``column``, read by
:func:`.distributions.parse_marker`) says which of its records form the research subset (the sample that is
published), and the publishing gate keeps the research subset's rows only. A class of the generalized
population holds ``sizes`` records, ``counts[:, 1]`` of them in the research subset. A class fails when it
holds a research record and fewer than k population records; a class with no research record is never
published, so it never fails.

Monotonic, with and without suppression: a class of a more general transformation is a union of classes of the
less general one; if it holds a research record, one of those classes does, and that class already held at
least k population records, so the union does too. A failing class (a research record, fewer than k population
records) is a union of classes with fewer than k population records each, so each of its research records was
in a failing class already; the budget counts research records (definitions.md, "The unit counted: the
published record"), so what a transformation suppresses never grows under generalization.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import Parameter, SensitiveModel
from .distributions import membership_domain


@dataclass(frozen=True)
class KMapPopulationTable(SensitiveModel):
    """Every class holding a research record holds at least k records of the population table."""

    kmap_table_k: int
    column: str | None = None
    name: ClassVar[str] = "k-map-population-table"
    label: ClassVar[str] = "k-map (population table)"
    monotonic: ClassVar[bool] = True
    monotonic_without_suppression: ClassVar[bool] = True
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("kmap_table_k", int, 5, "smallest number of population-table records a published class matches",
                  minimum=1, label="k of k-map", cli_flag="--kmap-population"),
    )
    group: ClassVar[str | None] = "kmap_table"
    group_label: ClassVar[str] = "k-map (population table)"
    enabled_by: ClassVar[tuple[str, ...]] = ("kmap_table_k",)
    column_source: ClassVar[str | None] = "research"
    column_label: ClassVar[str] = "Research-subset column (1 = in the research subset, 0 = population only)"
    card_label: ClassVar[str] = "smallest population class of a published class"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def domain(self, frame, hierarchies: dict | None = None, numeric: bool | None = None):
        """The research-subset marker as members / non-members (the population records of a class are all its records)."""
        assert self.column is not None
        return membership_domain(frame, self.column)

    def values(self, counts, domain):
        """Population records per class; classes without a research record read as infinitely many (never fail,
        never the smallest)."""
        counts = np.asarray(counts)
        return np.where(counts[:, 1] > 0, counts.sum(axis=1), np.inf)

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        return self.values(counts, domain) < self.kmap_table_k

    def card_value(self, values):
        smallest = float(values.min())
        return None if not np.isfinite(smallest) else int(smallest)

    def infeasible(self, n_records, values, suppression_limit):
        if n_records < self.kmap_table_k:
            return (f"k-map: k={self.kmap_table_k} but the population table holds only {n_records} records: no "
                    f"class can match {self.kmap_table_k} of them")
        return None

    def summary(self) -> str:
        return f"{self.kmap_table_k}-map against the population table"
