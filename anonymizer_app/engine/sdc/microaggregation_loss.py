"""The information-loss figures sdcMicro reports for numeric variables (R/dUtility.R, ``dUtility``).

* IL1s = Σ over all cells |x − x'| / (sd(x_j)·√2), sd the sample standard deviation of the original variable;
  cells where either side is missing are left out. This version of sdcMicro does not divide by n·p (its older
  ``IL1old`` did; ``il1s_per_cell`` gives that figure).
* IL1 = Σ 100·|x − x'| / |x| over the cells where that is finite (x = 0 is left out).
* eigen = Σ_i |e_i − e'_i| / e_i with e, e' the eigenvalues, largest first, of the covariance matrices of the
  standardized original and standardized released variables (pairwise complete observations); missing when a
  released variable is constant (sdcMicro's ``eigen`` fails there and it reports NA).
"""

from __future__ import annotations

import math

import numpy as np


def _sample_sd(column: np.ndarray) -> float:
    present = column[~np.isnan(column)]
    return float(np.std(present, ddof=1)) if present.size > 1 else math.nan


def il1s(x: np.ndarray, xm: np.ndarray) -> float:
    total = 0.0
    for j in range(x.shape[1]):
        with np.errstate(invalid="ignore", divide="ignore"):
            cells = np.abs(x[:, j] - xm[:, j]) / (_sample_sd(x[:, j]) * math.sqrt(2.0))
        total += float(np.nansum(cells))
    return total


def il1s_per_cell(x: np.ndarray, xm: np.ndarray) -> float:
    return il1s(x, xm) / (x.shape[0] * x.shape[1]) if x.size else math.nan


def il1(x: np.ndarray, xm: np.ndarray) -> float:
    with np.errstate(invalid="ignore", divide="ignore"):
        cells = 100.0 * np.abs(x - xm) / np.abs(x)
    return float(cells[np.isfinite(cells)].sum())


def _pairwise_covariance(z: np.ndarray) -> np.ndarray:
    """R's var(z, use = "pairwise.complete.obs"): each pair's covariance over the rows where both are present."""
    p = z.shape[1]
    present = ~np.isnan(z)
    cov = np.empty((p, p))
    for a in range(p):
        for b in range(a, p):
            both = present[:, a] & present[:, b]
            if both.sum() < 2:
                cov[a, b] = cov[b, a] = math.nan
                continue
            u, v = z[both, a], z[both, b]
            cov[a, b] = cov[b, a] = float(np.sum((u - u.mean()) * (v - v.mean())) / (both.sum() - 1))
    return cov


def _standardized(x: np.ndarray) -> np.ndarray:
    """R's scale(): centred on the column mean, divided by the sample standard deviation (missing left out)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.array([np.nanmean(c) if np.any(~np.isnan(c)) else math.nan for c in x.T])
        sds = np.array([_sample_sd(c) for c in x.T])
        return (x - means) / sds


def eigen_loss(x: np.ndarray, xm: np.ndarray) -> float | None:
    e = [_pairwise_covariance(_standardized(m)) for m in (x, xm)]
    if any(not np.all(np.isfinite(c)) for c in e):
        return None
    original, released = (np.linalg.eigvalsh(c)[::-1] for c in e)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = float(np.sum(np.abs(original - released) / original))
    return value if math.isfinite(value) else None


def utility_figures(x: np.ndarray, xm: np.ndarray) -> dict[str, float | None]:
    """The figures of sdcMicro's dUtility, as the result cards and the report show them."""
    def finite(v: float | None) -> float | None:
        return v if v is not None and math.isfinite(v) else None
    return {"IL1s": finite(il1s(x, xm)), "IL1": finite(il1(x, xm)), "eigenvalue loss": finite(eigen_loss(x, xm))}
