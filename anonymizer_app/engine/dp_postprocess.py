"""Post-processing of a differentially private histogram's noisy counts.

Any function of a differentially private release that does not read the data again is as private as the
release (the post-processing property, Dwork & Roth 2014, Prop. 2.1): these modes spend no ε. They only make
the counts look like counts:

- ``none``: the noisy counts as drawn (Laplace counts are fractional and may be negative);
- ``round``: each count rounded to the nearest integer (halves away from zero);
- ``round-clamp``: rounded, then negatives set to 0 (the total may then exceed the noisy total);
- ``consistent``: non-negative integers that add up to the released total T = max(0, round(Σ noisy)).
  First the Euclidean (least-squares) projection of the noisy vector onto {x ≥ 0, Σx = T} (the scaled
  simplex; sort-and-threshold algorithm of Held, Wolfe & Crowder 1974, Duchi et al. 2008): x = max(v − θ, 0)
  with θ the one shift making Σx = T. Then largest-remainder (Hamilton) rounding: every x_i floored, the
  T − Σ⌊x_i⌋ units left given to the largest fractional parts (ties to the earlier cell). Every marginal
  summed from the released cells then agrees with the total. Worked example: docs/definitions.md,
  "Differential privacy", "Post-processing".
"""

from __future__ import annotations

import math

import numpy as np

from .errors import InputError

NONE, ROUND, ROUND_CLAMP, CONSISTENT = "none", "round", "round-clamp", "consistent"
MODES = (NONE, ROUND, ROUND_CLAMP, CONSISTENT)
LABELS = {NONE: "none (raw noisy counts)", ROUND: "round to integers",
          ROUND_CLAMP: "round and clamp at 0", CONSISTENT: "consistent totals (non-negative integers summing to the noisy total)"}
DEFAULT = CONSISTENT


def round_half_away(values: np.ndarray) -> np.ndarray:
    """Nearest integer, halves away from zero (numpy's round sends halves to the even integer)."""
    return np.sign(values) * np.floor(np.abs(values) + 0.5)


def project_to_simplex(values: np.ndarray, total: float) -> np.ndarray:
    """The closest point (Euclidean) to ``values`` with every entry ≥ 0 and the entries summing to ``total``."""
    if total <= 0 or len(values) == 0:
        return np.zeros(len(values))
    u = np.sort(values)[::-1]
    cumulative = np.cumsum(u) - total
    ranks = np.arange(1, len(u) + 1)
    rho = int(np.nonzero(u - cumulative / ranks > 0)[0][-1])  # the last j with u_j > (Σ_{i≤j} u_i − T)/j
    theta = cumulative[rho] / (rho + 1)
    return np.maximum(values - theta, 0.0)


def largest_remainder(values: np.ndarray, total: int) -> np.ndarray:
    """Integers ⌊x_i⌋ plus one for the (total − Σ⌊x_i⌋) largest fractional parts (ties: earlier cell first)."""
    floors = np.floor(values)
    left = int(total - floors.sum())
    if left > 0:
        order = np.argsort(-(values - floors), kind="stable")
        floors[order[:left]] += 1
    return floors


def post_process(noisy: list[float] | list[int], mode: str) -> list[float] | list[int]:
    """The released counts of ``noisy`` under ``mode`` (one of MODES); integers for every mode but none."""
    if mode not in MODES:
        raise InputError(f"unknown post-processing {mode!r}: choose one of {', '.join(MODES)}")
    values = np.asarray(noisy, dtype=float)
    if not np.isfinite(values).all():
        raise InputError("a noisy count is not a finite number")
    if mode == NONE:
        return list(noisy)
    if mode == ROUND:
        out = round_half_away(values)
    elif mode == ROUND_CLAMP:
        out = np.maximum(round_half_away(values), 0.0)
    else:
        total = max(0, int(round_half_away(np.array([values.sum()]))[0]))
        out = largest_remainder(project_to_simplex(values, float(total)), total)
    return [int(x) for x in out]


def released_total(counts: list[float] | list[int]) -> float:
    """Σ of the released counts (the figure the consistent mode keeps equal to the rounded noisy total)."""
    return float(math.fsum(counts))
