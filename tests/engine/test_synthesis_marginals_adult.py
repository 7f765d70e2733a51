"""MST on Adult at ε = 1 and 10 (δ = 1e-9, fixed seed and noise generator): every 1-way marginal of the
synthetic table within the error the noise and the sampling allow.

The tolerance, derived (not tuned), for a column with K cells (age: its hierarchy's level-1 groups) and n rows:

* the 1-way measurement adds e ~ N(0, σ₁² I_K), σ₁ = sqrt(3d / (2ρ)) (MST's split, d columns). E‖e‖₁ = K·σ₁·
  sqrt(2/π), and ‖e‖₁ is sqrt(K)-Lipschitz in e, so P(‖e‖₁ > E + σ₁·sqrt(2K·ln(1/p))) ≤ p (Gaussian
  concentration); p = 1e-6. The fitted model's marginal is taken to be no farther from the truth than the
  measurement (it fits this measurement and the 2-way ones that also carry the column);
* drawing n rows from the model adds, per cell, a binomial error of standard deviation ≤ sqrt(n·p_i); four of
  them summed over the cells is at most 4·sqrt(K·n) (Cauchy-Schwarz, Σ sqrt(p_i) ≤ sqrt(K));
* TVD = ‖·‖₁ / (2n)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.model.formats import read_hierarchy_text
from anonymizer_app.engine.synthesis import SynthesisContext, get_synthesizer
from anonymizer_app.engine.synthesis.accounting import rho_for

ADULT = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "adult"


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [1.0, 10.0])
def test_mst_one_way_marginals_within_the_noise_bound(epsilon):
    frame = pd.read_csv(ADULT / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    columns = list(frame.columns)
    hierarchies = {c: read_hierarchy_text((ADULT / f"adult_hierarchy_{c}.csv").read_text(), c) for c in columns}
    context = SynthesisContext(columns, {"age": "numeric"}, hierarchies, epsilon=epsilon, delta=1e-9, seed=0,
                               test_noise_rng=np.random.default_rng(0))
    outcome = get_synthesizer("mst").run(frame, context, {})
    synthetic = outcome.frame
    n, d = len(frame), len(columns)
    sigma1 = math.sqrt(3 * d / (2 * rho_for(epsilon, 1e-9)))
    assert outcome.budget["parts"][0]["sigma"] == pytest.approx(sigma1)
    age = hierarchies["age"]
    group = {str(leaf): str(age.labels[1][age.maps[1][i]]) for i, leaf in enumerate(age.leaves)}
    for c in columns:
        if c == "age":
            cells = len(age.labels[1])
            original, made = frame[c].map(group), synthetic[c].map(group)
        else:
            cells = len(hierarchies[c].leaves)
            original, made = frame[c], synthetic[c]
        p = original.value_counts(normalize=True)
        q = made.value_counts(normalize=True)
        p, q = p.align(q, fill_value=0.0)
        tvd = 0.5 * float(np.abs(p - q).sum())
        noise = sigma1 * (cells * math.sqrt(2 / math.pi) + math.sqrt(2 * cells * math.log(1e6)))
        sampling = 4 * math.sqrt(cells * n)
        assert tvd <= (noise + sampling) / (2 * n), (c, tvd)
