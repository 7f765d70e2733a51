"""Post-processing of noisy counts (engine/dp_postprocess.py): each mode's output equals the raw noisy counts
processed by hand here: a worked example with every step written out, and seeded Laplace draws processed by an
independent implementation (θ found by bisection, remainders handed out one by one)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import InputError, dp
from anonymizer_app.engine.dp_postprocess import MODES, post_process

# the worked example of docs/definitions.md
RAW = [-1.64, 3.4, 7.5, 0.2, 2.9]


def test_worked_example_every_mode():
    assert post_process(RAW, "none") == RAW
    assert post_process(RAW, "round") == [-2, 3, 8, 0, 3]  # 7.5 rounds away from zero
    assert post_process(RAW, "round-clamp") == [0, 3, 8, 0, 3]
    # consistent: Σ = 12.36 → T = 12; θ = (7.5 + 3.4 + 2.9 − 12) / 3 = 0.6 → x = [0, 2.8, 6.9, 0, 2.3] (Σ 12);
    # floors [0, 2, 6, 0, 2] (Σ 10), the 2 units left to the largest remainders 0.9 (cell 3) and 0.8 (cell 2)
    assert post_process(RAW, "consistent") == [0, 3, 7, 0, 2]


def test_halves_ties_and_edge_cases():
    assert post_process([0.5, -0.5, 1.5, -2.5], "round") == [1, -1, 2, -3]
    assert post_process([0.5, -0.5, 1.5, -2.5], "round-clamp") == [1, 0, 2, 0]
    # Σ = 3 → θ: (2.5 + 2.5 − 3)/2 = 1 → [1.5, 1.5, 0]; floors [1, 1, 0], one left: the tie goes to the first cell
    assert post_process([2.5, 2.5, -2.0], "consistent") == [2, 1, 0]
    assert post_process([-3.2, -0.4, 1.1], "consistent") == [0, 0, 0]  # Σ < 0: T = 0
    assert post_process([1, 2, 3], "consistent") == [1, 2, 3]  # already counts: unchanged
    assert post_process([], "consistent") == []
    with pytest.raises(InputError, match="unknown post-processing 'clip'"):
        post_process(RAW, "clip")
    with pytest.raises(InputError, match="not a finite number"):
        post_process([1.0, math.nan], "round")


def _by_hand_consistent(v: list[float]) -> list[int]:
    """T = round(Σv) (halves up, at least 0); θ with Σ max(v − θ, 0) = T found by bisection; floors plus one unit
    per largest remainder, handed out one at a time (ties: the earlier cell)."""
    s = sum(v)
    total = max(0, int(math.floor(abs(s) + 0.5)) * (1 if s >= 0 else -1))
    if total == 0:
        return [0] * len(v)
    lo, hi = min(v) - total - 1, max(v)
    for _ in range(200):
        mid = (lo + hi) / 2
        if sum(max(x - mid, 0.0) for x in v) > total:
            lo = mid
        else:
            hi = mid
    x = [max(a - (lo + hi) / 2, 0.0) for a in v]
    out = [math.floor(a) for a in x]
    remainders = [(a - math.floor(a), -i) for i, a in enumerate(x)]
    for _ in range(total - sum(out)):
        best = max(range(len(x)), key=lambda i: remainders[i])
        out[best] += 1
        remainders[best] = (-1.0, 0)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 29])
def test_seeded_laplace_counts_processed_by_hand(seed):
    rng = np.random.default_rng(seed)
    true = rng.integers(0, 8, 12)
    raw = [float(x) for x in true + rng.laplace(0, 2.0, 12)]
    assert post_process(raw, "none") == raw
    assert post_process(raw, "round") == [int(math.copysign(math.floor(abs(x) + 0.5), x)) for x in raw]
    assert post_process(raw, "round-clamp") == [max(0, int(math.copysign(math.floor(abs(x) + 0.5), x))) for x in raw]
    consistent = post_process(raw, "consistent")
    assert consistent == _by_hand_consistent(raw)
    assert min(consistent) >= 0 and sum(consistent) == max(0, round(sum(raw)))


@pytest.mark.parametrize("mode", MODES)
def test_a_release_publishes_its_noisy_counts_post_processed(mode):
    table = pd.DataFrame({"sex": ["F", "M", "M", "F", "M"], "job": ["a", "b", "b", "a", "c"]})
    r = dp.dp_counts(table, ["sex", "job"], 0.5, "laplace", post_processing=mode)
    assert r.post_processing == mode
    assert r.released_counts == post_process(r.noisy_counts, mode)
    assert r.frame()["noisy_count"].tolist() == r.released_counts
    assert [c["released_count"] for c in r.summary()["cells"]] == r.released_counts
    assert r.errors == dp.error_figures(r.true_counts, r.released_counts)
    with pytest.raises(InputError, match="unknown post-processing"):
        dp.dp_counts(table, ["sex"], 0.5, post_processing="bogus")
