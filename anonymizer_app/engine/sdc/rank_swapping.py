"""Rank swapping of numeric variables (sdcMicro's ``rankSwap``, R/rankSwap.R and src/RankSwapping.h).

Per variable, as sdcMicro does it:

1. the present values are sorted, largest first; missing cells never move;
2. the largest ``floor(n·top%)`` values are replaced by their mean and the smallest ``floor(n·bottom%)`` by
   theirs (top and bottom coding); those records take no part in the swapping;
3. the allowed rank distance P (a fraction of n', the number of records left to swap) is given, or derived:
   from R0 (the wanted correlation between original and swapped values), P = √(2·Var·(1−R0)) / |B−T|, or from
   K0 (the wanted relative change of means), P = √(8/3)·K0·|mean| / |B−T|, where Var and mean are the
   population variance and mean of the values left to swap, T the smallest top-coded value (the largest value
   when nothing is top-coded) and B the largest bottom-coded value (the smallest value when nothing is
   bottom-coded); only one of P, R0 and K0 is given, R0 = 0.95 when none is;
4. going down the sorted values, each value not yet swapped is swapped with one drawn uniformly among the values
   not yet swapped at ranks j+1 … min(n', ⌊j + n'·P⌋) − 1; both are then done (each record moves at most once).

sdcMicro multiplies by P directly, so P is a fraction of n' (its help text speaks of percent). Its arithmetic is
single precision where the C++ code uses ``float`` (the ratios, Var, P, j + n'·P) and that is kept here, so the
ranges are the same; the draws come from ``numpy.random.default_rng(seed)`` instead of sdcMicro's own C++
generator, so a swapped table is equal to sdcMicro's in distribution, not record for record. Equal values keep
row order when sorted. The multiset of the values left to swap is kept exactly; with no top/bottom coding,
every variable's marginal distribution is kept exactly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..parameters import Parameter
from .base import SdcContext, SdcMethod, SdcOutcome, register
from .microaggregation import numeric_values, write_back
from .microaggregation_loss import utility_figures

F32 = np.float32


@dataclass
class SwapPlan:
    """The deterministic part of rank swapping one variable: sorted order, coding and the allowed distance."""

    order: np.ndarray  # row positions of the present values, largest value first
    values: np.ndarray  # the values in that order after top/bottom coding
    top: int  # how many are top coded
    bottom: int  # how many are bottom coded
    to_swap: int  # n': the values left to swap (positions 0..n'-1 after re-sorting)
    p: float  # the allowed rank distance as a fraction of n'
    top_mean: float | None
    bottom_mean: float | None


def _sequential_sum(values: np.ndarray) -> float:
    return float(np.add.accumulate(values)[-1]) if values.size else 0.0


def plan(values: np.ndarray, *, top_percent: float = 5.0, bottom_percent: float = 5.0, p: float | None = None,
         r0: float | None = None, k0: float | None = None) -> SwapPlan:
    given = [v is not None for v in (p, r0, k0)]
    if sum(given) > 1:
        raise InputError("give only one of p, r0 and k0")
    if not any(given):
        r0 = 0.95
    if top_percent + bottom_percent > 100:
        raise InputError(f"top and bottom percent together exceed 100 ({top_percent:g} + {bottom_percent:g})")
    present = np.flatnonzero(~np.isnan(values))
    order = present[np.lexsort((present, -values[present]))]  # largest first, equal values in row order
    sorted_values = values[order].astype(float)
    m = sorted_values.shape[0]
    top_ratio = min(max(F32(F32(top_percent) * F32(0.01)), F32(0.0)), F32(1.0))
    bottom_ratio = min(max(F32(F32(bottom_percent) * F32(0.01)), F32(0.0)), F32(1.0))
    top = int(F32(m) * top_ratio)
    bottom = int(math.floor(F32(m) * bottom_ratio))
    bottom_start = m - bottom
    if m == 0:
        return SwapPlan(order, sorted_values, 0, 0, 0, 0.0, None, None)
    top_value = sorted_values[top - 1] if top else sorted_values[0]
    top_mean = _sequential_sum(sorted_values[:top]) / top if top else None
    if top_mean is not None:
        sorted_values[:top] = top_mean
    bottom_value = sorted_values[bottom_start] if bottom else sorted_values[bottom_start - 1]
    bottom_sum = _sequential_sum(sorted_values[bottom_start:])
    bottom_mean = (bottom_sum / bottom if bottom_sum else 0.0) if bottom else None
    if bottom_mean is not None:
        sorted_values[bottom_start:] = bottom_mean
    # the values left to swap come first (still largest first), the coded ones after them
    middle = np.arange(top, bottom_start)
    rest = np.concatenate([np.arange(top), np.arange(bottom_start, m)])
    sequence = np.concatenate([middle, rest])
    order, sorted_values = order[sequence], sorted_values[sequence]
    n_swap = middle.shape[0]
    kept = sorted_values[:n_swap]
    mean = _sequential_sum(kept) / n_swap if n_swap else 0.0
    variance = F32(_sequential_sum(kept * kept) / n_swap - mean * mean) if n_swap else F32(0.0)
    delta = abs(bottom_value - top_value)
    if r0 is not None:
        product = F32(F32(F32(2.0) * variance) * F32(F32(1.0) - F32(r0)))
        fraction = F32(math.sqrt(max(float(product), 0.0)) / delta) if delta else F32(0.0)
    elif k0 is not None:
        fraction = F32(float(F32(math.sqrt(8.0 / 3.0)) * F32(k0)) * abs(mean) / delta) if delta else F32(0.0)
    else:
        fraction = F32(p)
    return SwapPlan(order, sorted_values, top, bottom, n_swap, float(fraction), top_mean, bottom_mean)


def swap_limits(n_swap: int, fraction: float) -> np.ndarray:
    """For each rank j, the end (exclusive) of its partner range: min(n', int(j + n'·P)) in single precision."""
    span = F32(F32(n_swap) * F32(fraction))
    ends = (np.arange(n_swap, dtype=np.float32) + span).astype(np.float64)
    return np.minimum(n_swap, np.trunc(ends).astype(np.int64))


def swap(values: np.ndarray, n_swap: int, fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Swap the first n_swap values (largest first) as sdcMicro does; returns them and the number of swaps."""
    out = values.copy()
    ends = swap_limits(n_swap, fraction).tolist()
    done = bytearray(n_swap)
    draws = rng.random(max(n_swap, 1)).tolist()
    used = 0
    swaps = 0

    def uniform() -> float:
        nonlocal draws, used
        if used == len(draws):
            draws, used = rng.random(max(n_swap, 1024)).tolist(), 0
        used += 1
        return draws[used - 1]

    for j in range(n_swap):
        if done[j]:
            continue
        lo, hi = j + 1, ends[j]
        width = hi - lo
        if width <= 0:
            continue
        partner = -1
        if width > 32:
            # drawing uniformly among the range and retrying on a done rank is uniform among the ranks not done
            for _ in range(32):
                candidate = lo + int(uniform() * width)
                if not done[candidate]:
                    partner = candidate
                    break
        if partner < 0:
            open_ranks = [c for c in range(lo, hi) if not done[c]]
            if not open_ranks:
                continue
            partner = open_ranks[int(uniform() * len(open_ranks))]
        out[j], out[partner] = out[partner], out[j]
        done[j] = done[partner] = 1
        swaps += 1
    return out, swaps


