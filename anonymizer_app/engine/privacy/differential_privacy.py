"""(ε,δ)-differential privacy by SafePub (Bild, Kuhn & Prasser, PoPETs 2018): sampling every record with
probability β, then a full-domain generalization drawn by the exponential mechanism, in which every class
of fewer than k records is suppressed (β and k derived from ε, δ: engine/safepub/parameters.py).

Only the ``safepub`` algorithm honours the model (``algorithms``): any other way of choosing the published
node (another algorithm, the solution lattice's "keep this node", a comparison) picks it by looking at the
data's utility outside the privacy budget. The model's check on the classes is the k of the guarantee
(classes below k fail); the publishing gate checks the rest (the sample, the suppression rule, classes over
every published column: engine/safepub/publication.py).

Monotonic with and without suppression, as a bound on class sizes (k-anonymity's argument), though no
search but SafePub's walk ever uses this model.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np

from ..safepub.parameters import derive
from .base import Parameter, PrivacyModel

NAME = "differential-privacy"


@dataclass(frozen=True)
class EDDifferentialPrivacy(PrivacyModel):
    """(ε,δ)-DP by SafePub: published classes hold at least the derived k records of the β-sample."""

    epsilon: float
    delta: float = 1e-6
    search_share: float = 0.1
    name: ClassVar[str] = NAME
    label: ClassVar[str] = "(ε,δ)-differential privacy (SafePub)"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("epsilon", float, 1.0, "the privacy budget ε of the whole release (0.01..10; smaller is "
                  "more private)", minimum=0.01, maximum=10.0, label="ε", cli_flag="--epsilon"),
        Parameter("delta", float, 1e-6, "δ, the probability that the ε guarantee fails (1e-10..0.1; keep it "
                  "well below 1/records)", minimum=1e-10, maximum=0.1, label="δ", cli_flag="--delta"),
        Parameter("search_share", float, 0.1, "the share of ε spent choosing the generalization by the "
                  "exponential mechanism; the rest pays for sampling and suppression (0.01..0.9)",
                  minimum=0.01, maximum=0.9, label="Search share of ε", cli_flag="--dp-search-share"),
    )
    group: ClassVar[str | None] = "dp"
    group_label: ClassVar[str] = "(ε,δ)-differential privacy (SafePub only)"
    enabled_by: ClassVar[tuple[str, ...]] = ("epsilon",)
    card_label: ClassVar[str] = "smallest published class (k of the guarantee)"
    differential_privacy: ClassVar[bool] = True
    algorithms: ClassVar[tuple[str, ...]] = ("safepub",)  # the only algorithms that may honour the model

    def __post_init__(self) -> None:
        self._validate_parameters()

    @cached_property
    def derived(self):
        """ε_anon, ε_search, β, k (engine.safepub.parameters.SafePubParameters)."""
        return derive(self.epsilon, self.delta, self.search_share)

    @property
    def k(self) -> int:
        """The smallest class the guarantee allows."""
        return int(self.derived.k)

    def classes_failing(self, sizes, counts=None, domain=None):
        return np.asarray(sizes) < self.k

    def card(self, sizes, counts=None, domain=None) -> dict:
        sizes = np.asarray(sizes)
        return {"value": int(sizes.min()) if len(sizes) else None, "value_label": self.card_label}

    def summary(self) -> str:
        p = self.derived
        return (f"({self.epsilon:g}, {self.delta:g})-differential privacy by SafePub "
                f"(sampling β={p.beta:.4f}, k={p.k})")

    def refuse(self, algorithm_label: str) -> str:
        """Why an algorithm other than SafePub may not publish under this model."""
        return (f"{algorithm_label} cannot honour (ε,δ)-differential privacy: only SafePub can, because it draws "
                f"the published generalization by the exponential mechanism within the privacy budget; choosing "
                f"a node any other way (another algorithm, the solution lattice, keeping another node, a "
                f"comparison) looks at the data's utility outside the budget, which spends privacy the "
                f"guarantee does not account for")

    def infeasible(self, n_records, values, suppression_limit):
        p = self.derived
        if n_records * p.beta < p.k:
            return (f"(ε,δ)-differential privacy: SafePub's sample holds about {n_records * p.beta:.0f} of the "
                    f"{n_records} records (β={p.beta:.4f}), fewer than k={p.k}, so every record would be "
                    f"suppressed; raise ε or δ")
        return None
