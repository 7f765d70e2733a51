"""Synthetic-data figures recomputed by plain loops (TVD, exact copies, closest-record distance, rare-QI copies,
membership AUC as the Mann-Whitney share of member/non-member pairs ordered right), and the CART baseline's
reproducibility from its seed."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.measure.synthetic_figures import synthetic_figures
from anonymizer_app.engine.synthesis import SynthesisContext, get_synthesizer


def _tables(seed=4):
    rng = np.random.default_rng(seed)
    def frame(n):
        return pd.DataFrame({"sex": rng.choice(["F", "M"], n), "age": rng.integers(20, 30, n).astype(str),
                             "job": rng.choice(["a", "b", "c", "d"], n, p=[0.6, 0.2, 0.15, 0.05])})
    original, holdout, synthetic = frame(120), frame(60), frame(100)
    synthetic.iloc[:15] = original.iloc[30:45].to_numpy()  # some exact copies
    return original, holdout, synthetic


def _tvd(a, b, cols):
    pa = Counter(map(tuple, a[cols].to_numpy().tolist()))
    pb = Counter(map(tuple, b[cols].to_numpy().tolist()))
    return 0.5 * sum(abs(pa[k] / len(a) - pb[k] / len(b)) for k in set(pa) | set(pb))


def _distance(r, s, numeric, ranges):
    total = 0.0
    for c in r.index:
        if c in numeric:
            total += min(abs(float(r[c]) - float(s[c])) / ranges[c], 1.0)
        else:
            total += r[c] != s[c]
    return total / len(r)


def test_figures_equal_plain_recomputation():
    original, holdout, synthetic = _tables()
    cols, qi, numeric = ["sex", "age", "job"], ["sex", "age"], {"age"}
    f = synthetic_figures(original, synthetic, cols, {"age": "numeric"}, qi, holdout, rare_below=3, seed=0)
    one = {c: _tvd(original, synthetic, [c]) for c in cols}
    two = [_tvd(original, synthetic, list(p)) for p in itertools.combinations(cols, 2)]
    assert f["tvd"]["one_way"] == pytest.approx(one)
    assert f["tvd"]["two_way_mean"] == pytest.approx(np.mean(two))
    assert f["tvd"]["two_way_max"] == pytest.approx(max(two))
    ages = original["age"].astype(float)
    ranges = {"age": ages.max() - ages.min()}
    dcr = [min(_distance(s, o, numeric, ranges) for _, o in original.iterrows()) for _, s in synthetic.iterrows()]
    originals = set(map(tuple, original.to_numpy().tolist()))
    copies = [tuple(r) in originals for r in synthetic.to_numpy().tolist()]
    assert f["closest_record"]["exact_copies"] == sum(copies) == sum(d == 0 for d in dcr)
    assert f["closest_record"]["median"] == pytest.approx(np.median(dcr), abs=1e-6)
    freq = Counter(map(tuple, original[qi].to_numpy().tolist()))
    rare = [tuple(r[q] for q in qi) for r, c in zip(synthetic.to_dict("records"), copies)
            if c and freq[tuple(r[q] for q in qi)] < 3]
    assert f["rare_exact_copies"]["rows"] == len(rare)
    assert f["rare_exact_copies"]["combinations"] == len(set(rare))
    # membership: every member and held-out row (60 each: sample ≥ both sides takes 60 of the 120 members)
    take = f["membership"]["rows_each"]
    assert take == 60
    rng = np.random.default_rng(0)
    members = original.iloc[np.sort(rng.choice(len(original), take, replace=False))]
    held = holdout.iloc[np.sort(rng.choice(len(holdout), take, replace=False))]
    both = pd.concat([original, holdout])
    ranges = {"age": both["age"].astype(float).max() - both["age"].astype(float).min()}
    def score(frame):
        return [-min(_distance(r, s, numeric, ranges) for _, s in synthetic.iterrows()) for _, r in frame.iterrows()]
    sm, sh = score(members), score(held)
    pairs = [(1.0 if a > b else 0.5 if a == b else 0.0) for a in sm for b in sh]
    assert f["membership"]["auc"] == pytest.approx(np.mean(pairs), abs=1e-9)


def test_cart_is_reproducible_from_its_seed_and_keeps_the_columns():
    original, _, _ = _tables(seed=9)
    cart = get_synthesizer("cart")
    assert not cart.dp and "no formal privacy guarantee" in cart.label
    first = cart.run(original, SynthesisContext(["sex", "age", "job"], {"age": "numeric"}, seed=7), {"min_leaf": 3})
    again = cart.run(original, SynthesisContext(["sex", "age", "job"], {"age": "numeric"}, seed=7), {"min_leaf": 3})
    other = cart.run(original, SynthesisContext(["sex", "age", "job"], {"age": "numeric"}, seed=8), {"min_leaf": 3})
    pd.testing.assert_frame_equal(first.frame, again.frame)
    assert not first.frame.equals(other.frame)
    assert list(first.frame.columns) == ["sex", "age", "job"] and len(first.frame) == len(original)
    # every value drawn is an observed one
    for c in first.frame.columns:
        assert set(first.frame[c]) <= set(original[c])
    assert first.guarantee == "" and first.budget == {}


def test_rare_copies_with_one_quasi_identifier():
    """One QI groups on a plain index: the rare combinations were looked up as tuples and never found (the review
    of the web page found 0 flagged where three rows copy the rare 'F')."""
    from anonymizer_app.engine.measure.synthetic_figures import rare_exact_copies

    original = pd.DataFrame({"sex": ["F"] * 3 + ["M"] * 6, "zip": [str(10 + i) for i in range(9)]})
    rare = rare_exact_copies(original, original.copy(), ["sex", "zip"], ["sex"])
    counted = Counter(original["sex"])
    expected = sum(1 for s in original["sex"] if counted[s] < 5)
    assert rare["rows"] == expected == 3
    assert rare["combinations"] == 1 and rare["listed"] == [{"qi": {"sex": "F"}, "original_frequency": 3}]
    two = rare_exact_copies(original, original.copy(), ["sex", "zip"], ["sex", "zip"])
    assert two["rows"] == 9 and two["combinations"] == 9  # every (sex, zip) occurs once
