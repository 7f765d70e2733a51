"""Models trained on the release (engine/measure/model_utility.py): the split, the baseline, the scores and the
seed, checked by hand on tiny cases and against independent recomputation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from anonymizer_app.engine import InputError
from anonymizer_app.engine.measure.feature_encoding import column_numbers
from anonymizer_app.engine.measure.model_utility import (
    UtilitySpec,
    class_scores,
    evaluate,
    number_scores,
    splits,
)

QI = ["age", "zip"]


@pytest.fixture
def tables():
    """300 records: age and zip drive y; the release puts age into decades and zip to its first digit, and
    suppresses every 25th record."""
    rng = np.random.default_rng(7)
    n = 300
    age = rng.integers(18, 80, n)
    zipc = rng.choice(["1001", "1002", "2001", "2002"], n)
    y = np.where((age > 45) ^ (rng.random(n) < 0.15), "high", "low")
    original = pd.DataFrame({"age": age.astype(str), "zip": zipc, "y": y, "score": (age * 2 + rng.normal(0, 5, n))
                             .round(1).astype(str)})
    published = original.copy()
    lo = (age // 10) * 10
    published["age"] = [f"{a}-{a + 9}" for a in lo]
    published["zip"] = [z[0] + "***" for z in zipc]
    suppressed = np.zeros(n, dtype=bool)
    suppressed[::25] = True
    published.loc[suppressed, ["age", "zip", "y", "score"]] = "*"
    return original, published, suppressed


def _spec(**kw):
    return UtilitySpec(**{"target": "y", "features": ["age", "zip"], "models": ["logistic", "random_forest",
                                                                               "gradient_boosting"], "seed": 3, **kw})


def test_two_runs_with_a_seed_are_equal(tables):
    original, published, suppressed = tables
    a = evaluate(original, published, suppressed, _spec(), {"age", "score"}, QI)
    b = evaluate(original, published, suppressed, _spec(), {"age", "score"}, QI)
    assert a == b
    assert a["split"] == {"kind": "holdout", "seed": 3, "folds": 1, "test_rows": 90, "train_rows": 210,
                          "test_share": 0.3}


def test_baseline_is_the_training_majority(tables):
    original, published, suppressed = tables
    out = evaluate(original, published, suppressed, _spec(models=["logistic"]), {"age"}, QI)
    train, test = train_test_split(np.arange(300), test_size=0.3, random_state=3, stratify=original["y"])
    majority = original["y"].iloc[train].value_counts().idxmax()
    expected = float((original["y"].iloc[test] == majority).mean())
    base = [r for r in out["rows"] if r["model"] == "baseline"][0]
    assert base["accuracy"] == pytest.approx(expected)
    assert base["auc"] == 0.5
    # macro F1 of a constant prediction: 2p/(1+p) for the majority class (p its share of the test rows), 0 for the other
    assert base["f1_macro"] == pytest.approx((2 * expected / (1 + expected)) / 2)
    assert out["suppressed_training_rows_left_out"] == int(np.isin(np.flatnonzero(suppressed), train).sum())


def test_release_equal_to_the_input_scores_as_the_input(tables):
    original, _, _ = tables
    out = evaluate(original, original.copy(), np.zeros(300, dtype=bool), _spec(), {"age"}, QI)
    by = {(r["model"], r["trained_on"]): r for r in out["rows"]}
    for model in ("logistic", "random_forest", "gradient_boosting"):
        for metric in ("accuracy", "auc", "f1_macro"):
            assert by[(model, "release")][metric] == by[(model, "original")][metric]


def test_class_scores_by_hand():
    y = np.array(["a", "a", "b", "b", "b"], dtype=object)
    predicted = np.array(["a", "b", "b", "b", "a"], dtype=object)
    proba = np.array([[0.9, 0.1], [0.4, 0.6], [0.2, 0.8], [0.3, 0.7], [0.6, 0.4]])
    s = class_scores(y, predicted, proba, np.array(["a", "b"], dtype=object))
    assert s["accuracy"] == pytest.approx(3 / 5)
    # F1 of a: precision 1/2, recall 1/2 -> 1/2; of b: precision 2/3, recall 2/3 -> 2/3
    assert s["f1_macro"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    # AUC: pairs (positive b, negative a) ranked right: b scores 0.8, 0.7, 0.4 against a's 0.1, 0.6 -> 5 of 6
    assert s["auc"] == pytest.approx(5 / 6)


def test_multiclass_auc_is_macro_one_vs_rest():
    y = np.array(["a", "b", "c", "a", "b", "c"], dtype=object)
    proba = np.array([[.8, .1, .1], [.2, .7, .1], [.1, .2, .7], [.3, .4, .3], [.5, .3, .2], [.2, .2, .6]])
    classes = np.array(["a", "b", "c"], dtype=object)
    s = class_scores(y, classes[proba.argmax(axis=1)], proba, classes)

    def auc(pos, neg):
        return np.mean([1.0 if p > q else 0.5 if p == q else 0.0 for p in pos for q in neg])

    by_hand = np.mean([auc(proba[y == c, j], proba[y != c, j]) for j, c in enumerate(classes)])
    assert s["auc"] == pytest.approx(by_hand)


def test_number_scores_by_hand():
    s = number_scores(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.5, 2.0, 2.0, 4.5]))
    assert s["rmse"] == pytest.approx(np.sqrt((0.25 + 0 + 1 + 0.25) / 4))
    assert s["r2"] == pytest.approx(1 - 1.5 / 5.0)


def test_regression_baseline_is_the_training_mean(tables):
    original, published, suppressed = tables
    out = evaluate(original, published, suppressed, _spec(target="score", models=["logistic"]), {"age", "score"}, QI)
    assert out["task"] == "regression" and out["metrics"] == ["rmse", "r2"]
    train, test = train_test_split(np.arange(300), test_size=0.3, random_state=3)
    y = original["score"].astype(float).to_numpy()
    base = [r for r in out["rows"] if r["model"] == "baseline"][0]
    assert base["rmse"] == pytest.approx(float(np.sqrt(np.mean((y[test] - y[train].mean()) ** 2))))


def test_kfold_tests_each_row_once(tables):
    original, _, _ = tables
    spec = _spec(split="kfold", folds=4)
    folds = splits(original["y"].astype(str), spec, "classification")
    tested = np.concatenate([t for _, t in folds])
    assert len(folds) == 4 and sorted(tested.tolist()) == list(range(300))
    for train, test in folds:
        assert not set(train) & set(test)


def test_midpoint_encoding_and_release_on_original_rows(tables):
    original, published, suppressed = tables
    assert column_numbers(pd.Series(["20-29", "[20-30)", "*", "37"])).tolist()[:2] == [24.5, 25.0]
    assert np.isnan(column_numbers(pd.Series(["*"]))[0])
    out = evaluate(original, published, suppressed, _spec(features=["age"], encoding="midpoint"), {"age"}, QI)
    assert out["numbers"] == ["age"]
    assert {r["trained_on"] for r in out["rows"]} == {"original", "release", "release_on_original", "baseline"}
    # a generalized text feature: no test of the release's model on original rows
    out = evaluate(original, published, suppressed, _spec(encoding="midpoint", models=["logistic"]), {"age"}, QI)
    assert "release_on_original" not in {r["trained_on"] for r in out["rows"]}


@pytest.mark.parametrize("kw,message", [
    ({"target": "nope"}, "target: unknown column 'nope'"),
    ({"target": "age"}, "target: 'age' is a quasi-identifier"),
    ({"features": []}, "features: choose at least one column"),
    ({"features": ["y"]}, "features: 'y' is the target"),
    ({"models": ["svm"]}, "models: unknown model 'svm'"),
    ({"encoding": "binary"}, "encoding: must be one of one-hot, midpoint"),
    ({"test_share": 0.99}, "test share: must be from 0.05 to 0.9"),
    ({"folds": 1}, "folds: must be from 2 to 20"),
])
def test_bad_specs_name_the_field(tables, kw, message):
    original, published, suppressed = tables
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        evaluate(original, published, suppressed, _spec(**kw), {"age"}, QI)


def test_progress_false_cancels(tables):
    from anonymizer_app.engine import Cancelled

    original, published, suppressed = tables
    with pytest.raises(Cancelled):
        evaluate(original, published, suppressed, _spec(), {"age"}, QI, progress=lambda f, p: False)
