"""Noise addition to numeric variables, as sdcMicro's ``addNoise`` (R/addNoise.r) defines its methods.

- ``additive``: each variable j gets independent normal noise of standard deviation
  ``noise/100 * sd(x_j)`` (sd: the sample standard deviation, n - 1, of the non-missing values); the
  variables are drawn one after the other, n draws each, in column order.
- ``correlated``: the noise is multivariate normal with covariance ``noise/100 * Cov(x)`` (Cov: the sample
  covariance of the complete rows), so the published covariance is ``(1 + noise/100) Cov(x)`` in
  expectation and the correlations are kept.
- ``correlated2`` (Kim 1986, Brand 2002): ``x_j * d + delta * e_j`` with ``d = sqrt(1 - delta^2)`` and
  ``e_j`` normal with mean ``(1 - d)/delta * mean(x_j)`` and sd ``sd(x_j)``: the means and variances are kept
  in expectation.

A missing cell stays missing (sdcMicro adds noise to NA and keeps NA). Noise gives no k guarantee: its
parameters, the interval-disclosure risk left (sdcMicro's dRisk) and the information lost (IL1s, IL1, eigenvalue
loss, IL_correl) are reported instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..measure.risk.sdc_numeric import d_risk
from ..model.missing import missing_mask
from ..parameters import Parameter
from .base import SdcContext, SdcMethod, SdcOutcome, register
from .microaggregation_loss import utility_figures

NOISE_METHODS = ("additive", "correlated", "correlated2")
# a covariance eigenvalue below this share of the largest counts as 0 (MASS::mvrnorm's tolerance)
EIGEN_TOLERANCE = 1e-6

Normals = Callable[[int], np.ndarray]  # n standard normal draws


def numeric_matrix(frame: pd.DataFrame, variables: Sequence[str]) -> np.ndarray:
    """The variables as floats (missing cells NaN); a value that is not a number is refused by name."""
    columns = []
    for variable in variables:
        column = frame[variable]
        missing = missing_mask(column)
        numbers = pd.to_numeric(column.where(~missing), errors="coerce")
        bad = numbers.isna() & ~missing & column.notna()
        if bad.any():
            at = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"noise addition: {variable!r} is not numeric (row {at + 1} holds "
                             f"{column.iloc[at]!r})")
        columns.append(numbers.to_numpy(dtype=float))
    return np.column_stack(columns) if columns else np.empty((len(frame), 0))


def additive(x: np.ndarray, noise: float, normals: Normals) -> tuple[np.ndarray, dict[str, Any]]:
    """x_j + N(0, (noise/100 sd_j)^2), column by column."""
    sds = np.array([np.nanstd(x[:, j], ddof=1) for j in range(x.shape[1])])
    out = x.copy()
    for j in range(x.shape[1]):
        out[:, j] = x[:, j] + normals(len(x)) * (noise / 100.0 * sds[j])
    return out, {"noise sd": (noise / 100.0 * sds).tolist()}


def correlated(x: np.ndarray, noise: float, normals: Normals) -> tuple[np.ndarray, dict[str, Any]]:
    """x + N(0, noise/100 Cov(complete rows of x)), drawn as Z diag(sqrt(eigenvalues)) V' (as MASS::mvrnorm)."""
    if x.shape[1] < 2:
        raise InputError("noise addition 'correlated' needs at least 2 numeric variables")
    complete = x[~np.isnan(x).any(axis=1)]
    if len(complete) < 2:
        raise InputError("noise addition 'correlated' needs at least 2 rows without a missing value")
    sigma = noise / 100.0 * np.cov(complete, rowvar=False, ddof=1)
    values, vectors = np.linalg.eigh(sigma)
    if values.min() < -EIGEN_TOLERANCE * abs(values.max()):
        raise InputError("noise addition 'correlated': the covariance matrix is not positive semi-definite")
    z = normals(len(x) * x.shape[1]).reshape(x.shape[1], len(x)).T
    draws = z @ (vectors * np.sqrt(np.clip(values, 0.0, None))).T
    return x + draws, {"noise covariance": sigma.tolist()}


def correlated2(x: np.ndarray, delta: float, normals: Normals) -> tuple[np.ndarray, dict[str, Any]]:
    """x_j d + delta N((1 - d)/delta mean_j, sd_j^2) with d = sqrt(1 - delta^2), column by column."""
    d = np.sqrt(1.0 - delta ** 2)
    means = np.nanmean(x, axis=0)
    sds = np.array([np.nanstd(x[:, j], ddof=1) for j in range(x.shape[1])])
    out = x.copy()
    for j in range(x.shape[1]):
        out[:, j] = x[:, j] * d + delta * ((1.0 - d) / delta * means[j] + sds[j] * normals(len(x)))
    return out, {"d": float(d), "noise mean": ((1.0 - d) / delta * means).tolist(), "noise sd": sds.tolist()}


