"""Population uniqueness: how many people of the population are unique on the QIs, estimated from the
sample's class-size frequencies (s_j classes of size j, u classes, n records, population N, π = n/N).

Pitman (Hoshino 2001), Zayatz (1991) and the slide negative binomial (SNB, Chen & McNulty 1998) models,
and the decision rule of Dankar, El Emam, Neisa & Roffey 2012 choosing among them. The formulas are in
docs/definitions.md ("Population uniqueness"). Pitman's and SNB's parameters are roots of two equations,
solved numerically; when no root inside the parameter space is found the estimate says "did not converge"
and why, and has no number.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from itertools import product
from typing import Callable

import numpy as np

TOLERANCE = 1e-8  # largest residual of an equation, relative to its right-hand side, taken as a root


@dataclass
class Estimate:
    """One estimator's result: ``uniques`` is None when it did not converge (``reason`` says why)."""

    model: str
    uniques: float | None
    share: float | None  # uniques / N
    converged: bool
    reason: str = ""
    parameters: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def _frequencies(hist: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.array(sorted(hist), dtype=np.int64)
    return sizes, np.array([hist[s] for s in sorted(hist)], dtype=float)


def _solve(equations: Callable[[np.ndarray], np.ndarray], starts: list[tuple[float, float]],
           scale: np.ndarray, show: Callable[[np.ndarray], str]) -> tuple[np.ndarray | None, str]:
    """A root of ``equations`` (in unconstrained coordinates) from the first start that reaches one;
    otherwise why not, with the parameters (``show``) where the best attempt stopped."""
    # scipy is imported when an estimate is made, not with the module: it costs every CLI start ~1 s
    from scipy import optimize

    last, best = "no start point reached a root", np.inf
    for start in starts:
        with np.errstate(all="ignore"):
            sol = optimize.root(equations, np.asarray(start, dtype=float), method="hybr")
            residual = np.abs(equations(sol.x)) / scale
        if np.all(np.isfinite(sol.x)) and np.all(residual <= TOLERANCE):
            return sol.x, ""
        worst = float(np.max(residual)) if np.all(np.isfinite(residual)) else np.inf
        if worst < best or best == np.inf:
            best = worst
            last = (f"the root finder stopped at {show(sol.x)} with the equations still off by "
                    f"{', '.join(f'{r:.2g}' for r in residual)} (relative)")
    return None, last


def pitman(hist: dict[int, int], population_size: int) -> Estimate:
    """Pitman's model: θ, α by maximum likelihood (Hoshino 2001), uniques Γ(θ+1)/Γ(θ+α)·N^α."""
    from scipy import special  # imported here: see _solve

    sizes, counts = _frequencies(hist)
    n = float(np.sum(sizes * counts))
    u = float(counts.sum())
    big = sizes >= 2
    if not big.any():
        return Estimate("pitman", None, None, False, "every sample class is unique: the likelihood grows "
                        "without bound as α → 1, so it has no maximum inside 0 < α < 1")

    def equations(x: np.ndarray) -> np.ndarray:
        alpha = special.expit(x[1])
        theta = -alpha + np.exp(x[0])
        s_u = (special.digamma(theta / alpha + u) - special.digamma(theta / alpha + 1)) / alpha  # Σ 1/(θ+iα)
        s_n = special.digamma(theta + n) - special.digamma(theta + 1)  # Σ_{i<n} 1/(θ+i)
        t_u = ((u - 1) - theta * s_u) / alpha  # Σ_{i<u} i/(θ+iα)
        t_c = np.sum(counts[big] * (special.digamma(sizes[big] - alpha) - special.digamma(1 - alpha)))
        return np.array([s_u - s_n, t_u - t_c])

    scale = np.array([max(1.0, float(special.digamma(n + 1) - special.digamma(2))),
                      max(1.0, float(np.sum(counts[big] * (sizes[big] - 1))))])
    starts = [(np.log(t + a), special.logit(a)) for a, t in product((0.5, 0.1, 0.9), (1.0, 10.0, 100.0, 1000.0))]
    x, reason = _solve(equations, starts, scale,
                       lambda x: f"α = {special.expit(x[1]):.4g}, θ = {-special.expit(x[1]) + np.exp(x[0]):.4g}")
    if x is None:
        return Estimate("pitman", None, None, False, f"no maximum-likelihood θ, α found: {reason}")
    alpha = float(special.expit(x[1]))
    theta = float(-alpha + np.exp(x[0]))
    params = {"theta": theta, "alpha": alpha}
    log_uniques = special.gammaln(theta + 1) - special.gammaln(theta + alpha) + alpha * np.log(float(population_size))
    uniques = float(np.exp(log_uniques))
    if not 0 <= uniques <= population_size:
        return Estimate("pitman", None, None, False, f"the estimate {uniques:.4g} lies outside 0..N", params)
    return Estimate("pitman", uniques, uniques / population_size, True, "", params)


def zayatz(hist: dict[int, int], population_size: int, sampling_fraction: float) -> Estimate:
    """Zayatz's model: P(F=1 | f=1) by Bayes' rule with hypergeometric P(f=1 | F=j) and the population's
    class-size shares estimated by the sample's (s_j / u); uniques s1 · P(F=1 | f=1) / π."""
    sizes, counts = _frequencies(hist)
    n = int(np.sum(sizes * counts))
    s1 = float(hist.get(1, 0))
    shares = counts / counts.sum()
    p_one = np.array([_hypergeom_one(population_size, int(j), n) for j in sizes])
    denominator = float(np.sum(shares * p_one))
    if denominator <= 0:
        return Estimate("zayatz", None, None, False, "P(f = 1) is 0 for every class size")
    conditional = float(shares[sizes == 1].sum() * _hypergeom_one(population_size, 1, n)) / denominator
    uniques = s1 * conditional / sampling_fraction
    return Estimate("zayatz", uniques, uniques / population_size, True, "",
                    {"p_population_unique_given_sample_unique": conditional})


def _hypergeom_one(population: int, successes: int, draws: int) -> float:
    """P(exactly 1 success) drawing ``draws`` of ``population`` items of which ``successes`` succeed."""
    if successes < 1 or population - successes < draws - 1 or draws < 1:
        return 0.0
    log_p = (np.log(successes) + _log_choose(population - successes, draws - 1) - _log_choose(population, draws))
    return float(np.exp(log_p))


def _log_choose(a: int, b: int) -> float:
    from scipy import special

    return float(special.gammaln(float(a) + 1) - special.gammaln(float(b) + 1) - special.gammaln(float(a - b) + 1))


def shlosser(hist: dict[int, int], sampling_fraction: float) -> float:
    """Shlosser's estimate of the number of non-empty population classes K (Haas et al. 1995)."""
    sizes, counts = _frequencies(hist)
    q = sampling_fraction
    u = float(counts.sum())
    if q >= 1:
        return u
    num = np.sum((1 - q) ** sizes * counts)
    den = np.sum(sizes * q * (1 - q) ** (sizes - 1) * counts)
    return float(u + hist.get(1, 0) * num / den)


def snb(hist: dict[int, int], population_size: int, sampling_fraction: float) -> Estimate:
    """Slide negative binomial: population class sizes F = 1 + NB(α, β); α, β solve the expected numbers
    of sample classes of size 1 and 2 = s1, s2 (K from Shlosser); uniques K·β^α."""
    from scipy import special

    s1 = float(hist.get(1, 0))
    s2 = float(hist.get(2, 0))
    pi = sampling_fraction
    k = shlosser(hist, pi)
    if s2 == 0:
        return Estimate("snb", None, None, False, "no sample class of size 2: the second equation has no "
                        "root with α > 0 and 0 < β < 1", {"K": k})

    def equations(x: np.ndarray) -> np.ndarray:
        alpha, beta = np.exp(x[0]), special.expit(x[1])
        d = (1 - pi) * (1 - beta)
        e1 = k * pi * (beta / (1 - d)) ** alpha * (1 + alpha * d / (1 - d)) - s1
        e2 = k * alpha * beta**alpha * pi**2 * (1 - beta) / (2 * (1 - d) ** (alpha + 2)) * (2 - (1 - alpha) * d) - s2
        return np.array([e1, e2])

    starts = [(np.log(a), special.logit(b)) for a, b in product((1.0, 0.1, 10.0), (0.5, 0.1, 0.01, 0.9))]
    x, reason = _solve(equations, starts, np.array([max(1.0, s1), max(1.0, s2)]),
                       lambda x: f"α = {np.exp(x[0]):.4g}, β = {special.expit(x[1]):.4g}")
    if x is None:
        return Estimate("snb", None, None, False, f"no α > 0, 0 < β < 1 found: {reason}", {"K": k})
    alpha, beta = float(np.exp(x[0])), float(special.expit(x[1]))
    uniques = k * beta**alpha
    params = {"K": k, "alpha": alpha, "beta": beta}
    if not 0 <= uniques <= population_size:
        return Estimate("snb", None, None, False, f"the estimate {uniques:.4g} lies outside 0..N", params)
    return Estimate("snb", uniques, uniques / population_size, True, "", params)


def dankar(pitman_: Estimate, zayatz_: Estimate, snb_: Estimate, sampling_fraction: float) -> dict:
    """Dankar et al. 2012's choice: π <= 0.1: Pitman, or Zayatz when Pitman did not converge;
    π > 0.1: the smaller of Zayatz and SNB, or Zayatz when SNB did not converge."""
    if sampling_fraction <= 0.1:
        chosen = pitman_ if pitman_.converged else zayatz_
        why = ("sampling fraction <= 0.1: Pitman" if pitman_.converged
               else "sampling fraction <= 0.1 and Pitman did not converge: Zayatz")
    elif snb_.converged and zayatz_.converged:
        chosen = zayatz_ if (zayatz_.uniques or 0) < (snb_.uniques or 0) else snb_
        why = f"sampling fraction > 0.1: the smaller of Zayatz and SNB ({chosen.model})"
    else:
        chosen = zayatz_
        why = "sampling fraction > 0.1 and SNB did not converge: Zayatz"
    return {"model": chosen.model, "uniques": chosen.uniques, "share": chosen.share,
            "converged": chosen.converged, "why": why}


def population_uniqueness(hist: dict[int, int], population_size: int, sampling_fraction: float) -> dict:
    """Every estimator and Dankar's choice for a sample's class-size frequencies ({size: classes})."""
    if not hist or hist.get(1, 0) == 0:
        none = "no sample uniques: no population uniques are estimated (0)"
        zero = {m: Estimate(m, 0.0, 0.0, True, none).to_dict() for m in ("pitman", "zayatz", "snb")}
        return {"estimators": zero, "dankar": {"model": None, "uniques": 0.0, "share": 0.0, "converged": True,
                                               "why": none}}
    p, z, s = pitman(hist, population_size), zayatz(hist, population_size, sampling_fraction), \
        snb(hist, population_size, sampling_fraction)
    return {"estimators": {e.model: e.to_dict() for e in (p, z, s)}, "dankar": dankar(p, z, s, sampling_fraction)}
