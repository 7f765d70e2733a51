"""MST (McKenna, Miklau and Sheldon 2021, "Winning the NIST Contest: A scalable and general approach to
differentially private synthetic data"), in ρ-zCDP.

The budget ρ (from the user's ε, δ: engine/synthesis/accounting.py) is split in three equal parts:

1. every 1-way marginal measured with Gaussian noise σ₁ = sqrt(d / (2ρ/3)) (d columns: ρ/(3d) each);
2. a maximum spanning tree over the columns, grown Kruskal-style in d − 1 rounds; each round picks, by the
   exponential mechanism (score: the L1 distance between a pair's counts and its estimate from the 1-way model,
   sensitivity 1), one pair joining two parts of the forest: ρ/(3(d − 1)) each;
3. the d − 1 chosen 2-way marginals measured with σ₂ = sqrt((d − 1) / (2ρ/3)).

Between 1 and 2, as in the paper, each column's values with a noisy 1-way count below 3σ₁ are merged into one
cell (engine/synthesis/compression.py: post-processing, no budget); steps 2 and 3 and the model work on the
merged domains, and a synthetic row in a merged cell gets one of its values uniformly.

With one column the whole ρ goes to its 1-way marginal. A graphical model fitted to all measurements (mbi) gives
the synthetic rows."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..parameters import Parameter
from . import graphical, noise
from .accounting import gaussian_rho, gaussian_sigma, rho_for
from .base import SynthesisContext, SynthesisOutcome, Synthesizer, register
from .compression import Compression, compress
from .discretize import encode
from .marginal_common import Ledger, guarantee, measure, synthetic_frame


def budget_split(rho: float, columns: int) -> dict[str, float]:
    """The closed form of MST's split: ρ per 1-way measurement, per selection round, per 2-way measurement."""
    if columns < 2:
        return {"one_way_each": rho, "selection_each": 0.0, "two_way_each": 0.0}
    return {"one_way_each": rho / 3 / columns, "selection_each": rho / 3 / (columns - 1),
            "two_way_each": rho / 3 / (columns - 1)}


class _Forest:
    def __init__(self, names: list[str]):
        self.parent = {n: n for n in names}

    def root(self, n: str) -> str:
        while self.parent[n] != n:
            self.parent[n] = self.parent[self.parent[n]]
            n = self.parent[n]
        return n

    def join(self, a: str, b: str) -> None:
        self.parent[self.root(a)] = self.root(b)


def synthesize(frame: pd.DataFrame, context: SynthesisContext, options: Mapping[str, Any]) -> SynthesisOutcome:
    progress = context.progress
    progress(0.0, "discretizing the columns")
    encoded = encode(frame, context)
    names = list(context.columns)
    d = len(names)
    rho = rho_for(context.epsilon, context.delta)
    split = budget_split(rho, d)
    ledger = Ledger(rho, context.epsilon, context.delta)
    rng = context.test_noise_rng

    progress(0.05, "measuring the 1-way marginals")
    sigma1 = gaussian_sigma(split["one_way_each"])
    measurements = [measure(encoded, (c,), sigma1, context) for c in names]
    ledger.spend("1-way marginals", d * gaussian_rho(sigma1), measurements=d, sigma=sigma1)
    context.check_cancelled()

    chosen: list[tuple[str, str]] = []
    iters = int(options["iterations"])
    compression: Compression | None = None
    domains = encoded  # the codes the pairs are counted on: the merged domains when d ≥ 2
    if d >= 2:
        progress(0.15, "choosing the tree of column pairs")
        compression = compress(encoded, measurements)
        domains = compression.encoded
        pairs = list(itertools.combinations(names, 2))
        # the 1-way model is the product of the noisy 1-way shares (a graphical model with no edges needs no
        # fitting: post-processing of step 1's measurements), scaled to their mean noisy total
        shares = {m.clique[0]: np.clip(m.noisy, 0, None) for m in compression.one_way}
        total = max(1.0, float(np.mean([m.noisy.sum() for m in measurements])))
        shares = {c: s / s.sum() if s.sum() > 0 else np.full(s.size, 1 / s.size) for c, s in shares.items()}
        errors = {p: float(np.abs(graphical.marginal(domains.codes, domains.sizes, p)
                                  - total * np.outer(shares[p[0]], shares[p[1]]).ravel()).sum()) for p in pairs}
        forest = _Forest(names)
        for _ in range(d - 1):
            context.check_cancelled()
            candidates = [p for p in pairs if forest.root(p[0]) != forest.root(p[1])]
            pick = candidates[noise.exponential_mechanism(np.array([errors[p] for p in candidates]),
                                                          split["selection_each"], 1.0, rng)]
            forest.join(*pick)
            chosen.append(pick)
        ledger.spend("tree selection (exponential mechanism)", (d - 1) * split["selection_each"], rounds=d - 1)
        progress(0.35, "measuring the chosen 2-way marginals")
        sigma2 = gaussian_sigma(split["two_way_each"])
        measurements = compression.one_way + [measure(domains, p, sigma2, context) for p in chosen]
        ledger.spend("2-way marginals", (d - 1) * gaussian_rho(sigma2), measurements=d - 1, sigma=sigma2)
    context.check_cancelled()

    progress(0.4, "fitting the graphical model")
    blocks = [0]

    def tick() -> None:
        blocks[0] += 1
        progress(0.4 + 0.5 * min(1.0, blocks[0] * 50 / max(iters, 1)), "fitting the graphical model")
        context.check_cancelled()

    model = graphical.estimate(domains.sizes, measurements, iters=iters, callback=tick)
    progress(0.92, "sampling the synthetic rows")
    out = synthetic_frame(model, encoded, context, int(options["rows"]) or None, compression)
    progress(1.0, "done")
    return SynthesisOutcome(
        frame=out, budget=ledger.record() | {"split": split},
        parameters={"epsilon": context.epsilon, "delta": context.delta, "rho": rho, "seed": context.seed,
                    "iterations": iters, "rows": len(out),
                    "discretization": [c.describe() for c in encoded.columns]},
        figures={"tree": [list(p) for p in chosen], "estimated_total": model.total,
                 "compressed_domains": compression.describe() if compression is not None else []},
        guarantee=guarantee(context.epsilon, context.delta))


PARAMETERS = (
    Parameter("iterations", int, 1000, "mirror-descent iterations fitting the graphical model", minimum=50,
              maximum=20000),
    Parameter("rows", int, 0, "rows to synthesize (0: as many as the model's noisy total)", minimum=0,
              maximum=10_000_000),
)

register(Synthesizer(
    name="mst", label="MST (maximum spanning tree of marginals)",
    summary="Measures every column's counts and a tree of column pairs with Gaussian noise, fits a graphical "
            "model and samples rows from it: (ε, δ)-differential privacy.",
    dp=True, synthesize=synthesize, parameters=PARAMETERS,
    reference="McKenna, Miklau, Sheldon (2021), Winning the NIST Contest, J. Privacy and Confidentiality 11(3)"))
