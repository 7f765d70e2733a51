"""Pitman's estimate of population uniques as ARX 3.9.2 computes it (risk/ModelPitman.java, risk/Gamma.java),
so that it has an estimate exactly where ARX has one and Dankar's rule picks as ARX picks.

- Start: from s_1, s_2 (1 when there is no class of size 2), u classes and n records, ARX's closed-form
  guess θ0 = (n·u·c - s_1 (n-1)(2u + c)) / (2 s_1 u + s_1 c - n c), c = s_1 (s_1 - 1) / s_2, and
  α0 = (θ0 (s_1 - n) + (n-1) s_1) / (n u).
- The likelihood equations Σ_{i<u} 1/(θ+iα) = Σ_{i<n} 1/(θ+i) and Σ_{i<u} i/(θ+iα) = Σ_j s_j Σ_{k<j} 1/(k-α),
  first in closed form (digamma, trigamma: ARX's own approximations, kept as they are, including trigamma
  returning only its recurrence's sum for arguments in [8, 12)), solved by ARX's Newton-Raphson solver
  (engine.measure.risk.newton) under the constraint θ >= 0; when that fails, or its root does not satisfy the
  equations summed term by term within 1e-6, again with the equations and derivatives summed term by term
  (those sums taken with exact ψ, ψ' here: see _iterative).
- Result: Γ(θ+1)/Γ(θ+α)·N^α, through log-gamma and through gamma; each kept when in 0..N; the larger of
  the two, or none (ARX: NaN).
"""

from __future__ import annotations

import math

import numpy as np

from . import newton

_DIGAMMA_1 = -0.57721566490153286060651209008240243104215933593992
_TRIGAMMA_1 = math.pi * math.pi / 6.0
_TETRAGAMMA_1 = -2.0 * 1.202056903159594285399738161511449990764986292
_S3, _S4, _S5, _S6, _S7 = 1.0 / 12.0, 1.0 / 120.0, 1.0 / 252.0, 1.0 / 240.0, 1.0 / 132.0
_B2, _B4, _B6, _B8, _B10 = 1.0 / 6.0, -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0, 5.0 / 66.0


def digamma(x: float) -> float:
    """ARX's digamma (risk/Gamma.java)."""
    if math.isinf(x) or math.isnan(x):
        return math.nan
    if x == 0.0:
        return -math.inf
    if x < 0.0:  # reflection
        return digamma(1.0 - x) + math.pi / math.tan(-math.pi * x)
    if x <= 1e-6:
        return (_DIGAMMA_1 - 1.0 / x) + _TRIGAMMA_1 * x
    result = 0.0
    while x < 12.0:
        result -= 1.0 / x
        x += 1
    r = 1.0 / x
    result += math.log(x) - 0.5 * r
    r *= r
    return result - r * (_S3 - r * (_S4 - r * (_S5 - r * (_S6 - r * _S7))))


def trigamma(x: float) -> float:
    """ARX's trigamma (risk/Gamma.java): the asymptotic tail is added only from 12 on, as there."""
    if math.isinf(x) or math.isnan(x):
        return math.nan
    if x == 0.0:
        return -math.inf
    if x < 0.0:  # reflection
        r = math.pi / math.sin(-math.pi * x)
        return -trigamma(1.0 - x) + r * r
    if x <= 1e-4:
        return 1.0 / (x * x) + _TRIGAMMA_1 + _TETRAGAMMA_1 * x
    result = 0.0
    while x < 8.0:
        result += 1.0 / (x * x)
        x += 1
    if x >= 12.0:
        r = 1.0 / (x * x)
        result += 0.5 * r + (1.0 + r * (_B2 + r * (_B4 + r * (_B6 + r * (_B8 + r * _B10))))) / x
    return result


def _closed(sizes: list[tuple[int, int]], u: float, n: float):
    def function(x: tuple[float, float]):
        t, a = x
        v0 = u - 1.0
        v1 = digamma(v0 + t / a + 1.0)
        v2 = trigamma((a + t + a * v0) / a)
        v3 = trigamma(t / a + 1.0)
        v4 = digamma(t / a + 1.0)
        v5 = a * a
        d1 = (v3 - v2) / v5
        d5 = ((a * v1 + t * v2) - a * v4 - t * v3) / (v5 * a)
        d3 = ((((v5 * v0) - (t * t * v2)) + (t * t * v3)) - (2.0 * a * t * v1) + (2.0 * a * t * v4)) / (v5 * v5)
        o1 = (v1 - v4) / a
        o3 = ((-t * v1) + (a * v0) + (t * v4)) / (a * a)
        o2 = digamma(n + t) - digamma(t + 1.0)
        d2 = trigamma(t + 1.0) - trigamma(n + t)
        v6, v7 = digamma(1.0 - a), trigamma(1.0 - a)
        d4 = o4 = 0.0
        for key, value in sizes:
            if key != 1:
                d4 += value * (v7 - trigamma(key - a))
                o4 += value * (digamma(key - a) - v6)
        return (o1 - o2, o3 - o4), (d2 - d1, -d5, -d5, -d3 - d4)
    return function


