"""Privacy models: one small class each, checked on the equivalence classes of non-suppressed records.

``classes_failing(sizes, counts=None, domain=None)`` returns, per equivalence class, whether the
class violates the model; the records of failing classes are what an algorithm has to suppress or
generalize further. Attribute-disclosure models (``column`` set, ``needs_sensitive`` true) also get
``counts``, the classes x sensitive-values count matrix of their column, and ``domain``, the
:class:`~.distributions.SensitiveDomain` of that column (table distribution, value order, hierarchy).
The formulas are those of docs/definitions.md; the table distribution is taken over all N input
records (as ARX does), so it does not move with suppression.

Monotonicity (what lattice searches may use for predictive tagging): ``monotonic`` means monotonic
under generalization *with* suppression, ``monotonic_without_suppression`` under generalization when
no record may be suppressed. k-anonymity and distinct l-diversity are both (a class merged with any
other keeps >= k records / >= l values, so the records in failing classes can only shrink). Entropy
and recursive l-diversity, t-closeness (the three EMDs are convex in the class distribution),
β-likeness (a linear bound per value) and δ-presence (a merged ratio lies between its parts) hold for
a merge of classes that all hold them, so they are monotonic without suppression; with suppression
a passing class merged with a failing one may fail, so they are not (ARX decides the same way).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from .errors import InputError


@dataclass(frozen=True)
class Parameter:
    """A model or algorithm parameter as forms and CLI flags show it."""

    name: str
    kind: type
    default: object
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None  # for kind=str: the allowed values

    @property
    def flag(self) -> str:
        """The CLI flag: `--memory-mb` for the parameter `memory mb` or `memory_mb`."""
        return "--" + self.name.replace(" ", "-").replace("_", "-")

    def validate(self, value: object) -> object:
        if self.choices is not None:
            if str(value) not in self.choices:
                raise InputError(f"{self.name} must be one of {', '.join(self.choices)}, got {value!r}")
            return str(value)
        try:
            if self.kind is int and isinstance(value, float) and not value.is_integer():
                raise ValueError
            v = self.kind(value)
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"{self.name} must be {'an integer' if self.kind is int else 'a number'}, "
                             f"got {value!r}") from None
        if self.minimum is not None and v < self.minimum:
            raise InputError(f"{self.name} must be at least {self.minimum:g}, got {v!r}")
        if self.maximum is not None and v > self.maximum:
            raise InputError(f"{self.name} must be at most {self.maximum:g}, got {v!r}")
        return v


class PrivacyModel:
    name: ClassVar[str]
    label: ClassVar[str]
    monotonic: ClassVar[bool] = True  # under generalization with suppression
    monotonic_without_suppression: ClassVar[bool] = True
    needs_sensitive: ClassVar[bool] = False
    parameters: ClassVar[tuple[Parameter, ...]] = ()
    column: str | None = None

    def classes_failing(self, sizes: np.ndarray, counts: np.ndarray | None = None, domain=None) -> np.ndarray:
        raise NotImplementedError

    def holds(self, sizes: np.ndarray, counts: np.ndarray | None = None, domain=None) -> bool:
        return not bool(self.classes_failing(sizes, counts, domain).any())

    def is_monotonic(self, budget: int) -> bool:
        """May a lattice search tag predictively with this suppression budget (records)?"""
        return self.monotonic if budget > 0 else self.monotonic_without_suppression

    def describe(self) -> str:
        raise NotImplementedError

    def to_dict(self) -> dict:
        raise NotImplementedError


@dataclass(frozen=True)
class KAnonymity(PrivacyModel):
    """Every equivalence class holds at least k records."""

    k: int
    name: ClassVar[str] = "k-anonymity"
    label: ClassVar[str] = "k-anonymity"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("k", int, 2, "smallest number of records that may share one QI combination", minimum=1),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", self.parameters[0].validate(self.k))

    def classes_failing(self, sizes: np.ndarray, counts: np.ndarray | None = None, domain=None) -> np.ndarray:
        return np.asarray(sizes) < self.k

    def describe(self) -> str:
        return f"{self.k}-anonymity"

    def to_dict(self) -> dict:
        return {"model": self.name, "k": self.k}


_EPS = 1e-9


def _shares(counts: np.ndarray) -> np.ndarray:
    sizes = counts.sum(axis=1, keepdims=True)
    return counts / np.maximum(sizes, 1)


class _Sensitive(PrivacyModel):
    """A model on the sensitive values of each class (its column; None = the run's sensitive column)."""

    needs_sensitive: ClassVar[bool] = True
    monotonic: ClassVar[bool] = False

    def _need(self, counts, domain) -> None:
        if counts is None or domain is None:
            raise ValueError(f"{self.describe()} needs the sensitive values of every class")

    def bind(self, column: str) -> "PrivacyModel":
        return self if self.column is not None else replace(self, column=column)

    def _where(self) -> str:
        return f" on {self.column}" if self.column else ""

    def values(self, counts: np.ndarray, domain) -> np.ndarray:
        """The model's figure per class (distinct values, entropy, EMD, ...)."""
        raise NotImplementedError


@dataclass(frozen=True)
class DistinctLDiversity(_Sensitive):
    """Every class holds at least l distinct sensitive values."""

    l: int  # noqa: E741
    column: str | None = None
    name: ClassVar[str] = "distinct-l-diversity"
    label: ClassVar[str] = "distinct l-diversity"
    monotonic: ClassVar[bool] = True
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("l", int, 2, "distinct sensitive values every class must hold", minimum=1),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "l", self.parameters[0].validate(self.l))

    def values(self, counts, domain):
        return (counts > 0).sum(axis=1)

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        return self.values(counts, domain) < self.l

    def describe(self) -> str:
        return f"distinct {self.l}-diversity{self._where()}"

    def to_dict(self) -> dict:
        return {"model": self.name, "l": self.l, "column": self.column}


