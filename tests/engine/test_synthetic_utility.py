"""Models trained on a synthetic set (engine/measure/synthetic_utility.py) and the held-out rows of a synthesis
(engine/synthesis/holdout.py): toy tables whose scores are worked out by hand in the comments."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import InputError
from anonymizer_app.engine.measure.model_utility import UtilitySpec
from anonymizer_app.engine.measure.synthetic_utility import evaluate_synthetic
from anonymizer_app.engine.synthesis.holdout import holdout_mask, rows_digest

MODELS = ["logistic", "random_forest", "gradient_boosting"]


def _table(pairs: list[tuple[str, str, int]]) -> pd.DataFrame:
    """Rows from (x, y, how many)."""
    x = [a for a, _, n in pairs for _ in range(n)]
    y = [b for _, b, n in pairs for _ in range(n)]
    return pd.DataFrame({"x": x, "y": y})


def _spec(**kw) -> UtilitySpec:
    return UtilitySpec(**{"target": "y", "features": ["x"], "models": MODELS, "seed": 1, **kw})


def test_a_synthetic_set_with_the_rule_reversed_gets_every_held_out_row_wrong():
    # the original: y = yes exactly when x = a (60 a/yes, 40 b/no read by the synthesizer; 10 a/yes, 30 b/no
    # held out); the synthetic rows reverse the rule (50 a/no, 50 b/yes). Every model (each leaf of 50 rows is
    # above gradient boosting's 20) learns its table's rule exactly, so by hand:
    # - trained on the original rows: 40 of 40 held-out rows right: accuracy 1, F1 1 for both classes, AUC 1
    #   (every yes row scores above every no row);
    # - trained on the synthetic rows: 0 of 40 right: accuracy 0, F1 0, AUC 0 (every no row scores above);
    # - baseline: the majority of the 100 original rows read is yes (60): 10 of 40 right, accuracy 1/4; F1 of
    #   yes: precision 10/40, recall 10/10 -> 2 * 1/4 * 1 / (1/4 + 1) = 2/5; F1 of no: 0 -> macro 1/5; AUC 1/2.
    train = _table([("a", "yes", 60), ("b", "no", 40)])
    test = _table([("a", "yes", 10), ("b", "no", 30)])
    synthetic = _table([("a", "no", 50), ("b", "yes", 50)])
    out = evaluate_synthetic(train, synthetic, test, _spec(), set())
    by = {(r["model"], r["trained_on"]): r for r in out["rows"]}
    assert [(r["model"], r["trained_on"]) for r in out["rows"]] == [
        (m, w) for m in MODELS for w in ("original", "synthetic")] + [("baseline", "baseline")]
    for model in MODELS:
        assert (by[(model, "original")]["accuracy"], by[(model, "original")]["f1_macro"],
                by[(model, "original")]["auc"]) == (1.0, 1.0, 1.0)
        assert (by[(model, "synthetic")]["accuracy"], by[(model, "synthetic")]["f1_macro"],
                by[(model, "synthetic")]["auc"]) == (0.0, 0.0, 0.0)
    base = by[("baseline", "baseline")]
    assert base["accuracy"] == pytest.approx(0.25)
    assert base["f1_macro"] == pytest.approx(0.2)
    assert base["auc"] == 0.5
    assert out["task"] == "classification" and out["metrics"] == ["accuracy", "auc", "f1_macro"]
    assert out["split"] == {"kind": "synthesis-holdout", "seed": 1, "folds": 1, "test_rows": 40, "train_rows": 100,
                            "synthetic_rows": 100, "test_share": 40 / 140}
    assert out["categories"] == ["x"] and out["numbers"] == []


def test_a_synthetic_set_that_keeps_the_rule_scores_as_the_original():
    # x a number: y = high exactly when x >= 50. Both tables keep the rule, with a wide gap between the classes
    # (0-20 against 80-100), so every model splits (or weighs) them apart: all 20 held-out rows right.
    train = pd.DataFrame({"x": [str(v) for v in range(0, 21)] * 3 + [str(v) for v in range(80, 101)] * 3})
    train["y"] = np.where(train["x"].astype(int) >= 50, "high", "low")
    synthetic = pd.DataFrame({"x": [str(v) for v in range(0, 21, 2)] * 5 + [str(v) for v in range(80, 101, 2)] * 5})
    synthetic["y"] = np.where(synthetic["x"].astype(int) >= 50, "high", "low")
    test = pd.DataFrame({"x": ["3", "7", "11", "15", "19", "1", "5", "9", "13", "17",
                               "83", "87", "91", "95", "99", "81", "85", "89", "93", "97"]})
    test["y"] = np.where(test["x"].astype(int) >= 50, "high", "low")
    out = evaluate_synthetic(train, synthetic, test, _spec(), {"x"})
    assert out["numbers"] == ["x"]
    for row in out["rows"]:
        if row["model"] != "baseline":
            assert row["accuracy"] == 1.0 and row["auc"] == 1.0, row
    # the baseline: 63 low and 63 high read, a tie: the first in sorted order, high; 10 of 20 right
    assert out["rows"][-1]["accuracy"] == 0.5


def test_a_synthetic_set_of_one_class_predicts_it_everywhere():
    # a synthesizer drew no 'no' row: every model of it predicts yes: 10 of 40 held-out rows right, AUC 1/2
    train = _table([("a", "yes", 60), ("b", "no", 40)])
    test = _table([("a", "yes", 10), ("b", "no", 30)])
    synthetic = _table([("a", "yes", 30), ("b", "yes", 30)])
    out = evaluate_synthetic(train, synthetic, test, _spec(models=["logistic"]), set())
    row = out["rows"][1]
    assert row["trained_on"] == "synthetic" and row["accuracy"] == 0.25 and row["auc"] == 0.5


def test_regression_baseline_is_the_mean_of_the_original_rows_read():
    # y a number with more than 20 values: a regression. Baseline: the mean of the rows read, 0..29 -> 14.5;
    # held out 100, 101, 102: RMSE = sqrt(((85.5)^2 + (86.5)^2 + (87.5)^2) / 3)
    train = pd.DataFrame({"x": ["a"] * 30, "y": [str(v) for v in range(30)]})
    synthetic = pd.DataFrame({"x": ["a"] * 30, "y": [str(v) for v in range(30)]})
    test = pd.DataFrame({"x": ["a"] * 3, "y": ["100", "101", "102"]})
    out = evaluate_synthetic(train, synthetic, test, _spec(models=["logistic"]), {"y"})
    assert out["task"] == "regression" and out["metrics"] == ["rmse", "r2"]
    base = out["rows"][-1]
    assert base["rmse"] == pytest.approx(((85.5 ** 2 + 86.5 ** 2 + 87.5 ** 2) / 3) ** 0.5)


def test_bad_inputs_are_named():
    train = _table([("a", "yes", 6), ("b", "no", 4)])
    with pytest.raises(InputError, match="no held-out original rows"):
        evaluate_synthetic(train, train, train.iloc[:0], _spec(models=["logistic"]), set())
    with pytest.raises(InputError, match="synthetic rows have no column 'x'"):
        evaluate_synthetic(train, train[["y"]], train, _spec(models=["logistic"]), set())
    with pytest.raises(InputError, match="single value"):
        evaluate_synthetic(_table([("a", "yes", 6)]), train, train, _spec(models=["logistic"]), set())


def test_holdout_rows_are_the_seeded_draw():
    # the draw by hand: numpy's generator with the seed, round(0.2 * 50) = 10 positions without replacement
    held = holdout_mask(50, 0.2, 7)
    assert held is not None
    expected = np.random.default_rng(7).choice(50, 10, replace=False)
    assert sorted(np.flatnonzero(held).tolist()) == sorted(expected.tolist())
    assert holdout_mask(50, 0.0, 7) is None and holdout_mask(3, 0.1, 7) is None
    a = pd.DataFrame({"u": ["1", "2"], "v": ["x", "y"]})
    assert rows_digest(a) == rows_digest(a.copy()) != rows_digest(a.iloc[::-1].reset_index(drop=True))
