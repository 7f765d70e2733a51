"""Privacy accounting of MST and AIM: the (ε, δ) → ρ conversion against OpenDP's own zCDP → approximate-DP
conversion, the noise mechanisms' ρ against OpenDP's privacy maps, and the budget split against its closed form
(MST) or its rule (AIM: every round 1/(2σ²) + ε₀²/8, the total exactly ρ and never more)."""

from __future__ import annotations

import math

import numpy as np
import opendp.prelude as dp
import pandas as pd
import pytest

from anonymizer_app.engine.synthesis import SynthesisContext, get_synthesizer
from anonymizer_app.engine.synthesis.accounting import (
    approx_dp_epsilon,
    gaussian_rho,
    gaussian_sigma,
    rho_for,
    selection_epsilon,
    selection_rho,
)
from anonymizer_app.engine.synthesis.aim import initial_scales
from anonymizer_app.engine.synthesis.mst import budget_split
from anonymizer_app.engine.synthesis.noise import gaussian_measurement_rho, noisy_max_rho

dp.enable_features("contrib")


@pytest.mark.parametrize("epsilon,delta", [(0.5, 1e-9), (1.0, 1e-9), (5.0, 1e-6), (10.0, 1e-5)])
def test_rho_matches_opendps_conversion(epsilon, delta):
    rho = rho_for(epsilon, delta)
    # a Gaussian mechanism spending exactly rho (L2 sensitivity 1), converted by OpenDP to (ε, δ)-DP
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)
    gaussian = dp.m.make_gaussian(*space, scale=gaussian_sigma(rho))
    assert gaussian.map(1.0) == pytest.approx(rho, rel=1e-9)
    curve = dp.c.make_zCDP_to_approxDP(gaussian).map(1.0)
    assert curve.epsilon(delta) == pytest.approx(epsilon, rel=1e-6)
    assert approx_dp_epsilon(rho, delta) == pytest.approx(epsilon, rel=1e-6)
    # the simpler bound ε = ρ + 2·sqrt(ρ·ln(1/δ)) is looser: our ρ meets it with room to spare
    assert rho + 2 * math.sqrt(rho * math.log(1 / delta)) >= epsilon


@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.5])
def test_mechanisms_spend_what_opendp_says(rho):
    assert gaussian_measurement_rho(gaussian_sigma(rho)) == pytest.approx(rho, rel=1e-9)
    assert gaussian_rho(gaussian_sigma(rho)) == pytest.approx(rho, rel=1e-12)
    # report-noisy-max with Gumbel scale 2Δ/ε₀ is the ε₀-exponential mechanism: ρ = ε₀²/8
    for sensitivity in (1.0, 2.0):
        scale = 2 * sensitivity / selection_epsilon(rho)
        assert noisy_max_rho(scale, sensitivity) == pytest.approx(selection_rho(selection_epsilon(rho)), rel=1e-9)


def _frame(n=400, seed=3):
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], n)
    b = np.where(rng.random(n) < 0.8, a, rng.choice(["x", "y", "z"], n))
    c = rng.choice(["p", "q"], n)
    return pd.DataFrame({"a": a, "b": b, "c": c})


def test_mst_budget_split_is_the_closed_form():
    frame = _frame()
    context = SynthesisContext(["a", "b", "c"], epsilon=1.0, delta=1e-6, seed=1,
                               test_noise_rng=np.random.default_rng(1))
    outcome = get_synthesizer("mst").run(frame, context, {"iterations": 200})
    rho = rho_for(1.0, 1e-6)
    d = 3
    parts = {p["step"]: p for p in outcome.budget["parts"]}
    assert parts["1-way marginals"]["rho"] == pytest.approx(rho / 3, rel=1e-12)
    assert parts["1-way marginals"]["sigma"] == pytest.approx(math.sqrt(d / (2 * rho / 3)), rel=1e-12)
    assert parts["tree selection (exponential mechanism)"]["rho"] == pytest.approx(rho / 3, rel=1e-12)
    assert parts["2-way marginals"]["sigma"] == pytest.approx(math.sqrt((d - 1) / (2 * rho / 3)), rel=1e-12)
    assert outcome.budget["spent"] == pytest.approx(rho, rel=1e-12)
    assert outcome.budget["spent"] <= rho * (1 + 1e-12)
    assert budget_split(rho, d) == outcome.budget["split"]
    assert len(outcome.figures["tree"]) == d - 1
    assert outcome.budget["epsilon_spent"] == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize("epsilon", [0.5, 5.0])
def test_aim_rounds_add_up_to_the_budget_and_never_exceed_it(epsilon):
    frame = _frame()
    context = SynthesisContext(["a", "b", "c"], epsilon=epsilon, delta=1e-6, seed=2,
                               test_noise_rng=np.random.default_rng(2))
    outcome = get_synthesizer("aim").run(frame, context, {"iterations": 100, "rounds": 6})
    rho = rho_for(epsilon, 1e-6)
    parts = outcome.budget["parts"]
    sigma0, eps0 = initial_scales(rho, 6)
    assert parts[0]["rho"] == pytest.approx(3 / (2 * sigma0**2), rel=1e-12)
    assert sigma0 == pytest.approx(math.sqrt(6 / (2 * 0.9 * rho)), rel=1e-12)
    running = parts[0]["rho"]
    for part in parts[1:]:
        # each round: its Gaussian measurement plus its selection
        assert part["rho"] == pytest.approx(1 / (2 * part["sigma"] ** 2) + part["selection_epsilon"] ** 2 / 8,
                                            rel=1e-12)
        running += part["rho"]
        assert running <= rho * (1 + 1e-12)
    assert outcome.budget["spent"] == pytest.approx(rho, rel=1e-9)
    assert math.fsum(p["rho"] for p in parts) <= rho * (1 + 1e-12)