def rank_swap(frame: pd.DataFrame, variables: Sequence[str], *, top_percent: float = 5.0,
              bottom_percent: float = 5.0, p: float | None = None, r0: float | None = None,
              k0: float | None = None, seed: int = 0, context: SdcContext | None = None) -> SdcOutcome:
    x = numeric_values(frame, variables)
    rng = np.random.default_rng(seed)
    xm = x.copy()
    out = frame.copy()
    per_variable: dict[str, Any] = {}
    changed: dict[str, int] = {}
    for j, v in enumerate(variables):
        if context is not None:
            context.progress(j / len(variables), f"swapping {v}")
        swap_plan = plan(x[:, j], top_percent=top_percent, bottom_percent=bottom_percent, p=p, r0=r0, k0=k0)
        swapped, swaps = swap(swap_plan.values, swap_plan.to_swap, swap_plan.p, rng)
        xm[swap_plan.order, j] = swapped
        out[v] = write_back(frame[v], xm[:, j])
        differs = ~((x[:, j] == xm[:, j]) | (np.isnan(x[:, j]) & np.isnan(xm[:, j])))
        changed[v] = int(differs.sum())
        per_variable[v] = {"P": swap_plan.p, "top coded": swap_plan.top, "bottom coded": swap_plan.bottom,
                           "top mean": swap_plan.top_mean, "bottom mean": swap_plan.bottom_mean,
                           "swapped pairs": swaps,
                           "largest rank distance": int(math.floor(F32(F32(swap_plan.to_swap)
                                                                       * F32(swap_plan.p))))}
    if context is not None:
        context.progress(1.0, "rank swapping done")
    figures: dict[str, Any] = {"swapped pairs": sum(d["swapped pairs"] for d in per_variable.values())}
    figures.update(utility_figures(x, xm))
    given = {"p": p, "r0": r0, "k0": k0}
    parameters: dict[str, Any] = {"variables": list(variables), "top_percent": top_percent,
                                  "bottom_percent": bottom_percent, "seed": seed}
    parameters.update({k: v for k, v in given.items() if v is not None} or {"r0": 0.95})
    return SdcOutcome(out, figures=figures, changed_cells=changed, parameters=parameters,
                      details={"per variable": per_variable})


