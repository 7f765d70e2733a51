"""SafePub's parameters from (ε, δ): the sampling probability β and the smallest class size k.

Li, Qardaji & Su (ASIACCS 2012, "On sampling, anonymization, and differential privacy") show that drawing
every record with probability β and then publishing a full-domain generalization, chosen independently of
the data, in which every class of fewer than k records is suppressed, satisfies (ε, δ)-differential privacy
when ε >= -ln(1 - β) and δ >= d(k, β, ε), with

    γ = (e^ε - 1 + β) / e^ε,   n_m = ⌈k/γ - 1⌉,
    d(k, β, ε) = max_{n >= n_m}  Σ_{j > γn}^{n} C(n, j) β^j (1 - β)^(n - j)   (a binomial upper tail).

SafePub (Bild, Kuhn & Prasser, PoPETs 2018) takes β = 1 - e^(-ε_anon) and k the smallest integer with
d(k, β, ε_anon) <= δ, as ARX's ``dp.ParameterCalculation`` does (docs/definitions.md, "SafePub").

Computing the maximum over infinitely many n: a_n (the tail above) is at most the Chernoff-Hoeffding bound
c_n = exp(-n·D(γ‖β)), D the Kullback-Leibler divergence of Bernoulli(γ) from Bernoulli(β) (γ > β always),
which decreases in n. Past N* = ⌈ln(1/δ) / D⌉ every a_n <= c_n <= δ, so d(k) <= δ exactly when
max_{n_m <= n < N*} a_n <= δ. The a_n are computed at once for n = 0..N* (scipy's binomial survival
function, accurate in the far tail) and their suffix maxima give every k's answer in one pass.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..errors import InputError

EPSILON_RANGE = (0.01, 10.0)  # ε accepted (and tested): the range ARX's users work in
DELTA_RANGE = (1e-10, 0.1)
SEARCH_SHARE_RANGE = (0.01, 0.9)
DEFAULT_SEARCH_SHARE = 0.1  # ε_search = 10% of ε: ARX's default search budget (0.1) at ε = 1
MAX_TAIL_TERMS = 50_000_000  # n up to N*: about 3·10^5 at ε_anon = 9, δ = 1e-10; a guard, never reached in range
_FLOOR_SLACK = 1e-12  # γn read as a hair smaller: an integer γn never loses its first term to rounding


@dataclass(frozen=True)
class SafePubParameters:
    """What (ε, δ) and the search's share of ε give: ε_anon = ε - ε_search, β, k (and γ)."""

    epsilon: float
    delta: float
    search_share: float
    epsilon_anon: float
    epsilon_search: float
    beta: float
    gamma: float
    k: int

    def to_dict(self) -> dict:
        return asdict(self)


def sampling_probability(epsilon_anon: float) -> float:
    """β = 1 - e^(-ε_anon) (the largest β for which sampling-then-anonymizing is ε_anon-DP)."""
    return -math.expm1(-epsilon_anon)


def gamma_of(epsilon_anon: float, beta: float) -> float:
    """γ = (e^ε - 1 + β) / e^ε, written to stay exact for small ε."""
    return (math.expm1(epsilon_anon) + beta) * math.exp(-epsilon_anon)


def _bernoulli_kl(gamma: float, beta: float) -> float:
    """D(Bernoulli(γ) ‖ Bernoulli(β)) for β < γ < 1."""
    return gamma * math.log(gamma / beta) + (1.0 - gamma) * (math.log1p(-gamma) - math.log1p(-beta))


def tail_terms(n_max: int, beta: float, gamma: float) -> np.ndarray:
    """a_n = P(Binomial(n, β) > γn) for n = 0..n_max (a_0 = 0)."""
    # imported here, not with the module: scipy.stats costs every CLI start (which imports this module) ~0.3 s
    from scipy.stats import binom

    n = np.arange(n_max + 1, dtype=np.float64)
    first = np.floor(gamma * n * (1.0 - _FLOOR_SLACK)) + 1.0  # the first j with j > γn
    terms = binom.sf(first - 1.0, n, beta)
    terms[0] = 0.0
    return np.asarray(terms, dtype=np.float64)


def n_m(k: int, gamma: float) -> int:
    """n_m = ⌈k/γ - 1⌉ (at least 0)."""
    return max(0, math.ceil(k / gamma - 1.0))


def _horizon(delta: float, beta: float, gamma: float) -> int:
    """N*: from here on every a_n <= c_n <= δ."""
    horizon = math.ceil(math.log(1.0 / delta) / _bernoulli_kl(gamma, beta))
    if horizon > MAX_TAIL_TERMS:
        raise InputError(f"δ={delta:g} at ε_anon={-math.log1p(-beta):g} needs {horizon:,} binomial tails; "
                         f"choose a larger δ or ε")
    return horizon


def d_value(k: int, beta: float, epsilon_anon: float) -> float:
    """d(k, β, ε) itself: the largest a_n over n >= n_m, scanned until the Chernoff bound c_n falls below
    the largest a_n seen (every later a_n is at most c_n)."""
    gamma = gamma_of(epsilon_anon, beta)
    kl = _bernoulli_kl(gamma, beta)
    start = n_m(k, gamma)
    best, n, block = 0.0, start, 4096
    while True:
        stop = n + block
        terms = tail_terms(stop, beta, gamma)[n:]
        best = max(best, float(terms.max()))
        if math.exp(-stop * kl) <= best or best >= 1.0:
            return best
        n, block = stop + 1, block * 2


def smallest_k(epsilon_anon: float, delta: float, beta: float | None = None) -> int:
    """The smallest k with d(k, β, ε_anon) <= δ."""
    beta = sampling_probability(epsilon_anon) if beta is None else beta
    gamma = gamma_of(epsilon_anon, beta)
    horizon = _horizon(delta, beta, gamma)
    terms = tail_terms(horizon, beta, gamma)
    suffix = np.maximum.accumulate(terms[::-1])[::-1]  # suffix[n] = max_{n <= m <= N*} a_m
    above = np.flatnonzero(suffix > delta)
    first_ok = int(above[-1]) + 1 if len(above) else 0  # the smallest n_m whose suffix stays <= δ
    # the smallest k with n_m(k) >= first_ok; n_m grows with k, so start just below and step up
    k = max(1, math.floor(first_ok * gamma) - 2)
    while n_m(k, gamma) < first_ok:
        k += 1
    while k > 1 and n_m(k - 1, gamma) >= first_ok:
        k -= 1
    return k


def _check(name: str, value: float, bounds: tuple[float, float]) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or not bounds[0] <= v <= bounds[1]:
        raise InputError(f"{name} must be between {bounds[0]:g} and {bounds[1]:g}, got {value!r}")
    return v


def derive(epsilon: float, delta: float, search_share: float = DEFAULT_SEARCH_SHARE) -> SafePubParameters:
    """ε_search = share·ε, ε_anon = ε - ε_search, β = 1 - e^(-ε_anon), k = min{k : d(k, β, ε_anon) <= δ}."""
    epsilon = _check("ε (epsilon)", epsilon, EPSILON_RANGE)
    delta = _check("δ (delta)", delta, DELTA_RANGE)
    search_share = _check("the search's share of ε", search_share, SEARCH_SHARE_RANGE)
    epsilon_search = epsilon * search_share
    epsilon_anon = epsilon - epsilon_search
    beta = sampling_probability(epsilon_anon)
    return SafePubParameters(epsilon, delta, search_share, epsilon_anon, epsilon_search, beta,
                             gamma_of(epsilon_anon, beta), smallest_k(epsilon_anon, delta, beta))
