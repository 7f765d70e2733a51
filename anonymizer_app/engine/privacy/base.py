"""What every privacy model is made of: its parameters, its check, its monotonicity, how the run form and
the command line offer it, its one-line summary and the figure of its card on the result page.

``classes_failing(sizes, counts=None, domain=None)`` returns, per equivalence class, whether the
class violates the model; the records of failing classes are what an algorithm has to suppress or
generalize further. Attribute-disclosure models (``column`` set, ``needs_sensitive`` true) also get
``counts``, the classes x sensitive-values count matrix of their column, and ``domain``, the
:class:`~..distributions.SensitiveDomain` of that column (table distribution, value order, hierarchy).
The formulas are those of docs/definitions.md; the table distribution is taken over all N input
records (as ARX does), so it does not move with suppression.

Monotonicity (what lattice searches may use for predictive tagging): ``monotonic`` means monotonic
under generalization *with* suppression, ``monotonic_without_suppression`` under generalization when
no record may be suppressed. A model's module says why its flags are set as they are.

How a model is offered (read by ``forms.RunForm`` and ``management/model_flags.py``, so that a new
model needs neither): models of one ``group`` share a tick box on the run form (fields named
``model:<group>:<parameter>``) and a family of CLI flags; when a group has several models
(l-diversity) a ``variant`` select / ``--<group>-variant`` flag picks one by its ``variant_name``.
Each parameter's CLI flag is ``Parameter.flag``; the flags of ``enabled_by`` switch the model on.
``column_source`` says which column the model applies to: ``"sensitive"`` (the first --sensitive or
--model-column; a sensitive or insensitive column on the form), ``"research"`` (δ-presence's
research-subset marker) or None (the model needs no column).

Feasibility: ``infeasible(n_records, values, suppression_limit)`` says why no anonymization of the table
can satisfy the model (l above the column's distinct values, ...); ``privacy.check_feasible`` runs it for
every model before a run, from the web app's job creation and from ``manage.py anonymize``, so a new
model brings its own check. Parameters' bounds (``minimum``, ``maximum``, ``above``) are checked when a
model is built.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar, cast

import numpy as np
import pandas as pd

from ..errors import InputError
from ..parameters import Parameter
from .distributions import sensitive_domain

EPS = 1e-9


class PrivacyModel:
    name: ClassVar[str]  # the registry name, stored on jobs ("distinct-l-diversity")
    label: ClassVar[str]  # the name people read ("distinct l-diversity")
    monotonic: ClassVar[bool] = True  # under generalization with suppression
    monotonic_without_suppression: ClassVar[bool] = True
    needs_sensitive: ClassVar[bool] = False
    # A property of the whole release (average risk): ``classes_failing`` gets the classes other models
    # leave out with size 0 (algorithms.base.Problem.failing) and names the further classes to leave out.
    whole_table: ClassVar[bool] = False
    parameters: ClassVar[tuple[Parameter, ...]] = ()
    column: str | None = None

    # -- how the run form and the command line offer the model (see the module's docstring) --------
    group: ClassVar[str | None] = None  # None: not offered beside k (k-anonymity has its own --k / k field)
    group_label: ClassVar[str] = ""  # the group's tick box: "Apply l-diversity"
    variant_name: ClassVar[str] = ""  # the model's name in its group's variant choice ("distinct")
    enabled_by: ClassVar[tuple[str, ...]] = ()  # parameters whose CLI flags switch the model on
    column_source: ClassVar[str | None] = None  # "sensitive", "research" or None
    column_label: ClassVar[str] = "Sensitive column"  # the form's column select

    # -- the card on the result page ------------------------------------------------------------------
    card_label: ClassVar[str] = ""  # what ``card()``'s value is ("smallest EC")

    @property
    def target(self) -> str:
        """The column the model checks (every model on a column has one once bound; api.bind_models)."""
        if self.column is None:
            raise InputError(f"{self.describe()}: choose the column it applies to")
        return self.column

    def bind(self, column: str) -> PrivacyModel:
        """The model on ``column`` when it has none (models on a sensitive column); others unchanged."""
        return self

    def classes_failing(self, sizes: np.ndarray, counts: np.ndarray | None = None, domain=None) -> np.ndarray:
        raise NotImplementedError

    def failing_by_size(self, sizes: np.ndarray, domain=None) -> np.ndarray | None:
        """The classes that fail whatever values they hold, from their sizes alone (a subset of what
        ``classes_failing`` finds): what a search may count before making any class's histogram. ``sizes`` are
        the records the class's histogram would count (its row sums). None: the model cannot tell from sizes
        (k-anonymity's ``classes_failing`` needs nothing else already)."""
        return None

    def holds(self, sizes: np.ndarray, counts: np.ndarray | None = None, domain=None) -> bool:
        return not bool(self.classes_failing(sizes, counts, domain).any())

    def is_monotonic(self, budget: int) -> bool:
        """May a lattice search tag predictively with this suppression budget (records)?"""
        return self.monotonic if budget > 0 else self.monotonic_without_suppression

    def card(self, sizes: np.ndarray, counts: np.ndarray | None = None, domain=None) -> dict:
        """The figure of the model's card on the result page, reached on these classes:
        ``{"value": ..., "value_label": ...}`` (value None when there is nothing to show)."""
        raise NotImplementedError

    def summary(self) -> str:
        """The one-line summary pages show ("distinct 3-diversity on occupation")."""
        raise NotImplementedError

    def describe(self) -> str:
        return self.summary()

    def infeasible(self, n_records: int, values: pd.Series | None, suppression_limit: float) -> str | None:
        """Why no anonymization of a table of ``n_records`` records can satisfy the model, ``values`` being
        its column's values (None for a model without a column); None when one may. Checked before a run
        (the run form, the CLI), so an impossible parameter is named at once, not by a search that fails;
        a model with a bound its data may not allow overrides this."""
        return None

    def to_dict(self) -> dict:
        """The model as stored on a job and in reports: its registry name, parameters and column."""
        out = {"model": self.name, **{p.name: getattr(self, p.name) for p in self.parameters}}
        if self.column_source is not None or self.needs_sensitive:
            out["column"] = self.column
        return out

    def _validate_parameters(self) -> None:
        """Every parameter through its Parameter.validate (called by the dataclasses' __post_init__)."""
        for p in self.parameters:
            object.__setattr__(self, p.name, p.validate(getattr(self, p.name)))


def shares(counts: np.ndarray) -> np.ndarray:
    """Row-normalized counts: each class's distribution over the sensitive values."""
    sizes = counts.sum(axis=1, keepdims=True)
    return counts / np.maximum(sizes, 1)



class SensitiveModel(PrivacyModel):
    """A model on the sensitive values of each class (its column; None = the run's sensitive column)."""

    needs_sensitive: ClassVar[bool] = True
    monotonic: ClassVar[bool] = False
    column_source: ClassVar[str | None] = "sensitive"

    def _need(self, counts, domain) -> None:
        if counts is None or domain is None:
            raise ValueError(f"{self.describe()} needs the sensitive values of every class")

    def bind(self, column: str) -> PrivacyModel:
        if self.column is not None:
            return self
        # every concrete model is a frozen dataclass (the classes below SensitiveModel declare them)
        return replace(cast(Any, self), column=column)

    def _where(self) -> str:
        return f" on {self.column}" if self.column else ""

    def domain(self, frame, hierarchies: dict | None = None, numeric: bool | None = None):
        """The encoding of the model's column the check counts on (distributions.SensitiveDomain): the
        column's values; a model that needs another (a hierarchy, a membership marker) overrides this."""
        assert self.column is not None
        return sensitive_domain(frame, self.column, None, numeric)

    def values(self, counts: np.ndarray, domain) -> np.ndarray:
        """The model's figure per class (distinct values, entropy, EMD, ...)."""
        raise NotImplementedError

    def card_value(self, values: np.ndarray):
        """The card's value from the per-class ``values`` (at least one class)."""
        raise NotImplementedError

    def card(self, sizes, counts=None, domain=None) -> dict:
        values = self.values(counts, domain) if len(sizes) else np.zeros(0)
        if not len(values):
            return {"value": None, "value_label": ""}
        return {"value": self.card_value(np.asarray(values)), "value_label": self.card_label}


@dataclass(frozen=True)
class ModelGroup:
    """The models offered together (one tick box on the run form, one family of CLI flags): the models
    of the registry that declare the same ``group``, in registry order."""

    key: str
    models: tuple[type[PrivacyModel], ...]

    @property
    def label(self) -> str:
        return self.models[0].group_label or self.models[0].label

    @property
    def variants(self) -> dict[str, type[PrivacyModel]]:
        """variant name -> model class (a single model's variant name may be empty)."""
        return {m.variant_name or m.name: m for m in self.models}

    @property
    def has_variants(self) -> bool:
        return len(self.models) > 1

    def variants_using(self, parameter: str) -> list[str]:
        """The variants whose model has ``parameter`` (all of them for a shared one)."""
        return [v for v, m in self.variants.items() if any(p.name == parameter for p in m.parameters)]

    def model_for(self, variant: str | None) -> type[PrivacyModel]:
        """The model of ``variant`` (the first model when it is empty or unknown)."""
        return self.variants.get(variant or "", self.models[0])

    @property
    def parameters(self) -> list[Parameter]:
        """The parameters of the group's models, each name once (a float wins over an int of the same name:
        entropy l-diversity's l is a number, distinct l-diversity's an integer)."""
        params: dict[str, Parameter] = {}
        for m in self.models:
            for p in m.parameters:
                if p.name not in params or (p.kind is float and params[p.name].kind is int):
                    params[p.name] = p
        return list(params.values())

    @property
    def enabled_by(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n for m in self.models for n in m.enabled_by))

    def takers(self, parameter: str) -> list[str]:
        """The variants that take ``parameter``."""
        return [v for v, m in self.variants.items() if any(p.name == parameter for p in m.parameters)]

    @property
    def column_source(self) -> str | None:
        return self.models[0].column_source

    @property
    def column_label(self) -> str:
        return self.models[0].column_label

    def check(self) -> None:
        """A registry mistake is a programming error: say which."""
        if len({m.column_source for m in self.models}) > 1:
            raise TypeError(f"the models of group {self.key!r} apply to different kinds of column")
        if self.has_variants and any(p.name == "variant" for p in self.parameters):
            raise TypeError(f"group {self.key!r} has several models: none may have a parameter named 'variant'")
        if not self.enabled_by or any(n not in {p.name for p in self.parameters} for n in self.enabled_by):
            raise TypeError(f"group {self.key!r}: enabled_by must name parameters of its models")
