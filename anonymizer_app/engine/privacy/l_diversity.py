"""l-diversity: distinct, entropy and recursive (c,l), one group ("l") with a variant each.

Distinct l-diversity is monotonic with and without suppression (a class merged with any other keeps
>= l values). Entropy and recursive l-diversity hold for a merge of classes that all hold them, so they
are monotonic without suppression; with suppression a passing class merged with a failing one may
fail, so they are not (ARX decides the same way).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import EPS, Parameter, SensitiveModel, shares


class _LDiversity(SensitiveModel):
    group: ClassVar[str | None] = "l"
    group_label: ClassVar[str] = "l-diversity"
    enabled_by: ClassVar[tuple[str, ...]] = ("l",)
    l: float  # noqa: E741 - each variant's dataclass field (int for distinct and recursive)

    def infeasible(self, n_records, values, suppression_limit):
        """A class holds at most the column's distinct values: l above their number is out of reach (for
        every variant: distinct needs l values, entropy ln l <= ln m, recursive an l-th value)."""
        if values is None:
            return None
        distinct = int(values.nunique(dropna=False))
        l = self.l  # noqa: E741
        if l <= distinct:
            return None
        shown = f"{l:g}" if isinstance(l, float) else str(l)
        target = {"entropy": f"entropy {shown}-diverse",
                  "recursive": f"recursive ({getattr(self, 'c', 0):g},{shown})-diverse"}.get(self.variant_name,
                                                                                     f"{shown}-diverse")
        return (f"l={shown} but column {self.column!r} has only {distinct} distinct value"
                f"{'s' if distinct != 1 else ''}: no table can be {target}")


@dataclass(frozen=True)
class DistinctLDiversity(_LDiversity):
    """Every class holds at least l distinct sensitive values."""

    l: int  # noqa: E741
    column: str | None = None
    name: ClassVar[str] = "distinct-l-diversity"
    label: ClassVar[str] = "distinct l-diversity"
    monotonic: ClassVar[bool] = True
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("l", int, 2, "distinct sensitive values every class must hold", minimum=1, label="l"),
    )
    variant_name: ClassVar[str] = "distinct"
    card_label: ClassVar[str] = "fewest distinct values in an EC"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def values(self, counts, domain):
        return (counts > 0).sum(axis=1)

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        return self.values(counts, domain) < self.l

    def card_value(self, values):
        return int(values.min())

    def summary(self) -> str:
        return f"distinct {self.l}-diversity{self._where()}"


@dataclass(frozen=True)
class EntropyLDiversity(_LDiversity):
    """-Σ p ln p >= ln l in every class."""

    l: float  # noqa: E741
    column: str | None = None
    name: ClassVar[str] = "entropy-l-diversity"
    label: ClassVar[str] = "entropy l-diversity"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("l", float, 2.0, "the entropy of every class's sensitive values must be at least ln l",
                  minimum=1.0, label="l"),
    )
    variant_name: ClassVar[str] = "entropy"
    card_label: ClassVar[str] = "exp(lowest EC entropy)"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def values(self, counts, domain):
        p = shares(counts)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
        return terms.sum(axis=1)

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        return self.values(counts, domain) < math.log(self.l) - EPS

    def card_value(self, values):
        return float(math.exp(values.min()))

    def infeasible(self, n_records, values, suppression_limit):
        """Besides l above the distinct values: with no suppression the classes split the whole table, and
        the smallest class entropy is at most the table's (entropy is concave)."""
        found = super().infeasible(n_records, values, suppression_limit)
        if found or values is None or suppression_limit > 0 or not len(values):
            return found
        shares = values.value_counts(normalize=True, dropna=False).to_numpy(dtype=float)
        entropy = float(-(shares * np.log(shares)).sum())
        if entropy < math.log(self.l) - EPS:
            return (f"l={self.l:g} but the sensitive values of column {self.column!r} have an entropy of "
                    f"ln {math.exp(entropy):.3g} over the whole table: with no suppression no table can be "
                    f"entropy {self.l:g}-diverse")
        return None

    def summary(self) -> str:
        return f"entropy {self.l:g}-diversity{self._where()}"


@dataclass(frozen=True)
class RecursiveCLDiversity(_LDiversity):
    """With counts r1 >= r2 >= ... >= rm in a class: r1 < c·(r_l + ... + r_m)."""

    c: float
    l: int  # noqa: E741
    column: str | None = None
    name: ClassVar[str] = "recursive-cl-diversity"
    label: ClassVar[str] = "recursive (c,l)-diversity"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("c", float, 3.0, "the most frequent value must occur fewer than c times the l-th and "
                  "rarer ones together", minimum=0.0, label="c", above=0.0),
        Parameter("l", int, 2, "l of recursive (c,l)-diversity", minimum=1, label="l"),
    )
    variant_name: ClassVar[str] = "recursive"
    card_label: ClassVar[str] = "largest r1 / (r_l + ... + r_m)"

    def __post_init__(self) -> None:
        self._validate_parameters()

    def values(self, counts, domain):
        """r1 / (r_l + ... + r_m) per class (inf when the tail is empty)."""
        r = -np.sort(-counts, axis=1)
        tail = r[:, self.l - 1:].sum(axis=1) if r.shape[1] >= self.l else np.zeros(len(r))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(tail > 0, r[:, 0] / np.where(tail > 0, tail, 1), np.inf) if r.shape[1] else \
                np.full(len(r), np.inf)

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        r = -np.sort(-counts, axis=1)
        if r.shape[1] < self.l:
            return np.ones(len(r), dtype=bool)
        tail = r[:, self.l - 1:].sum(axis=1)
        return ~(r[:, 0] < self.c * tail)

    def card_value(self, values):
        """The largest ratio; None when a class has an empty tail (the ratio is unbounded)."""
        finite = values[np.isfinite(values)]
        return float(finite.max()) if len(finite) == len(values) else None

    def summary(self) -> str:
        return f"recursive ({self.c:g},{self.l})-diversity{self._where()}"
