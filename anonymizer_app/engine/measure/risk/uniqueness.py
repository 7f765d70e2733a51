"""Population uniqueness: how many people of the population are unique on the QIs, estimated from the
sample's class-size frequencies (s_j classes of size j, u classes, n records, population N, π = n/N).

Pitman (Hoshino 2001), Zayatz (1991) and the slide negative binomial (SNB, Chen & McNulty 1998) models,
and the decision rule of Dankar, El Emam, Neisa & Roffey 2012 choosing among them. The formulas are in
docs/definitions.md ("Population uniqueness"). Pitman's and SNB's parameters are roots of two equations,
solved by ARX 3.9.2's Newton-Raphson solver from ARX's start points (engine.measure.risk.newton), so that an estimate
exists exactly where ARX has one; when none is found (or a Pitman root lies outside its parameter space) the
estimate says "did not converge" and why, and has no number.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from . import newton
from .pitman_arx import pitman_arx


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


def pitman(hist: dict[int, int], population_size: int) -> Estimate:
    """Pitman's model (Hoshino 2001): θ, α by maximum likelihood as ARX 3.9.2 solves for them (engine.measure.risk.
    pitman_arx: its start, its closed-form and term-by-term equations, its Newton-Raphson solver), uniques
    Γ(θ+1)/Γ(θ+α)·N^α. No root: no estimate, as in ARX. A root outside the parameter space (0 < α < 1,
    θ > -α) is refused too, where ARX would report a number (definitions.md)."""
    sizes, counts = _frequencies(hist)
    if not (sizes >= 2).any():
        return Estimate("pitman", None, None, False, "every sample class is unique: the likelihood grows "
                        "without bound as α → 1, so it has no maximum inside 0 < α < 1")
    uniques, root, tries = pitman_arx(hist, population_size)
    if root is None or math.isnan(root[0]) or math.isnan(root[1]):
        return Estimate("pitman", None, None, False, f"ARX's Newton-Raphson solver found no root of Pitman's "
                        f"likelihood equations ({tries} start points)", {"tries": tries})
    theta, alpha = root
    params = {"theta": theta, "alpha": alpha, "tries": tries}
    if not (0 < alpha < 1 and theta > -alpha):
        arx = "none" if math.isnan(uniques) else f"{uniques:.4g}"
        return Estimate("pitman", None, None, False, f"the root α = {alpha:.4g}, θ = {theta:.4g} lies outside "
                        f"Pitman's parameter space (0 < α < 1, θ > -α); ARX's estimate there: {arx}", params)
    if math.isnan(uniques) or uniques == 0:
        return Estimate("pitman", None, None, False, f"the root α = {alpha:.4g}, θ = {theta:.4g} gives no estimate "
                        f"in 0..N", params)
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


def snb_classes(hist: dict[int, int], sampling_fraction: float) -> float:
    """The number of non-empty population classes K the SNB model starts from, computed as ARX 3.9.2 does
    (ModelSNB.estimateNonEmptyEquivalenceClasses): u + s1 · (A / B) · (C / D)² with A = Σ j π² (1-π²)^(j-1) s_j,
    B = Σ ((1-π)^j s_j (1+π)^j - 1) (ARX subtracts 1 per class size, kept), C = Σ (1-π)^j s_j,
    D = Σ j π (1-π)^(j-1) s_j; sums over the class sizes j in ascending order."""
    f = sampling_fraction
    f2 = f * f
    a = b = c = d = 0.0
    for j in sorted(hist):
        size, count = float(j), float(hist[j])
        term = math.pow(1 - f, size) * count
        a += size * f2 * math.pow(1 - f2, size - 1) * count
        b += term * math.pow(1 + f, size) - 1
        c += term
        d += size * f * math.pow(1 - f, size - 1) * count
    u = float(sum(hist.values()))
    return u + float(hist.get(1, 0)) * (a / b) * (c / d) * (c / d)


def _snb_function(k: float, f: float, c1: float, c2: float):
    """ARX's SNB equations and their Jacobian at (α, β) (ModelSNB.getObjectFunction / getDerivatives).
    ARX's second equation multiplies by (1 - d)^(α+2) where E[s2] divides by it, and its Jacobian is that of
    the dividing form; both are kept, since the point is to converge where ARX does and nowhere else."""
    def function(x: tuple[float, float]):
        a, b = x
        dividend = (1 - f) * (1 - b)
        e1 = k * f * math.pow(b / (1 - dividend), a) * (((a * dividend) / (1 - dividend)) + 1) - c1
        e2 = k * a * math.pow(b, a) * (f * f) * (1 - b) / 2 * math.pow(1 - dividend, a + 2) * \
            (2 - (1 - a) * dividend) - c2
        return (e1, e2), lambda: jacobian(a, b)

    def jacobian(a: float, b: float) -> tuple[float, float, float, float]:
        v0 = (b - 1) * (f - 1)
        v1 = v0 - 1
        v2 = 1 - v0
        v3 = a * v0 / v1 - 1
        v4 = math.pow(-b / v1, a)
        v6 = math.pow(f, 2)
        v7 = math.pow(b, a)
        v9 = a * (v7 * v6 * k)
        v10 = 2 * math.pow(v2, a + 2)
        v11 = math.pow(v1, 2)
        v13 = f * k
        v14 = f - 1
        v15 = a - 1
        v16 = b - 1
        v17 = v15 * v0
        v18 = v6 * k
        v19 = v17 + 2
        v20 = v18 * v19
        d11 = -v13 * math.log(-b / v1) * v3 * v4 - (v13 * v4 * v0) / v1
        d12 = (a * v13 * (1 / v1 - (b * v14) / v11) * v3 * math.pow(-b / v1, v15)
               - v13 * v4 * ((a * v14) / v1 - (a * v16 * math.pow(v14, 2)) / v11))
        d21 = ((v9 * math.log(v2) * v19 * v16) / v10 - (v9 * math.pow(v16, 2) * v14) / v10
               - (v7 * v20 * v16) / v10 - (a * v7 * v18 * math.log(b) * v19 * v16) / v10)
        d22 = (-(v9 * v19) / v10 - (math.pow(a, 2) * math.pow(b, v15) * v20 * v16) / v10
               - (a * v7 * v18 * v17) / v10 - (a * v7 * v20 * (a + 2) * v0) / (2 * math.pow(v2, a + 3)))
        return d11, d12, d21, d22
    return function


def snb(hist: dict[int, int], population_size: int, sampling_fraction: float) -> Estimate:
    """Slide negative binomial (Chen & McNulty 1998) as ARX 3.9.2 estimates it: K from snb_classes, α and β
    from ARX's two equations by ARX's Newton-Raphson solver (engine.measure.risk.newton) from (1, 1) and its prepared
    start points; uniques K·β^α. No root: "did not converge", as ARX has no estimate there (NaN)."""
    c1 = float(hist.get(1, 0))
    c2 = float(hist.get(2, 0))
    k = snb_classes(hist, sampling_fraction)
    result = newton.solve(_snb_function(k, sampling_fraction, c1, c2), (1.0, 1.0))
    params: dict = {"K": k, "tries": result.tries, "iterations": result.iterations}
    if result.root is None:
        return Estimate("snb", None, None, False, f"ARX's Newton-Raphson solver found no root of the SNB equations "
                        f"from any of its {result.tries} start points ({result.iterations} iterations)", params)
    alpha, beta = result.root
    params.update(alpha=alpha, beta=beta)
    try:
        uniques = k * math.pow(beta, alpha)
    except (ArithmeticError, ValueError):
        uniques = math.nan
    if math.isnan(uniques) or uniques == 0:
        return Estimate("snb", None, None, False, f"the root α = {alpha:.4g}, β = {beta:.4g} gives no estimate "
                        "K·β^α", params)
    if not 0 < uniques <= population_size:
        # ARX would take it; a negative or impossible count of uniques is no estimate to publish on
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