@dataclass(frozen=True)
class EntropyLDiversity(_Sensitive):
    """-Σ p ln p >= ln l in every class."""

    l: float  # noqa: E741
    column: str | None = None
    name: ClassVar[str] = "entropy-l-diversity"
    label: ClassVar[str] = "entropy l-diversity"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("l", float, 2.0, "the entropy of every class's sensitive values must be at least ln l",
                  minimum=1.0),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "l", self.parameters[0].validate(self.l))

    def values(self, counts, domain):
        p = _shares(counts)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
        return terms.sum(axis=1)

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        return self.values(counts, domain) < math.log(self.l) - _EPS

    def describe(self) -> str:
        return f"entropy {self.l:g}-diversity{self._where()}"

    def to_dict(self) -> dict:
        return {"model": self.name, "l": self.l, "column": self.column}


@dataclass(frozen=True)
class RecursiveCLDiversity(_Sensitive):
    """With counts r1 >= r2 >= ... >= rm in a class: r1 < c·(r_l + ... + r_m)."""

    c: float
    l: int  # noqa: E741
    column: str | None = None
    name: ClassVar[str] = "recursive-cl-diversity"
    label: ClassVar[str] = "recursive (c,l)-diversity"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("c", float, 3.0, "the most frequent value must occur fewer than c times the l-th and "
                  "rarer ones together", minimum=0.0),
        Parameter("l", int, 2, "l of recursive (c,l)-diversity", minimum=1),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "c", self.parameters[0].validate(self.c))
        object.__setattr__(self, "l", self.parameters[1].validate(self.l))

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

    def describe(self) -> str:
        return f"recursive ({self.c:g},{self.l})-diversity{self._where()}"

    def to_dict(self) -> dict:
        return {"model": self.name, "c": self.c, "l": self.l, "column": self.column}