PARAMETERS = (
    Parameter("variables", str, None, "the numeric variables, comma-separated (default: the numeric key "
              "variables)"),
    Parameter("top_percent", float, 5.0, "percent of the largest values replaced by their mean before swapping",
              minimum=0.0, maximum=100.0),
    Parameter("bottom_percent", float, 5.0, "percent of the smallest values replaced by their mean",
              minimum=0.0, maximum=100.0),
    Parameter("p", float, None, "the largest rank distance of a swap as a fraction of the records swapped "
              "(give one of p, r0, k0)", minimum=0.0),
    Parameter("r0", float, None, "the wanted correlation between original and swapped values (0.95 when "
              "none of p, r0, k0 is given)", minimum=0.0, maximum=1.0),
    Parameter("k0", float, None, "the wanted relative change of the means", minimum=0.0),
)


def apply(frame: pd.DataFrame, context: SdcContext, options: Mapping[str, Any]) -> SdcOutcome:
    text = options.get("variables")
    variables = ([p.strip() for p in str(text).split(",") if p.strip()] if text
                 else list(context.numeric_variables))
    values = {p.name: p.validate(options[p.name]) for p in PARAMETERS[1:] if options.get(p.name) is not None}
    return rank_swap(frame, variables, top_percent=values.get("top_percent", 5.0),
                     bottom_percent=values.get("bottom_percent", 5.0), p=values.get("p"), r0=values.get("r0"),
                     k0=values.get("k0"), seed=context.seed, context=context)


register(SdcMethod(
    name="rank_swapping",
    label="Rank swapping",
    kind="perturbation",
    summary="Swaps each numeric value with another one of near rank (within a distance set by p, r0 or k0), "
            "after coding the top and bottom percent to their means, as sdcMicro's rankSwap; no k guarantee: "
            "the allowed distance, the swaps and the information loss are reported.",
    apply=apply,
    parameters=PARAMETERS,
    guarantee="",
    acts_on="numeric",
    reference="Moore (1996), Controlled data-swapping techniques for masking public use microdata sets; "
              "sdcMicro rankSwap()",
))
