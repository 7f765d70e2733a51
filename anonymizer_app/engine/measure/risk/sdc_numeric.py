"""Interval disclosure risk of numeric variables after perturbation, sdcMicro's ``dRisk``.

A record is at risk when every one of its original values lies within ``k`` standard deviations (of the
perturbed variable) of its perturbed value: an intruder who reads the perturbed value knows the original to that
interval. dRisk is the share of such records: 1 for unmodified data, lower the more the perturbation moved the
values (Templ 2017, "Statistical Disclosure Control for Microdata", §4.2; sdcMicro R/dRisk.R, k = 0.05).
A missing value on either side is skipped, as sdcMicro's ``na.rm``. docs/definitions.md, "Risk with sampling
weights".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import InputError

DEFAULT_K = 0.05


def numeric_matrix(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """rows x columns float64; a cell that is no number is NaN (missing)."""
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise InputError(f"no column {', '.join(map(repr, absent))} in the table")
    return np.column_stack([pd.to_numeric(frame[c].astype(object).astype(str).str.strip(), errors="coerce")
                            .to_numpy(dtype=float) for c in columns]) if columns else np.zeros((len(frame), 0))


def interval_disclosure(original: np.ndarray, perturbed: np.ndarray, k: float = DEFAULT_K) -> np.ndarray:
    """True for every record whose original values all lie in [perturbed ± k·sd(perturbed)]."""
    original = np.asarray(original, dtype=float)
    perturbed = np.asarray(perturbed, dtype=float)
    if original.shape != perturbed.shape:
        raise InputError(f"the original has {original.shape} values and the perturbed data {perturbed.shape}")
    if k < 0:
        raise InputError(f"k must be 0 or more, got {k}")
    if original.ndim == 1:
        original, perturbed = original[:, None], perturbed[:, None]
    sds = pd.DataFrame(perturbed).std(ddof=1).to_numpy()  # R's sd, missing values left out
    low, high = perturbed - k * sds, perturbed + k * sds
    with np.errstate(invalid="ignore"):
        outside = (original < low) | (original > high)  # a comparison with NaN is False: skipped
    return np.asarray(~outside.any(axis=1), dtype=bool)


def d_risk(original: np.ndarray, perturbed: np.ndarray, k: float = DEFAULT_K) -> float:
    """sdcMicro's dRisk: the share of records at interval-disclosure risk."""
    at_risk = interval_disclosure(original, perturbed, k)
    return float(at_risk.mean()) if len(at_risk) else 0.0
