"""AIM (McKenna, Mullins, Sheldon and Miklau 2022, "AIM: An Adaptive and Iterative Mechanism for Differentially
Private Synthetic Data"), in ρ-zCDP, with the workload of all column pairs.

With T = rounds (16·d by default, d columns) and α = 0.9 of each round's budget for measuring:

* initialization: every 1-way marginal measured with σ = sqrt(T / (2αρ)): d/(2σ²) spent;
* each round spends 1/(2σ²) + ε₀²/8: the exponential mechanism (ε₀ = sqrt(8(1 − α)ρ/T), sensitivity the largest
  weight) picks the candidate marginal (a column or a pair; weight: how many workload pairs it overlaps) whose
  model estimate is worst, less the noise's expected L1 error sqrt(2/π)·σ·cells, among those that keep the
  model under ``max_model_mb`` × the share of ρ spent; it is measured with σ and the model refitted (warm start);
  when the refit moved that marginal by no more than sqrt(2/π)·σ·cells, σ is halved and ε₀ doubled;
* when less than two rounds' worth of ρ is left, the last round spends exactly what is left (α to measuring).

The total spent never exceeds ρ (the ledger records each round; a test checks it).

Speed (post-processing only, the accounting above is untouched): each round's model estimate of every candidate
is exact, by numpy belief propagation on the model's junction tree (tree_inference.py), not by a jax program
compiled per model; the refit starts from the previous round's potentials, and measurements of one clique are
pooled (graphical.pooled), so jax compiles one program per new set of cliques rather than one per round
(12 on Adult at ε = 1 over its whole run)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..parameters import Parameter
from . import graphical, noise, tree_inference
from .accounting import gaussian_rho, rho_for, selection_rho
from .base import SynthesisContext, SynthesisOutcome, Synthesizer, register
from .discretize import encode
from .marginal_common import Ledger, guarantee, measure, synthetic_frame

MEASURE_SHARE = 0.9  # α: each round's share of ρ for measuring, the rest for selecting
def initial_scales(rho: float, rounds: int) -> tuple[float, float]:
    """(σ, ε₀) of the first rounds: σ = sqrt(T/(2αρ)), ε₀ = sqrt(8(1 − α)ρ/T)."""
    return (math.sqrt(rounds / (2 * MEASURE_SHARE * rho)),
            math.sqrt(8 * (1 - MEASURE_SHARE) * rho / rounds))


def synthesize(frame: pd.DataFrame, context: SynthesisContext, options: Mapping[str, Any]) -> SynthesisOutcome:
    progress = context.progress
    progress(0.0, "discretizing the columns")
    encoded = encode(frame, context)
    names = list(context.columns)
    sizes = encoded.sizes
    d = len(names)
    rho = rho_for(context.epsilon, context.delta)
    rounds = int(options["rounds"]) or 16 * d
    iters = int(options["iterations"])
    max_mb = float(options["max_model_mb"])
    ledger = Ledger(rho, context.epsilon, context.delta)
    rng = context.test_noise_rng

    workload: list[tuple[str, ...]] = list(itertools.combinations(names, 2)) or [(names[0],)]
    candidates: dict[tuple[str, ...], float] = {}
    for w in workload:
        for size in range(1, len(w) + 1):
            for cl in itertools.combinations(w, size):
                candidates[cl] = candidates.get(cl, 0.0) + float(len(set(cl) & set(w)))
    sensitivity = max(candidates.values())

    sigma, epsilon0 = initial_scales(rho, rounds)
    progress(0.02, "measuring the 1-way marginals")
    measurements = [measure(encoded, (c,), sigma, context) for c in names]
    ledger.spend("initialization: 1-way marginals", d * gaussian_rho(sigma), measurements=d, sigma=sigma)
    model = graphical.estimate(sizes, measurements, iters=iters)
    cliques: list[tuple[str, ...]] = [(c,) for c in names]
    exact: dict[tuple[str, ...], np.ndarray] = {}  # counted when first allowed (a large pair may never be)

    chosen: list[dict[str, Any]] = []
    final = False
    round_number = 0
    while not final:
        context.check_cancelled()
        round_number += 1
        left = rho - ledger.spent
        if left < 2 * (gaussian_rho(sigma) + selection_rho(epsilon0)):
            # the last round spends exactly what is left
            sigma = math.sqrt(1 / (2 * MEASURE_SHARE * left))
            epsilon0 = math.sqrt(8 * (1 - MEASURE_SHARE) * left)
            final = True
        spent_after = ledger.spent + gaussian_rho(sigma) + selection_rho(epsilon0)
        limit = max_mb * spent_after / rho
        allowed = [cl for cl in candidates if graphical.model_size_mb(sizes, cliques + [cl]) <= limit]
        if not allowed:  # nothing fits yet: measure a 1-way marginal again (always fits)
            allowed = [(c,) for c in names]
        bias = math.sqrt(2 / math.pi) * sigma
        for cl in allowed:
            if cl not in exact:
                exact[cl] = graphical.marginal(encoded.codes, sizes, cl)
        tree = tree_inference.calibrate(model.fitted, sizes)
        estimates = {cl: tree.marginal(cl) for cl in allowed}
        scores = np.array([candidates[cl] * (np.abs(exact[cl] - estimates[cl]).sum() - bias * exact[cl].size)
                           for cl in allowed])
        pick = allowed[noise.exponential_mechanism(scores, selection_rho(epsilon0), sensitivity, rng)]
        before = estimates[pick]
        measurements.append(measure(encoded, pick, sigma, context))
        ledger.spend(f"round {round_number}", gaussian_rho(sigma) + selection_rho(epsilon0), clique=list(pick),
                     sigma=sigma, selection_epsilon=epsilon0)
        if pick not in cliques:
            cliques.append(pick)
        progress(min(0.9, 0.05 + 0.85 * ledger.spent / rho), f"round {round_number}: measured {', '.join(pick)}")
        model = graphical.estimate(sizes, measurements, iters=max(50, iters // 10), warm_start=model)
        moved = float(np.abs(model.marginal(pick) - before).sum())
        chosen.append({"round": round_number, "clique": list(pick), "sigma": sigma})
        if moved <= bias * before.size and not final:
            sigma, epsilon0 = sigma / 2, epsilon0 * 2  # the model already knew this marginal: measure finer
    context.check_cancelled()
    progress(0.9, "fitting the final model")
    model = graphical.estimate(sizes, measurements, iters=iters, warm_start=model)
    progress(0.95, "sampling the synthetic rows")
    out = synthetic_frame(model, encoded, context, int(options["rows"]) or None)
    progress(1.0, "done")
    return SynthesisOutcome(
        frame=out, budget=ledger.record() | {"rounds_planned": rounds, "measure_share": MEASURE_SHARE},
        parameters={"epsilon": context.epsilon, "delta": context.delta, "rho": rho, "seed": context.seed,
                    "iterations": iters, "rounds": rounds, "max_model_mb": max_mb, "rows": len(out),
                    "discretization": [c.describe() for c in encoded.columns]},
        figures={"rounds": chosen, "estimated_total": model.total},
        guarantee=guarantee(context.epsilon, context.delta))


PARAMETERS = (
    Parameter("iterations", int, 1000, "mirror-descent iterations of the first and final fits (a tenth per round)",
              minimum=50, maximum=20000),
    Parameter("rounds", int, 0, "T, the rounds the budget is planned for (0: 16 × the number of columns)",
              minimum=0, maximum=10000),
    Parameter("max_model_mb", float, 80.0, "the largest graphical model, in MB (the paper's default 80)",
              minimum=1.0, maximum=4000.0, label="Largest model (MB)"),
    Parameter("rows", int, 0, "rows to synthesize (0: as many as the model's noisy total)", minimum=0,
              maximum=10_000_000),
)

register(Synthesizer(
    name="aim", label="AIM (adaptive and iterative marginals)",
    summary="Chooses, round after round, the column or pair the model gets most wrong, measures it with Gaussian "
            "noise and refits a graphical model: (ε, δ)-differential privacy.",
    dp=True, synthesize=synthesize, parameters=PARAMETERS,
    reference="McKenna, Mullins, Sheldon, Miklau (2022), AIM, Proc. VLDB Endowment 15(11)"))
