"""The exponential mechanism (McSherry & Talwar 2007) as SafePub uses it, and the run's randomness.

Scores are already divided by their sensitivity (scores.py), so candidate i is drawn with probability
proportional to exp(ε·s_i / 2), as ARX's ``dp.ExponentialMechanism`` does. We draw by the Gumbel-max trick:
argmax_i (ε·s_i/2 + G_i) with G_i independent standard Gumbel variables has exactly that distribution, and
needs no exponentials of large numbers (no overflow, no normalizing sum).

Floating point: like every floating-point implementation of a DP mechanism, this one samples from an
approximation of the exact distribution (Mironov 2012 showed such gaps can be exploited for the Laplace
mechanism); ARX bounds its own excess ε by log((1 + n·2^-51)^2) for n candidates and offers an exact
(base-2, arbitrary precision) variant. We do not claim more than ARX's plain variant: see definitions.md.

Randomness: one numpy Generator per run (PCG64), seeded from the user's seed (a reproducible run: the same
seed and input give the same sample, the same walk and the same table) or, without a seed, from 128 bits of
the operating system's CSPRNG (``secrets``).
"""

from __future__ import annotations

import secrets

import numpy as np

from ..errors import InputError


def make_rng(seed: int | None) -> tuple[np.random.Generator, int | None]:
    """(the run's generator, the seed it was built from or None when drawn from the OS)."""
    if seed is None:
        return np.random.default_rng(secrets.randbits(128)), None
    if seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed}")
    return np.random.default_rng(seed), seed


def parse_seed(value: object) -> int | None:
    """The seed option: empty -> None (not seeded), else a non-negative integer."""
    text = "" if value is None else str(value).strip()
    if not text:
        return None
    try:
        seed = int(text)
    except ValueError:
        raise InputError(f"seed must be a non-negative integer (or empty: not seeded), got {value!r}") from None
    if seed < 0:
        raise InputError(f"seed must be a non-negative integer (or empty: not seeded), got {value!r}")
    return seed


def selection_probabilities(scores: np.ndarray, epsilon: float) -> np.ndarray:
    """P(i) = exp(ε·s_i/2) / Σ_j exp(ε·s_j/2), computed with the largest exponent shifted to 0."""
    exponents = 0.5 * epsilon * np.asarray(scores, dtype=np.float64)
    weights = np.exp(exponents - exponents.max())
    return weights / weights.sum()


def exponential_mechanism(scores: np.ndarray, epsilon: float, rng: np.random.Generator) -> int:
    """Index of the candidate drawn with probability proportional to exp(ε·s_i/2) (Gumbel-max)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or not len(scores):
        raise ValueError("the exponential mechanism needs at least one candidate")
    if not np.isfinite(scores).all():
        raise ValueError("a candidate's score is not a finite number")
    return int(np.argmax(0.5 * epsilon * scores + rng.gumbel(size=len(scores))))