def add_noise(frame: pd.DataFrame, variables: Sequence[str], *, method: str = "additive", noise: float = 150.0,
              delta: float = 0.1, seed: int = 0, normals: Normals | None = None) -> SdcOutcome:
    """Noise addition to ``variables`` by ``method``; the draws come from default_rng(seed) unless ``normals``
    (a source of standard normal draws) is given."""
    if method not in NOISE_METHODS:
        raise InputError(f"noise addition: method must be one of {', '.join(NOISE_METHODS)}, got {method!r}")
    if not variables:
        raise InputError("noise addition needs at least one numeric variable")
    absent = [v for v in variables if v not in frame.columns]
    if absent:
        raise InputError(f"noise addition: no column named {', '.join(map(repr, absent))}")
    if method == "correlated2" and not 0.0 < delta < 1.0:
        raise InputError(f"noise addition 'correlated2': delta must be between 0 and 1 (exclusive), got {delta:g}")
    if method != "correlated2" and noise < 0:
        raise InputError(f"noise addition: noise (in % of the standard deviation) must be 0 or more, got {noise:g}")
    draw = normals if normals is not None else np.random.default_rng(seed).standard_normal
    x = numeric_matrix(frame, variables)
    if method == "additive":
        xm, reported = additive(x, noise, draw)
    elif method == "correlated":
        xm, reported = correlated(x, noise, draw)
    else:
        xm, reported = correlated2(x, delta, draw)
    out = frame.copy()
    changed = {}
    for j, variable in enumerate(variables):
        out[variable] = _written(frame[variable], xm[:, j])
        changed[variable] = int((~np.isnan(x[:, j]) & (xm[:, j] != x[:, j])).sum())
    parameters: dict[str, Any] = {"variables": list(variables), "method": method, "seed": seed}
    if method == "correlated2":
        parameters["delta"] = delta
    else:
        parameters["noise"] = noise
    parameters.update(reported)
    # the disclosure risk left (sdcMicro's dRisk) and the information lost (dUtility; IL_correl from 2 variables)
    figures: dict[str, Any] = {"dRisk": d_risk(x, xm), **utility_figures(x, xm)}
    if x.shape[1] >= 2:
        figures["IL_correl"] = il_correl(x, xm)
    return SdcOutcome(out, figures=figures, changed_cells=changed, parameters=parameters)


def _written(original: pd.Series, values: np.ndarray) -> pd.Series:
    """A numeric column stays numeric; a text column gets the numbers as shortest round-trip text (pyarrow's
    formatting: whole numbers without ``.0``; 3x faster than repr per cell) and its missing cells back as they
    were."""
    if pd.api.types.is_numeric_dtype(original.dtype):
        return pd.Series(values, index=original.index)
    import pyarrow as pa  # the text path only
    import pyarrow.compute as pc

    text = pc.cast(pa.array(values, from_pandas=True), pa.string()).to_numpy(zero_copy_only=False).astype(object)
    missing = np.isnan(values)
    text[missing] = original.to_numpy(dtype=object)[missing]
    return pd.Series(text, index=original.index, dtype=object)


def il_correl(x: np.ndarray, xm: np.ndarray) -> float:
    """sdcMicro's IL_correl (R/dUtility.R): the distance between the normalized diagonals of the inverse
    correlation matrices of the complete rows of the original and of the perturbed data, divided by sqrt 2."""
    def diagonal(m: np.ndarray) -> np.ndarray:
        complete = m[~np.isnan(m).any(axis=1)]
        d = np.diag(np.linalg.inv(np.corrcoef(complete, rowvar=False)))
        return d / np.linalg.norm(d)
    return float(np.sqrt(np.sum((diagonal(x) - diagonal(xm)) ** 2)) / np.sqrt(2.0))


PARAMETERS = (
    Parameter("variables", str, None, "the numeric variables, comma-separated (default: the numeric key "
              "variables)"),
    Parameter("method", str, "additive", "additive (independent noise per variable), correlated (noise with "
              "the data's covariance) or correlated2 (means and variances kept)", choices=NOISE_METHODS),
    Parameter("noise", float, 150.0, "noise in % of each variable's standard deviation (additive) or of the "
              "covariance (correlated)", minimum=0.0),
    Parameter("delta", float, 0.1, "the noise's weight for correlated2 (between 0 and 1)", above=0.0,
              maximum=0.999999),
)


def apply(frame: pd.DataFrame, context: SdcContext, options: Mapping[str, Any]) -> SdcOutcome:
    text = options.get("variables")
    variables = ([p.strip() for p in str(text).split(",") if p.strip()] if text
                 else list(context.numeric_variables))
    values = {p.name: p.validate(options[p.name]) for p in PARAMETERS[1:] if options.get(p.name) is not None}
    context.progress(0.0, "adding noise")
    outcome = add_noise(frame, variables, method=values.get("method", "additive"),
                        noise=values.get("noise", 150.0), delta=values.get("delta", 0.1), seed=context.seed)
    context.progress(1.0, "noise added")
    return outcome


register(SdcMethod(
    name="noise",
    label="Noise addition",
    kind="perturbation",
    summary="Adds random normal noise to numeric variables (additive, correlated or correlated2, as sdcMicro's "
            "addNoise); no k guarantee: the noise parameters and IL_correl are reported.",
    apply=apply,
    parameters=PARAMETERS,
    guarantee="",
    acts_on="numeric",
    reference="Brand (2002), Microdata protection through noise addition; sdcMicro addNoise()",
))
