"""Rank swapping against sdcMicro's rankSwap: its (commented) tests exactly, the deterministic part (sorting,
top/bottom coding, the allowed rank distance P from R0 or K0 in sdcMicro's single precision) exactly, and the
random part by its properties and in distribution with fixed seeds (sdcMicro draws from its own C++ generator,
so a swapped table cannot be equal record for record)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chisquare

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.sdc import METHODS, SdcContext
from anonymizer_app.engine.sdc.rank_swapping import plan, rank_swap, swap, swap_limits

SDCMICRO = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "sdcmicro"
ALPHA = 1e-4


def ab() -> pd.DataFrame:
    # test_rankSwap.R: test <- data.frame(a=1:10000, b=1:10000)
    return pd.DataFrame({"a": np.arange(1, 10001, dtype=float), "b": np.arange(1, 10001, dtype=float)})


@pytest.mark.parametrize("options", [
    {"p": 0.0, "top_percent": 0, "bottom_percent": 0},  # test_rankSwap.R:2-5 (P = 0)
    {"r0": 1.0, "top_percent": 0, "bottom_percent": 0},  # :7-10 (R0 = 1 gives P = 0)
    {"k0": 0.0, "top_percent": 0, "bottom_percent": 0},  # :12-15 (K0 = 0 gives P = 0)
])
def test_readme_cases_leave_a_unchanged(options):
    data = ab()
    outcome = rank_swap(data, ["a"], seed=1, **options)
    assert outcome.frame["a"].equals(data["a"]) and outcome.frame["b"].equals(data["b"])
    assert outcome.details["per variable"]["a"]["P"] == 0.0
    assert outcome.figures["swapped pairs"] == 0


def test_only_one_of_p_r0_k0():
    with pytest.raises(InputError, match="only one of p, r0 and k0"):
        plan(np.arange(10.0), p=0.1, r0=0.9)
    with pytest.raises(InputError, match="exceed 100"):
        plan(np.arange(10.0), top_percent=60, bottom_percent=50)


def _testdata_income() -> np.ndarray:
    return pd.read_csv(SDCMICRO / "testdata.csv")["income"].to_numpy(dtype=float)


def test_plan_top_bottom_coding_and_p_from_r0():
    x = _testdata_income()
    n = x.size  # 4580
    swap_plan = plan(x)  # defaults: top 5 %, bottom 5 %, R0 = 0.95
    # sdcMicro: Top = (int)(n * (5f * 0.01f)), Bottom = floor(n * ratio), in single precision
    ratio = np.float32(np.float32(5.0) * np.float32(0.01))
    top = int(np.float32(n) * ratio)
    assert swap_plan.top == top == swap_plan.bottom == 228
    descending = np.sort(x)[::-1]
    assert swap_plan.top_mean == pytest.approx(descending[:top].mean(), rel=1e-14)
    assert swap_plan.bottom_mean == pytest.approx(descending[n - top:].mean(), rel=1e-14)
    assert swap_plan.to_swap == n - 2 * top
    middle = descending[top:n - top]
    assert np.array_equal(swap_plan.values[:swap_plan.to_swap], middle)  # largest first
    # P = sqrt(2 Var (1 - R0)) / |B - T|: Var the population variance of the values left to swap,
    # T the smallest top-coded value, B the largest bottom-coded one
    t_value, b_value = descending[top - 1], descending[n - top]
    expected = math.sqrt(2 * middle.var() * (1 - 0.95)) / abs(b_value - t_value)
    assert swap_plan.p == pytest.approx(expected, rel=1e-6)  # single precision, as sdcMicro
    k0_plan = plan(x, k0=0.1)
    assert k0_plan.p == pytest.approx(math.sqrt(8 / 3) * 0.1 * abs(middle.mean()) / abs(b_value - t_value),
                                      rel=1e-6)
    assert plan(x, p=0.25).p == pytest.approx(0.25, rel=1e-7)


def test_swap_limits_single_precision():
    # r = min(n', (int)(j + n' * P)) with float arithmetic, as RankSwapping.h computes it
    n_swap, fraction = 123457, 0.0123
    ends = swap_limits(n_swap, fraction)
    f = np.float32(fraction)
    span = np.float32(n_swap) * f
    for j in (0, 1, 77, 5000, 99999, 123456):
        assert ends[j] == min(n_swap, int(np.float32(np.float32(j) + span)))


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_swaps_within_rank_distance_and_marginal_kept(seed):
    x = np.random.default_rng(100 + seed).normal(1000, 200, size=3000)
    data = pd.DataFrame({"x": x})
    outcome = rank_swap(data, ["x"], top_percent=0, bottom_percent=0, p=0.02, seed=seed)
    y = outcome.frame["x"].to_numpy()
    assert np.array_equal(np.sort(y), np.sort(x))  # the marginal distribution exactly
    rank = {v: r for r, v in enumerate(np.sort(x)[::-1])}  # rank 0 = largest (values are distinct)
    ends = swap_limits(3000, outcome.details["per variable"]["x"]["P"])
    moved = np.flatnonzero(y != x)
    assert moved.size == 2 * outcome.figures["swapped pairs"] > 1000
    where = {v: i for i, v in enumerate(x)}
    for i in moved:
        partner = where[y[i]]
        assert y[partner] == x[i]  # swapped in pairs: each record moves at most once
        low, high = sorted((rank[x[i]], rank[y[i]]))
        assert low < high < ends[low]  # the partner lies within the allowed rank distance
    assert outcome.changed_cells == {"x": moved.size}


def test_default_coding_then_permutation_of_the_middle():
    x = _testdata_income()
    outcome = rank_swap(pd.DataFrame({"income": x}), ["income"], seed=3)
    y = outcome.frame["income"].to_numpy()
    swap_plan = plan(x)
    coded_top = swap_plan.order[swap_plan.to_swap:swap_plan.to_swap + swap_plan.top]
    coded_bottom = swap_plan.order[swap_plan.to_swap + swap_plan.top:]
    assert (y[coded_top] == swap_plan.top_mean).all() and (y[coded_bottom] == swap_plan.bottom_mean).all()
    middle = swap_plan.order[:swap_plan.to_swap]
    assert np.array_equal(np.sort(y[middle]), np.sort(x[middle]))
    again = rank_swap(pd.DataFrame({"income": x}), ["income"], seed=3)
    assert again.frame.equals(outcome.frame)  # one seed, one table


def test_missing_cells_stay():
    x = np.arange(40, dtype=float)
    x[[3, 17, 30]] = np.nan
    outcome = rank_swap(pd.DataFrame({"x": x}), ["x"], top_percent=0, bottom_percent=0, p=0.5, seed=2)
    y = outcome.frame["x"].to_numpy()
    assert np.isnan(y[[3, 17, 30]]).all() and not np.isnan(np.delete(y, [3, 17, 30])).any()
    assert np.array_equal(np.sort(y[~np.isnan(y)]), np.sort(x[~np.isnan(x)]))


def test_first_partner_uniform_over_its_range():
    # rank 0 is never taken before its turn: its partner is uniform over ranks 1 .. ends[0]-1
    values = np.arange(50, 0, -1, dtype=float)  # already largest first
    fraction = 0.2  # ends[0] = int(50 * 0.2) = 10: partners 1..9
    counts = np.zeros(50, dtype=int)
    for seed in range(1800):
        out, _ = swap(values, 50, fraction, np.random.default_rng(seed))
        counts[int(np.flatnonzero(values == out[0])[0])] += 1
    assert counts[0] == 0 and counts[10:].sum() == 0
    assert chisquare(counts[1:10]).pvalue > ALPHA


def test_registry_entry_uses_the_run_seed():
    method = METHODS["rank_swapping"]
    assert method.kind == "perturbation" and method.guarantee == "" and method.acts_on == "numeric"
    data = pd.read_csv(SDCMICRO / "testdata.csv").iloc[:500]
    context = SdcContext(key_variables=["sex"], numeric_variables=["expend", "income"], seed=42)
    first = method.apply(data, context, {})
    second = method.apply(data, context, {})
    assert first.frame.equals(second.frame)
    assert first.parameters == {"variables": ["expend", "income"], "top_percent": 5.0, "bottom_percent": 5.0,
                                "seed": 42, "r0": 0.95}
    other = method.apply(data, SdcContext(key_variables=[], numeric_variables=["expend", "income"], seed=43), {})
    assert not other.frame.equals(first.frame)
