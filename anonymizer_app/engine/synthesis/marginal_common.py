"""What MST and AIM share: measuring 1-way and k-way marginals with Gaussian noise, the budget record, the run's
guarantee in words, and turning a fitted model into the synthetic table."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from . import graphical, noise
from .accounting import approx_dp_epsilon
from .base import SynthesisContext
from .compression import Compression
from .discretize import Encoded, decode


def guarantee(epsilon: float, delta: float) -> str:
    return f"({epsilon:g}, {delta:g})-differential privacy for each person's record"


def measure(encoded: Encoded, clique: tuple[str, ...], sigma: float,
            context: SynthesisContext) -> graphical.Measurement:
    exact = graphical.marginal(encoded.codes, encoded.sizes, clique)
    return graphical.Measurement(clique, noise.add_gaussian(exact, sigma, context.test_noise_rng), sigma)


class Ledger:
    """The ρ spent, step by step, for the report (and the test that it never exceeds the budget)."""

    def __init__(self, rho: float, epsilon: float, delta: float):
        self.rho, self.epsilon, self.delta = rho, epsilon, delta
        self.parts: list[dict[str, Any]] = []

    def spend(self, step: str, rho: float, **details: Any) -> None:
        self.parts.append({"step": step, "rho": rho, **details})

    @property
    def spent(self) -> float:
        return math.fsum(p["rho"] for p in self.parts)

    def record(self) -> dict[str, Any]:
        spent = self.spent
        return {"unit": "rho (zCDP)", "epsilon": self.epsilon, "delta": self.delta, "rho": self.rho,
                "spent": spent, "epsilon_spent": approx_dp_epsilon(spent, self.delta) if spent > 0 else 0.0,
                "conversion": "Canonne, Kamath and Steinke 2020 (rho-zCDP to (epsilon, delta)-DP)",
                "parts": self.parts}


def synthetic_frame(model: graphical.Model, encoded: Encoded, context: SynthesisContext,
                    rows: int | None, compression: Compression | None = None) -> pd.DataFrame:
    """Rows drawn from the model (as many as the model's noisy total unless asked), decoded to values (MST:
    its merged cells first expanded to one of their values)."""
    count = int(rows) if rows else max(1, int(round(model.total)))
    codes = model.sample(count, context.seed)
    if compression is not None:
        codes = compression.expand(codes, np.random.default_rng([context.seed, 2]))
    rng = np.random.default_rng([context.seed, 1])
    return decode(codes, encoded, rng)
