"""SafePub's derived parameters (β, k) against an independent computation of Li, Qardaji & Su's d(k, β, ε) by
direct summation of binomial probabilities (log-space math.lgamma terms summed with math.fsum), stopped as ARX's
ParameterCalculation stops (the Poisson-form Chernoff bound exp(-n(γ ln(γ/β) - (γ - β))) below the maximum);
and the exponential mechanism's selection frequencies against its probabilities (chi-square)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chi2

from anonymizer_app.engine import InputError
from anonymizer_app.engine.safepub.mechanism import (
    exponential_mechanism,
    make_rng,
    parse_seed,
    selection_probabilities,
)
from anonymizer_app.engine.safepub.parameters import d_value, derive, smallest_k


def _binomial_tail(n: int, beta: float, first: int) -> float:
    """Σ_{j=first}^{n} C(n, j) β^j (1-β)^(n-j), term by term."""
    if first > n:
        return 0.0
    lb, l1b = math.log(beta), math.log1p(-beta)
    return math.fsum(math.exp(math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lb + (n - j) * l1b)
                     for j in range(first, n + 1))


def _direct_d(k: int, epsilon: float) -> float:
    """d(k, β, ε) with β = 1 - e^-ε, written from the paper's formula independently of the product's code."""
    beta = 1.0 - math.exp(-epsilon)
    gamma = (math.exp(epsilon) - 1.0 + beta) / math.exp(epsilon)
    n = math.ceil(k / gamma - 1.0)
    best = 0.0
    while True:
        best = max(best, _binomial_tail(n, beta, math.floor(n * gamma) + 1))
        if best >= math.exp(-n * (gamma * math.log(gamma / beta) - (gamma - beta))):
            return best
        n += 1


@pytest.mark.parametrize("epsilon_anon, delta", [(0.45, 1e-6), (0.9, 1e-3), (0.9, 1e-6), (1.8, 1e-6), (1.8, 1e-2),
                                                 (2.7, 1e-6), (0.09, 1e-4)])
def test_k_is_the_smallest_with_d_at_most_delta(epsilon_anon, delta):
    k = smallest_k(epsilon_anon, delta)
    assert _direct_d(k, epsilon_anon) <= delta < _direct_d(k - 1, epsilon_anon)


@pytest.mark.parametrize("k, epsilon_anon", [(20, 0.9), (73, 0.9), (117, 1.8), (5, 0.45)])
def test_d_value_equals_the_direct_sum(k, epsilon_anon):
    beta = 1.0 - math.exp(-epsilon_anon)
    assert d_value(k, beta, epsilon_anon) == pytest.approx(_direct_d(k, epsilon_anon), rel=1e-9)


def test_derived_parameters_split_epsilon_and_follow_the_formulas():
    p = derive(1.0, 1e-6, 0.1)
    assert p.epsilon_search == pytest.approx(0.1) and p.epsilon_anon == pytest.approx(0.9)
    assert p.beta == pytest.approx(1 - math.exp(-0.9), rel=1e-15)
    assert p.gamma == pytest.approx((math.exp(0.9) - 1 + p.beta) / math.exp(0.9), rel=1e-15)
    # the closing note's table: ε in {0.5, 1, 2, 3}, δ = 1e-6, 10% of ε for the search
    assert [derive(e, 1e-6).k for e in (0.5, 1, 2, 3)] == [64, 73, 117, 240]
    assert [round(derive(e, 1e-6).beta, 4) for e in (0.5, 1, 2, 3)] == [0.3624, 0.5934, 0.8347, 0.9328]


def test_k_grows_as_delta_shrinks_and_epsilon_grows():
    ks = [derive(2.0, d).k for d in (1e-2, 1e-4, 1e-6, 1e-8, 1e-10)]
    assert ks == sorted(ks) and len(set(ks)) == len(ks)
    assert [derive(e, 1e-6).k for e in (0.5, 1, 2, 3, 5)] == sorted(derive(e, 1e-6).k for e in (0.5, 1, 2, 3, 5))


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 10.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-2])
def test_whole_range_is_stable(epsilon, delta):
    p = derive(epsilon, delta)
    assert p.k >= 1 and 0 < p.beta < 1
    # d(k) <= δ < d(k-1), computed by the product's own scan (the Chernoff-stopped maximum)
    assert d_value(p.k, p.beta, p.epsilon_anon) <= delta
    if p.k > 1:
        assert d_value(p.k - 1, p.beta, p.epsilon_anon) > delta


@pytest.mark.parametrize("args, message", [((0, 1e-6), "ε"), ((11, 1e-6), "ε"), ((1, 0.5), "δ"), ((1, 0), "δ"),
                                           ((1, 1e-6, 0.95), "share"), ((float("nan"), 1e-6), "ε")])
def test_bad_parameters_are_named(args, message):
    with pytest.raises(InputError, match=message):
        derive(*args)


# ---- the exponential mechanism ------------------------------------------------------------------
def test_selection_probabilities_are_the_exponential_mechanisms():
    scores = np.array([0.0, -1.0, -2.5, 0.5])
    expected = np.exp(0.5 * 2.0 * scores) / np.exp(0.5 * 2.0 * scores).sum()
    assert np.allclose(selection_probabilities(scores, 2.0), expected, rtol=1e-14)
    # huge scores neither overflow nor lose the ratios
    assert np.allclose(selection_probabilities(scores * 1e3 + 1e6, 0.002), expected, rtol=1e-9)


def test_selection_frequencies_match_the_probabilities():
    scores = np.array([0.0, -1.0, -2.5, 0.5, -0.2])
    epsilon, draws = 2.0, 40_000
    rng, _ = make_rng(20240601)
    picks = np.bincount([exponential_mechanism(scores, epsilon, rng) for _ in range(draws)], minlength=len(scores))
    expected = selection_probabilities(scores, epsilon) * draws
    statistic = float(((picks - expected) ** 2 / expected).sum())
    assert statistic < chi2.ppf(1 - 1e-6, len(scores) - 1)  # fails by chance once in a million runs


def test_exponential_mechanism_with_extreme_scores_picks_the_best():
    rng, _ = make_rng(1)
    scores = np.array([-1e12, 0.0, -1e12])
    assert {exponential_mechanism(scores, 1.0, rng) for _ in range(50)} == {1}
    with pytest.raises(ValueError):
        exponential_mechanism(np.array([0.0, np.inf]), 1.0, rng)


def test_seeds_reproduce_and_unseeded_runs_draw_from_the_os():
    a, seed_a = make_rng(5)
    b, _ = make_rng(5)
    assert seed_a == 5 and np.array_equal(a.random(10), b.random(10))
    c, seed_c = make_rng(None)
    d, _ = make_rng(None)
    assert seed_c is None and not np.array_equal(c.random(10), d.random(10))
    assert parse_seed("") is None and parse_seed(" 12 ") == 12
    for bad in ("-1", "x", "1.5"):
        with pytest.raises(InputError, match="seed"):
            parse_seed(bad)
