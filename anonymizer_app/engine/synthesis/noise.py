"""The noise of the DP synthesizers, drawn by OpenDP's vetted samplers.

* Gaussian noise on a marginal's count vector: ``opendp.measurements.make_gaussian`` on a vector of floats with
  the L2 distance (one person added or removed changes the vector by 1 in L2); OpenDP samples each cell's noise
  exactly (no floating-point attack surface) and its privacy map gives ρ = 1/(2σ²), which tests compare.
* The exponential mechanism: ``make_noisy_max`` with Gumbel noise (report-noisy-max ≡ the exponential mechanism)
  over a score vector with the L∞ distance and a zCDP output measure; ρ = (2Δ/scale)²/8.

OpenDP's samplers cannot be seeded, so a run is not reproducible from its seed: tests that need exact draws give
``SynthesisContext.test_noise_rng`` (a numpy generator) instead, used only by tests and documented as such."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .accounting import selection_epsilon


@functools.cache
def _opendp() -> Any:
    import opendp.prelude as dp

    dp.enable_features("contrib")  # OpenDP marks the Gaussian and noisy-max constructors as 'contrib'
    return dp


@functools.lru_cache(maxsize=256)
def _gaussian(sigma: float) -> Any:
    dp = _opendp()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)
    return dp.m.make_gaussian(*space, scale=sigma)


@functools.lru_cache(maxsize=256)
def _noisy_max(scale: float) -> Any:
    dp = _opendp()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    return dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=scale)


def gaussian_measurement_rho(sigma: float) -> float:
    """OpenDP's own privacy map of the Gaussian mechanism at L2 sensitivity 1."""
    return float(_gaussian(float(sigma)).map(1.0))


def noisy_max_rho(scale: float, sensitivity: float) -> float:
    """OpenDP's own privacy map of report-noisy-max at L∞ sensitivity Δ."""
    return float(_noisy_max(float(scale)).map(float(sensitivity)))


def add_gaussian(counts: np.ndarray, sigma: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """counts + N(0, σ²) in each cell."""
    flat = np.asarray(counts, dtype=float).ravel()
    if rng is not None:
        return flat + rng.normal(0.0, sigma, size=flat.size)
    return np.asarray(_gaussian(float(sigma))(flat.tolist()), dtype=float)


def exponential_mechanism(scores: np.ndarray, rho: float, sensitivity: float,
                          rng: np.random.Generator | None = None) -> int:
    """The index of a candidate chosen with probability ∝ exp(ε₀·score / (2Δ)), spending ρ = ε₀²/8."""
    epsilon0 = selection_epsilon(rho)
    scale = 2.0 * sensitivity / epsilon0
    values = np.asarray(scores, dtype=float)
    if rng is not None:
        return int(np.argmax(values + rng.gumbel(0.0, scale, size=values.size)))
    return int(_noisy_max(float(scale))(values.tolist()))