def emd_equal(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """½ Σ |p_i - q_i| per row of p."""
    return 0.5 * np.abs(p - q[None, :]).sum(axis=1)


def emd_ordered(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(1/(m-1)) Σ_i |Σ_{j<=i} (p_j - q_j)| per row of p (values in their order)."""
    m = p.shape[1]
    if m <= 1:
        return np.zeros(len(p))
    return np.abs(np.cumsum(p - q[None, :], axis=1)).sum(axis=1) / (m - 1)


def emd_hierarchical(p: np.ndarray, q: np.ndarray, hierarchy, leaf_of_value: np.ndarray) -> np.ndarray:
    """Li, Li & Venkatasubramanian 2007: Σ over inner nodes N of height(N)/H · min(pos_extra, neg_extra),
    extra(C) = Σ_{leaves under C} (p - q); values absent from the table weigh 0."""
    H = hierarchy.height
    if H == 0:
        return np.zeros(len(p))
    d = p - q[None, :]
    total = np.zeros(len(p))
    for lv in range(1, H + 1):
        child = hierarchy.maps[lv - 1][leaf_of_value]
        parent_of_child = np.zeros(len(hierarchy.labels[lv - 1]), dtype=np.int64)
        parent_of_child[child] = hierarchy.maps[lv][leaf_of_value]
        n_child, n_parent = len(hierarchy.labels[lv - 1]), len(hierarchy.labels[lv])
        extra = np.zeros((len(p), n_child))
        np.add.at(extra.T, child, d.T)
        pos = np.zeros((len(p), n_parent))
        neg = np.zeros((len(p), n_parent))
        np.add.at(pos.T, parent_of_child, np.maximum(extra, 0).T)
        np.add.at(neg.T, parent_of_child, np.maximum(-extra, 0).T)
        total += (lv / H) * np.minimum(pos, neg).sum(axis=1)
    return total


@dataclass(frozen=True)
class TCloseness(_Sensitive):
    """The EMD between every class's sensitive distribution and the table's is at most t."""

    t: float
    distance: str = "equal"
    column: str | None = None
    name: ClassVar[str] = "t-closeness"
    label: ClassVar[str] = "t-closeness"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("t", float, 0.2, "largest Earth Mover's Distance from the table's distribution", minimum=0.0,
                  maximum=1.0),
        Parameter("distance", str, "equal", "ground distance: equal, ordered (numeric values) or hierarchical "
                  "(the sensitive column's hierarchy)", choices=("equal", "ordered", "hierarchical")),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "t", self.parameters[0].validate(self.t))
        object.__setattr__(self, "distance", self.parameters[1].validate(self.distance))

    def values(self, counts, domain):
        p, q = _shares(counts), domain.table_distribution
        if self.distance == "equal":
            return emd_equal(p, q)
        if self.distance == "ordered":
            if not domain.numeric:
                raise InputError(f"ordered distance needs a numeric sensitive column; {domain.column!r} is not")
            return emd_ordered(p, q)
        if domain.hierarchy is None:
            raise InputError(f"hierarchical distance needs a hierarchy for {domain.column!r}")
        return emd_hierarchical(p, q, domain.hierarchy, domain.leaf_of_value)

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        return self.values(counts, domain) > self.t + _EPS

    def describe(self) -> str:
        return f"{self.t:g}-closeness ({self.distance} distance){self._where()}"

    def to_dict(self) -> dict:
        return {"model": self.name, "t": self.t, "distance": self.distance, "column": self.column}


@dataclass(frozen=True)
class BetaLikeness(_Sensitive):
    """basic: (q_i - p_i)/p_i <= β for every value with q_i > p_i; enhanced: q_i <= (1 + min(β, -ln p_i))·p_i
    (q_i: share in the class, p_i: share in the table)."""

    beta: float
    variant: str = "enhanced"
    column: str | None = None
    name: ClassVar[str] = "beta-likeness"
    label: ClassVar[str] = "β-likeness"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("beta", float, 1.0, "largest relative gain of an attacker's belief in a sensitive value",
                  minimum=0.0),
        Parameter("variant", str, "enhanced", "basic or enhanced β-likeness", choices=("basic", "enhanced")),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", self.parameters[0].validate(self.beta))
        object.__setattr__(self, "variant", self.parameters[1].validate(self.variant))

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
        q = _shares(counts)
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.where(p > 0, (q - p[None, :]) / np.where(p > 0, p, 1.0), 0.0)
        return gain.max(axis=1) if gain.shape[1] else np.zeros(len(q))

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        q = _shares(counts)
        return (q > self.bounds(domain)[None, :] + _EPS).any(axis=1)

    def describe(self) -> str:
        return f"{self.variant} {self.beta:g}-likeness{self._where()}"

    def to_dict(self) -> dict:
        return {"model": self.name, "beta": self.beta, "variant": self.variant, "column": self.column}


@dataclass(frozen=True)
class DeltaPresence(_Sensitive):
    """δ_min <= P(t ∈ T | T*) <= δ_max for every population record t: the table anonymized is the
    population, ``column`` marks the research subset T; in each class P = research records / records."""

    delta_min: float
    delta_max: float
    column: str | None = None
    name: ClassVar[str] = "delta-presence"
    label: ClassVar[str] = "δ-presence"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter("delta_min", float, 0.0, "smallest probability that a population record is in the research "
                  "subset", minimum=0.0, maximum=1.0),
        Parameter("delta_max", float, 1.0, "largest probability that a population record is in the research "
                  "subset", minimum=0.0, maximum=1.0),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta_min", self.parameters[0].validate(self.delta_min))
        object.__setattr__(self, "delta_max", self.parameters[1].validate(self.delta_max))
        if self.delta_min > self.delta_max:
            raise InputError(f"delta_min {self.delta_min:g} is above delta_max {self.delta_max:g}")

    def values(self, counts, domain):
        return counts[:, 1] / np.maximum(counts.sum(axis=1), 1)

    def classes_failing(self, sizes, counts=None, domain=None):
        self._need(counts, domain)
        p = self.values(counts, domain)
        return (p < self.delta_min - _EPS) | (p > self.delta_max + _EPS)

    def describe(self) -> str:
        return f"({self.delta_min:g},{self.delta_max:g})-presence{self._where()}"

    def to_dict(self) -> dict:
        return {"model": self.name, "delta_min": self.delta_min, "delta_max": self.delta_max,
                "column": self.column}


PRIVACY_MODELS: dict[str, type[PrivacyModel]] = {
    m.name: m for m in (KAnonymity, DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity, TCloseness,
                        BetaLikeness, DeltaPresence)
}
SENSITIVE_MODELS = tuple(n for n, m in PRIVACY_MODELS.items() if m.needs_sensitive)


def make_model(name: str, **params) -> PrivacyModel:
    """A model from its registry name and parameters (forms, CLI)."""
    try:
        cls = PRIVACY_MODELS[name]
    except KeyError:
        raise InputError(f"unknown privacy model {name!r}; available: {', '.join(PRIVACY_MODELS)}") from None
    return cls(**params)
