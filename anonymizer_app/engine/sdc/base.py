"""Statistical disclosure control methods (sdcMicro's family): the registry and what a method is.

A method changes cells, not whole columns: local suppression and microaggregation are *recoding* methods (they
give a guarantee the publishing gate re-checks from the published rows: k-anonymity with a missing cell matching
any value, group sizes of at least k); PRAM, noise addition, top/bottom coding and rank swapping are
*perturbation* methods (no k guarantee: their parameters and disclosure-risk figures are reported instead).

A method is one module that calls ``register(SdcMethod(...))`` at import, plus its import line in
engine/sdc/__init__.py. Forms, the CLI, the API, policies and the docs read ``METHODS``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from ..errors import InputError
from ..parameters import Parameter

MethodKind = Literal["recoding", "perturbation"]


def _no_progress(fraction: float, phase: str) -> None:
    return None


@dataclass
class SdcContext:
    """What a method may read beside the frame: the columns' roles as the user marked them, and the run's seed."""

    key_variables: list[str]  # the categorical key (quasi-identifying) variables
    numeric_variables: list[str] = field(default_factory=list)  # numeric key variables (microaggregation, noise)
    weight: str | None = None  # a sampling-weight column (risk with weights), if marked
    household: str | None = None  # a household/cluster column, if marked
    sensitive: list[str] = field(default_factory=list)
    seed: int = 0  # every random method draws from numpy.random.default_rng(seed); the seed is reported
    progress: Callable[[float, str], None] = _no_progress  # (fraction 0..1, phase text)


@dataclass
class SdcOutcome:
    """A method's result: the changed frame (same index and columns as the input) and what it reports."""

    frame: pd.DataFrame
    # figures for the result cards and the report, JSON-serialisable: {"suppressed cells": 12, "IL1s": 0.31, ...}
    figures: dict[str, Any] = field(default_factory=dict)
    changed_cells: dict[str, int] = field(default_factory=dict)  # per column: cells whose value changed
    # the method's parameters as applied (a PRAM transition matrix, a noise level, a seed), JSON-serialisable
    parameters: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)  # anything else JSON-serialisable for the report


@dataclass(frozen=True)
class SdcMethod:
    """A method as every part of the product reads it."""

    name: str  # the registry key, CLI value and API value: "local_suppression", "mdav", "pram", ...
    label: str  # in words, for forms and pages
    kind: MethodKind
    summary: str  # one sentence for the form's help
    apply: Callable[[pd.DataFrame, SdcContext, Mapping[str, Any]], SdcOutcome]
    parameters: tuple[Parameter, ...] = ()
    # the guarantee the gate re-checks from the published rows: "k-anonymity" (missing matches any value),
    # "group size" (microaggregated groups of at least k), or "" (a perturbation: none, said on the result page)
    guarantee: str = ""
    # which columns it changes: "key" (categorical key variables), "numeric" (numeric variables), "chosen"
    # (the columns named in its parameters)
    acts_on: str = "key"
    reference: str = ""  # the paper or sdcMicro function it follows
    # the method's own recount of its guarantee from the published rows (published frame, its outcome, the run's
    # context) -> {"holds": bool, ...figures}; None: the gate recounts the guarantee itself (engine/run/sdc.py:
    # k-anonymity with a missing cell matching any value; group size = identical published value vectors)
    check_published: Callable[[pd.DataFrame, SdcOutcome, SdcContext], dict[str, Any]] | None = None


METHODS: dict[str, SdcMethod] = {}


def register(method: SdcMethod) -> SdcMethod:
    METHODS[method.name] = method
    return method


def get_method(name: str) -> SdcMethod:
    try:
        return METHODS[name]
    except KeyError:
        raise InputError(f"unknown SDC method {name!r}; choose one of {', '.join(sorted(METHODS))}") from None
