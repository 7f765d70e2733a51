"""Top and bottom coding of numeric variables (sdcMicro's ``topBotCoding``, R/topBotCoding.R).

Top coding replaces every value strictly above a limit by a replacement value; bottom coding every value strictly
below it. Missing cells stay missing. It is a perturbation: no k guarantee, the number of coded cells and the
information loss (sdcMicro's dUtility figures) are reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..parameters import Parameter
from .base import SdcContext, SdcMethod, SdcOutcome, register
from .microaggregation import numeric_values, write_back
from .microaggregation_loss import utility_figures

KINDS = ("top", "bottom")


def top_bottom_code(values: np.ndarray, limit: float, replacement: float, kind: str = "top") -> np.ndarray:
    """x[x > limit] = replacement (top) or x[x < limit] = replacement (bottom); NaN stays NaN."""
    if kind not in KINDS:
        raise InputError(f"kind must be top or bottom, got {kind!r}")
    out = values.astype(float, copy=True)
    with np.errstate(invalid="ignore"):
        coded = out > limit if kind == "top" else out < limit
    out[coded] = replacement
    return out


def top_bottom_coding(frame: pd.DataFrame, variables: Sequence[str], *, limit: float, replacement: float,
                      kind: str = "top") -> SdcOutcome:
    x = numeric_values(frame, variables)
    xm = np.column_stack([top_bottom_code(x[:, j], limit, replacement, kind) for j in range(x.shape[1])])
    out = frame.copy()
    changed: dict[str, int] = {}
    coded: dict[str, int] = {}
    for j, v in enumerate(variables):
        out[v] = write_back(frame[v], xm[:, j])
        with np.errstate(invalid="ignore"):
            hit = x[:, j] > limit if kind == "top" else x[:, j] < limit
        coded[v] = int(hit.sum())
        changed[v] = int((hit & (x[:, j] != replacement)).sum())
    figures: dict[str, Any] = {"coded cells": sum(coded.values())}
    figures.update(utility_figures(x, xm))
    parameters = {"variables": list(variables), "kind": kind, "limit": limit, "replacement": replacement}
    return SdcOutcome(out, figures=figures, changed_cells=changed, parameters=parameters,
                      details={"coded cells per variable": coded})


PARAMETERS = (
    Parameter("variables", str, None, "the numeric variables, comma-separated (default: the numeric key "
              "variables)"),
    Parameter("kind", str, "top", "top (values above the limit) or bottom (values below it)", choices=KINDS),
    Parameter("limit", float, None, "the limit: values strictly beyond it are replaced"),
    Parameter("replacement", float, None, "the value put in their place (often the limit itself)"),
)


def apply(frame: pd.DataFrame, context: SdcContext, options: Mapping[str, Any]) -> SdcOutcome:
    text = options.get("variables")
    variables = ([p.strip() for p in str(text).split(",") if p.strip()] if text
                 else list(context.numeric_variables))
    values = {p.name: p.validate(options[p.name]) for p in PARAMETERS[1:] if options.get(p.name) is not None}
    for needed in ("limit", "replacement"):
        if needed not in values:
            raise InputError(f"top/bottom coding needs a {needed}")
    context.progress(0.0, "top/bottom coding")
    outcome = top_bottom_coding(frame, variables, limit=values["limit"], replacement=values["replacement"],
                                kind=values.get("kind", "top"))
    context.progress(1.0, "top/bottom coding done")
    return outcome


register(SdcMethod(
    name="top_bottom_coding",
    label="Top/bottom coding",
    kind="perturbation",
    summary="Replaces numeric values above (top) or below (bottom) a limit by a replacement value, as "
            "sdcMicro's topBotCoding; no k guarantee: the coded cells and the information loss are reported.",
    apply=apply,
    parameters=PARAMETERS,
    guarantee="",
    acts_on="numeric",
    reference="sdcMicro topBotCoding()",
))
