"""The exponential mechanism (McSherry & Talwar 2007) as SafePub uses it, and the run's randomness.

Scores are already divided by their sensitivity (scores.py), so candidate i is drawn with probability
proportional to exp(ε·s_i / 2), as ARX's ``dp.ExponentialMechanism`` does. We draw by the Gumbel-max trick:
argmax_i (ε·s_i/2 + G_i) with G_i independent standard Gumbel variables has exactly that distribution, and
needs no exponentials of large numbers (no overflow, no normalizing sum).

Floating point: like every floating-point implementation of a DP mechanism, this one samples from an
approximation of the exact distribution (Mironov 2012 showed such gaps can be exploited for the Laplace
mechanism); ARX bounds its own excess ε by log((1 + n·2^-51)^2) for n candidates and offers an exact
(base-2, arbitrary precision) variant. We do not claim more than ARX's plain variant: see definitions.md.

Randomness, the guarantee's own assumption (the adversary cannot predict the draws):
- without a seed every draw (the sample's Bernoulli(β) trials, the Gumbel variables of each exponential-
  mechanism draw) comes from the operating system's CSPRNG (``secrets.token_bytes``, the source of
  ``secrets.SystemRandom``): :class:`SecureDraws`. A uniform is 52 random bits m as (m + ½)·2^-52, exactly,
  in (0, 1); a Bernoulli(β) trial is u < β, i.e. its probability is β to within 2^-52. A numpy Generator
  seeded from ``secrets`` would not do: PCG64 is not a cryptographic generator (its state can be recovered
  from its outputs), so the later draws of a run would be predictable from earlier ones;
- with a seed: one numpy Generator (PCG64) from it, so that the same seed and input give the same sample,
  walk and table. Anyone who knows the seed (or guesses it) and the data can redraw the sample: such a run
  is reproducible and therefore not for release, and its report says so (:func:`randomness`).
"""

from __future__ import annotations

import secrets
from typing import Any, Protocol

import numpy as np

from ..errors import InputError

NOT_FOR_RELEASE = ("seeded: reproducible by anyone who knows the seed and the data, therefore not for release "
                   "(a test or demonstration run); leave the seed empty for a release")
SECURE = "not seeded: every draw from the operating system's CSPRNG"


class Draws(Protocol):
    """What SafePub draws: uniforms in [0, 1) for the sample, standard Gumbel variables for the mechanism."""

    def random(self, size: int) -> Any: ...

    def gumbel(self, *, size: int) -> Any: ...


class SecureDraws:
    """Draws from the operating system's CSPRNG (``secrets``); cannot be seeded (see the module)."""

    def _uniform(self, size: int) -> np.ndarray:
        # 52 bits m: (m + 1/2) needs 53, so it and the result are exact, in [2^-53, 1 - 2^-53]
        bits = np.frombuffer(secrets.token_bytes(8 * int(size)), dtype=np.uint64) >> np.uint64(12)
        return (bits.astype(np.float64) + 0.5) * 2.0**-52

    def random(self, size: int) -> np.ndarray:
        return self._uniform(size)

    def gumbel(self, *, size: int) -> np.ndarray:
        # G = -log(-log U) for U uniform in (0, 1): never log(0), the largest |G| about 37
        return -np.log(-np.log(self._uniform(size)))


def make_rng(seed: int | None) -> tuple[Draws, int | None]:
    """(the run's draws, the seed they come from or None when they come from the operating system's CSPRNG)."""
    if seed is None:
        return SecureDraws(), None
    if seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed}")
    return np.random.default_rng(seed), seed


def randomness(seed: int | None) -> str:
    """How a run drew, as its report says it: seeded runs are not for release."""
    return NOT_FOR_RELEASE if seed is not None else SECURE


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


def exponential_mechanism(scores: np.ndarray, epsilon: float, rng: Draws) -> int:
    """Index of the candidate drawn with probability proportional to exp(ε·s_i/2) (Gumbel-max)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1 or not len(scores):
        raise ValueError("the exponential mechanism needs at least one candidate")
    if not np.isfinite(scores).all():
        raise ValueError("a candidate's score is not a finite number")
    return int(np.argmax(0.5 * epsilon * scores + rng.gumbel(size=len(scores))))