def _iterative(sizes: list[tuple[int, int]], u: float, n: float):
    """ARX's second form of the equations: the sums Σ_{i<u}, Σ_{i<n}, Σ_{k<j} that ARX adds term by term.
    Here each sum is taken in closed form with exact digamma ψ and trigamma ψ' (scipy): Σ_{i=1}^{u-1} 1/(θ+iα) =
    (ψ(θ/α+u) - ψ(θ/α+1))/α, Σ 1/(θ+iα)² = (ψ'(θ/α+1) - ψ'(θ/α+u))/α², the sums with i and i² in the numerator
    from these two, Σ_{i<n} 1/(θ+i) = ψ(θ+n) - ψ(θ+1), Σ_{k<j} 1/(k-α) = ψ(j-α) - ψ(1-α). Equal to ARX's sums up
    to rounding, at a cost that does not grow with n and u: added term by term, one evaluation costs
    O(n + u) (5 ms on Adult), and a search of 16,000 of them would take minutes where ARX's clock stops it
    after 1 s."""
    from scipy import special  # imported when an estimate is made: it costs every CLI start

    keys = np.array([float(k) for k, _ in sizes if k != 1])
    values = np.array([float(v) for k, v in sizes if k != 1])

    def parts(t: float, a: float) -> tuple[float, float, float, float, float, float, float, float, float]:
        with np.errstate(all="ignore"):
            r = t / a
            o1 = float((special.digamma(r + u) - special.digamma(r + 1.0)) / a)
            d1 = float((special.polygamma(1, r + 1.0) - special.polygamma(1, r + u)) / (a * a))
            o3 = ((u - 1.0) - t * o1) / a  # i/(θ+iα) = (1 - θ/(θ+iα))/α
            d5 = (o1 - t * d1) / a  # i/(θ+iα)² = (1/(θ+iα) - θ/(θ+iα)²)/α
            d3 = ((u - 1.0) - 2.0 * t * o1 + t * t * d1) / (a * a)  # i² = ((θ+iα) - θ)²/α²
            o2 = float(special.digamma(t + n) - special.digamma(t + 1.0))
            d2 = float(special.polygamma(1, t + 1.0) - special.polygamma(1, t + n))
            o4 = float(np.sum(values * (special.digamma(keys - a) - special.digamma(1.0 - a))))
            d4 = float(np.sum(values * (special.polygamma(1, 1.0 - a) - special.polygamma(1, keys - a))))
        return o1, o3, d1, d5, d3, o2, d2, o4, d4

    def function(x: tuple[float, float]):
        t, a = x
        if a == 0:
            raise ZeroDivisionError  # ARX's sums are finite at α = 0, the closed forms are not: a failed try
        o1, o3, d1, d5, d3, o2, d2, o4, d4 = parts(t, a)
        return (o1 - o2, o3 - o4), (d2 - d1, -d5, -d5, -d3 - d4)

    def equations(x: tuple[float, float]) -> tuple[float, float]:
        t, a = x
        if a == 0:
            return math.nan, math.nan
        o1, o3, _, _, _, o2, _, o4, _ = parts(t, a)
        return o1 - o2, o3 - o4
    return function, equations


def _nan(x: tuple[float, float] | None) -> bool:
    return x is None or math.isnan(x[0]) or math.isnan(x[1])


def _log_gamma(x: float) -> float:
    return math.nan if not x > 0 else math.lgamma(x)  # commons-math: NaN for x <= 0


def _gamma(x: float) -> float:
    try:
        return math.gamma(x)
    except (OverflowError, ValueError):
        return math.inf if x > 0 else math.nan


def pitman_arx(hist: dict[int, int], population_size: int) -> tuple[float, tuple[float, float] | None, int]:
    """(ARX's number of population uniques, NaN when it has none; the root (θ, α); solver tries)."""
    sizes = sorted((int(s), int(c)) for s, c in hist.items())
    c1 = float(hist.get(1, 0))
    c2 = float(hist.get(2, 0)) or 1.0
    u = float(sum(c for _, c in sizes))
    n = float(sum(s * c for s, c in sizes))
    p = float(population_size)
    try:
        c = (c1 * (c1 - 1)) / c2
        t = ((n * u * c) - (c1 * (n - 1) * ((2 * u) + c))) / (((2 * c1 * u) + (c1 * c)) - (n * c))
        a = ((t * (c1 - n)) + ((n - 1) * c1)) / (n * u)
    except ZeroDivisionError:
        return math.nan, None, 0
    start = (t, a)

    def constraint(x: tuple[float, float]) -> bool:
        return x[0] >= 0

    iterative, equations = _iterative(sizes, u, n)
    solution = newton.solve(_closed(sizes, u, n), start, constraint)
    tries = solution.tries
    root = solution.root
    if _nan(root):
        solution = newton.solve(iterative, start, constraint)
        root, tries = solution.root, tries + solution.tries
    else:
        assert root is not None
        e1, e2 = equations(root)
        if math.isnan(e1) or math.isnan(e2) or abs(e1) > newton.ACCURACY or abs(e2) > newton.ACCURACY:
            solution = newton.solve(iterative, start, constraint)
            root, tries = solution.root, tries + solution.tries
    if _nan(root) or root is None or root[1] == 0:
        return math.nan, root, tries
    t, a = root
    try:
        power = math.pow(p, a)
    except (OverflowError, ValueError):
        power = math.nan
    with np.errstate(all="ignore"):
        try:
            v1 = math.exp(_log_gamma(t + 1.0) - _log_gamma(t + a)) * power
        except OverflowError:
            v1 = math.inf
        v2 = float(np.float64(_gamma(t + 1.0)) / np.float64(_gamma(t + a))) * power
    v1 = v1 if 0.0 <= v1 <= p else math.nan
    v2 = v2 if 0.0 <= v2 <= p else math.nan
    if math.isnan(v1) and math.isnan(v2):
        return math.nan, root, tries
    return max(v for v in (v1, v2) if not math.isnan(v)), root, tries
