"""Privacy accounting of the marginal-based synthesizers, in ρ-zero-concentrated DP (zCDP).

The user chooses (ε, δ). The synthesizers spend a zCDP budget ρ, the largest ρ whose conversion to approximate DP
gives (ε, δ): by Canonne, Kamath and Steinke (2020, Proposition 12 / Corollary 13), ρ-zCDP implies (ε, δ)-DP with

    δ = min over α > 1 of  exp((α − 1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α

(tighter than the simpler ε = ρ + 2·sqrt(ρ·ln(1/δ)), which it always meets). ρ is found by bisection on this δ;
tests check it against OpenDP's own conversion (``make_zCDP_to_approxDP``). Within the run, zCDP composes by
adding: a Gaussian measurement of a count vector (L2 sensitivity 1: one person added or removed changes one cell
by 1) with noise σ spends 1/(2σ²); a selection by the exponential mechanism (report-noisy-max with Gumbel noise)
with score sensitivity Δ and pure-DP ε₀ = 2Δ/scale spends ε₀²/8 (Cesar and Rogers 2021, bounded range)."""

from __future__ import annotations

import math

from ..errors import InputError


def approx_dp_delta(rho: float, epsilon: float) -> float:
    """The δ at which ρ-zCDP gives (ε, δ)-DP (the formula above, minimised over α by bisection on its
    derivative in α, which is increasing)."""
    if rho <= 0:
        return 0.0
    if epsilon < 0:
        return 1.0
    low, high = 1.0 + 1e-9, max(2.0, (epsilon + 1.0) / (2.0 * rho) + 2.0)
    for _ in range(200):
        alpha = (low + high) / 2
        # d/dα of the log of the bound: (2α − 1)ρ − ε + ln(1 − 1/α)
        if (2 * alpha - 1) * rho - epsilon + math.log1p(-1.0 / alpha) < 0:
            low = alpha
        else:
            high = alpha
    alpha = (low + high) / 2
    log_delta = (alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1.0 / alpha) - math.log(alpha - 1)
    return min(1.0, math.exp(log_delta))


def approx_dp_epsilon(rho: float, delta: float) -> float:
    """The smallest ε with approx_dp_delta(ρ, ε) ≤ δ."""
    low, high = 0.0, rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta)) + 1e-12  # the simple bound is an ε
    for _ in range(200):
        mid = (low + high) / 2
        if approx_dp_delta(rho, mid) <= delta:
            high = mid
        else:
            low = mid
    return high


def rho_for(epsilon: float, delta: float) -> float:
    """The largest ρ with ρ-zCDP ⇒ (ε, δ)-DP (bisection; the result meets δ, never exceeds it)."""
    if not epsilon > 0 or not 0 < delta < 1:
        raise InputError(f"epsilon must be above 0 and delta between 0 and 1, got ε={epsilon!r}, δ={delta!r}")
    low, high = 0.0, epsilon  # ρ ≤ ε always (the bound's ε is at least ρ)
    for _ in range(200):
        mid = (low + high) / 2
        if approx_dp_delta(mid, epsilon) <= delta:
            low = mid
        else:
            high = mid
    return low


def gaussian_rho(sigma: float) -> float:
    """ρ spent by one Gaussian measurement of a count vector (L2 sensitivity 1) with noise σ."""
    return 1.0 / (2.0 * sigma * sigma)


def gaussian_sigma(rho: float) -> float:
    """The noise σ that spends exactly ρ on one count vector."""
    return math.sqrt(1.0 / (2.0 * rho))


def selection_rho(epsilon0: float) -> float:
    """ρ spent by one exponential-mechanism selection that is ε₀-DP (bounded range: ε₀²/8)."""
    return epsilon0 * epsilon0 / 8.0


def selection_epsilon(rho: float) -> float:
    return math.sqrt(8.0 * rho)
