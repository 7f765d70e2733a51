"""Synthesizers: the registry and what a synthesizer is.

A synthesizer reads the original table and writes a new table of made-up rows with the same columns: the
differentially private marginal-based methods (MST, AIM) measure noisy marginals and sample rows from a graphical
model fitted to them; the CART baseline draws each column from a decision tree fitted on the earlier columns and
gives no formal privacy guarantee. A synthesizer is one module that calls ``register(Synthesizer(...))`` at
import, plus its import line in engine/synthesis/__init__.py. Forms, the CLI, the API and the docs read
``SYNTHESIZERS``."""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from ..errors import EngineError, InputError
from ..model.hierarchy import Hierarchy
from ..parameters import Parameter

ColumnKind = Literal["categorical", "numeric"]


class SynthesisCancelled(EngineError):
    """The user cancelled the run (the context's cancel check said so between two steps)."""


def _no_progress(fraction: float, phase: str) -> None:
    return None


def _never_cancelled() -> bool:
    return False


MAX_BINS = 10_000


@dataclass(frozen=True)
class NumericBins:
    """Equal-width bins of a numeric column chosen from public bounds, never from the data: [lower, upper) in
    ``count`` bins; values outside are put in the first or last bin (clamped)."""

    lower: float
    upper: float
    count: int = 20

    def __post_init__(self) -> None:
        if not self.upper > self.lower:
            raise InputError(f"bins: the upper bound {self.upper:g} must be above the lower bound {self.lower:g}")
        if not math.isfinite(self.upper - self.lower):  # an infinite bound or width: every bin would be NaN wide
            raise InputError(f"bins: the bounds must be finite numbers less than {sys.float_info.max:g} apart, "
                             f"got {self.lower:g} and {self.upper:g}")
        # each bin gets a label and a cell of every marginal holding the column: a hostile count is a worker's memory
        if isinstance(self.count, bool) or not isinstance(self.count, numbers.Integral) or not 1 <= self.count <= MAX_BINS:
            raise InputError(f"bins: the number of bins must be a whole number from 1 to {MAX_BINS:,}, "
                             f"got {self.count}")


@dataclass
class SynthesisContext:
    """What a synthesizer may read beside the frame."""

    columns: list[str]  # the columns to synthesize (the output has exactly these, in this order)
    kinds: Mapping[str, ColumnKind] = field(default_factory=dict)  # default: categorical
    # public generalization hierarchies: a categorical column's domain is its hierarchy's leaves; a numeric
    # column is discretized to its hierarchy's level-1 groups
    hierarchies: Mapping[str, Hierarchy] = field(default_factory=dict)
    bins: Mapping[str, NumericBins] = field(default_factory=dict)  # a numeric column without a hierarchy
    epsilon: float = 1.0
    delta: float = 1e-9
    seed: int = 0
    progress: Callable[[float, str], None] = _no_progress  # (fraction 0..1, phase text)
    cancelled: Callable[[], bool] = _never_cancelled  # checked between steps; True stops the run
    # tests only: draw the DP noise from this numpy generator instead of OpenDP's samplers (which cannot be
    # seeded), so a test can reproduce a run exactly. None (always in the product): OpenDP draws the noise.
    test_noise_rng: Any = None

    def kind(self, column: str) -> ColumnKind:
        return self.kinds.get(column, "categorical")

    def check_cancelled(self) -> None:
        if self.cancelled():
            raise SynthesisCancelled("synthesis cancelled")


@dataclass
class SynthesisOutcome:
    """A synthesizer's result, JSON-serialisable apart from the frame."""

    frame: pd.DataFrame  # the synthetic rows: the context's columns, values as text like the input's
    # the privacy budget split: {"unit": "rho (zCDP)", "total": ..., "parts": [{"step": ..., "rho": ...}], ...}
    budget: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)  # as applied (ε, δ, ρ, seed, iterations, ...)
    figures: dict[str, Any] = field(default_factory=dict)  # what the method reports (cliques chosen, rounds...)
    guarantee: str = ""  # in words for the release report; "" for no formal guarantee


@dataclass(frozen=True)
class Synthesizer:
    """A synthesizer as every part of the product reads it."""

    name: str  # the registry key, CLI value and API value: "mst", "aim", "cart"
    label: str
    summary: str  # one sentence for the form's help
    dp: bool  # True: (ε, δ)-differential privacy for each person's record; False: no formal privacy guarantee
    synthesize: Callable[[pd.DataFrame, SynthesisContext, Mapping[str, Any]], SynthesisOutcome]
    parameters: tuple[Parameter, ...] = ()
    reference: str = ""

    def run(self, frame: pd.DataFrame, context: SynthesisContext,
            options: Mapping[str, Any] | None = None) -> SynthesisOutcome:
        """Validate the options against the parameters (defaults filled in) and synthesize."""
        given = dict(options or {})
        unknown = sorted(set(given) - {p.name for p in self.parameters})
        if unknown:
            raise InputError(f"{self.name}: unknown parameter {unknown[0]!r}")
        values = {p.name: p.validate(given.get(p.name, p.default)) for p in self.parameters}
        missing = [c for c in context.columns if c not in frame.columns]
        if missing:
            raise InputError(f"the table has no column {', '.join(map(repr, missing))}")
        if not context.columns:
            raise InputError("choose at least one column to synthesize")
        if len(frame) == 0:
            raise InputError("the table has no rows")
        if self.dp:
            if not context.epsilon > 0:
                raise InputError(f"epsilon must be above 0, got {context.epsilon!r}")
            if not 0 < context.delta < 1:
                raise InputError(f"delta must be above 0 and below 1, got {context.delta!r}")
        return self.synthesize(frame, context, values)


SYNTHESIZERS: dict[str, Synthesizer] = {}

NO_GUARANTEE = "no formal privacy guarantee"


def register(synthesizer: Synthesizer) -> Synthesizer:
    SYNTHESIZERS[synthesizer.name] = synthesizer
    return synthesizer


def get_synthesizer(name: str) -> Synthesizer:
    try:
        return SYNTHESIZERS[name]
    except KeyError:
        raise InputError(f"unknown synthesizer {name!r}; choose one of {', '.join(sorted(SYNTHESIZERS))}") from None
