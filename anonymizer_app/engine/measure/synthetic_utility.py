"""Models trained on a synthetic set (pure: numpy/pandas/scikit-learn): does the analysis the recipient will run
on the synthetic rows work on real records?

A synthetic row is no input row's version, so there is no pairing and no split of the synthetic table: the test
set is the original rows held out of the synthesis (engine.synthesis.holdout; the synthesizer never read them),
the same for every model. Each model of model_utility.MODELS is trained two ways, plus a trivial baseline:

- ``original``: on the original rows the synthesizer read (what the data holder could do with them);
- ``synthetic``: on the synthetic rows (what the recipient can do);
- ``baseline``: the majority class of the original rows the synthesizer read (AUC 0.5), or their mean.

A synthesizer draws values, never range labels (engine.synthesis.discretize), so a column numeric in the input is
read as numbers in both tables under either encoding (a cell that is not a number is missing and takes the
training rows' mean) and every other column is one-hot; a value the training rows never held sets no indicator.
The target may be any synthesized column. Metrics as in model_utility: accuracy, AUC and macro F1 for classes;
RMSE and R² for numbers. Models run on one core with the seed as random_state: the same seed, the same figures.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from sklearn.pipeline import Pipeline
from threadpoolctl import threadpool_limits

from ..errors import Cancelled, InputError
from .feature_encoding import FeaturePlan
from .model_utility import (
    CLASS_METRICS,
    METRIC_LABELS,
    MODELS,
    NUMBER_METRICS,
    UtilitySpec,
    class_scores,
    number_scores,
    task_of,
)

TRAINED_ON = {"original": "original rows the synthesizer read", "synthetic": "synthetic rows",
              "baseline": "baseline"}
SPLIT_KIND = "synthesis-holdout"  # figures["split"]["kind"]: the test rows are those held out of the synthesis


def feature_plan(original: pd.DataFrame, features: list[str], numeric: set[str]) -> FeaturePlan:
    """Numeric input columns as numbers (their range in the original rows closes nothing: no labels), the rest
    as categories."""
    numbers = tuple(c for c in features if c in numeric)
    support = {}
    for name in numbers:
        values = pd.to_numeric(original[name], errors="coerce")
        if values.notna().any():
            support[name] = (float(values.min()), float(values.max()))
    return FeaturePlan(numbers, tuple(c for c in features if c not in numeric), support)


def _target(frame: pd.DataFrame, name: str, task: str, what: str) -> np.ndarray:
    if task == "classification":
        return frame[name].astype(str).to_numpy(dtype=object)
    values = pd.to_numeric(frame[name], errors="coerce")
    if values.isna().any():
        raise InputError(f"target: {name!r} has cells that are not numbers in the {what}; choose the task "
                         f"classification")
    return values.to_numpy(dtype=float)


def evaluate_synthetic(train: pd.DataFrame, synthetic: pd.DataFrame, test: pd.DataFrame, spec: UtilitySpec,
                       numeric: set[str], progress: Callable[[float, str], bool | None] | None = None) -> dict:
    """The figures of every model trained on ``train`` (the original rows the synthesizer read) and on
    ``synthetic``, tested on ``test`` (original rows held out of the synthesis), on one core. ``numeric``: the
    columns numeric in the input; ``progress(fraction, phase)`` returning False stops with Cancelled."""
    with threadpool_limits(limits=1):
        return _evaluate(train, synthetic, test, spec, numeric, progress)


def _evaluate(train: pd.DataFrame, synthetic: pd.DataFrame, test: pd.DataFrame, spec: UtilitySpec,
              numeric: set[str], progress: Callable[[float, str], bool | None] | None) -> dict:
    spec.validate(list(train.columns), [])
    for frame, what in ((synthetic, "synthetic rows"), (test, "held-out rows")):
        missing = [c for c in [*spec.features, spec.target] if c not in frame.columns]
        if missing:
            raise InputError(f"the {what} have no column {missing[0]!r}")
    for frame, what in ((train, "original rows the synthesizer read"), (synthetic, "synthetic rows"),
                        (test, "held-out original rows")):
        if len(frame) == 0:
            raise InputError(f"there are no {what}: no model can be trained and tested")
    train, synthetic, test = (f.reset_index(drop=True) for f in (train, synthetic, test))
    task = task_of(pd.concat([train[spec.target], test[spec.target]], ignore_index=True), spec.task)
    y = {"original": _target(train, spec.target, task, "original rows"),
         "synthetic": _target(synthetic, spec.target, task, "synthetic rows")}
    y_test = _target(test, spec.target, task, "held-out rows")
    if task == "classification" and len(np.unique(y["original"])) < 2:
        raise InputError(f"target: {spec.target!r} has a single value; there is nothing to predict")
    features = feature_plan(train, spec.features, numeric)
    x = {"original": features.frame(train), "synthetic": features.frame(synthetic)}
    x_test = features.frame(test)
    steps = len(spec.models) * 2
    rows_out: list[dict] = []
    done = 0
    for name in spec.models:
        kind = MODELS[name]
        for way in ("original", "synthetic"):
            if progress is not None and progress(done / steps, f"training {kind.label.split(' (')[0].lower()} "
                                                               f"on the {TRAINED_ON[way]}") is False:
                raise Cancelled("cancelled")
            done += 1
            if task == "classification" and len(np.unique(y[way])) < 2:
                # one class only (a synthesizer may draw a single value): the model predicts it everywhere
                only = y[way][0]
                scores = class_scores(y_test, np.full(len(y_test), only, dtype=object), None, np.array([only]))
                scores["auc"] = 0.5
            else:
                estimator = kind.classifier(spec.seed) if task == "classification" else kind.regressor(spec.seed)
                model = Pipeline([("features", features.transformer()), ("model", estimator)])
                model.fit(x[way], y[way])
                if task == "classification":
                    proba = model.predict_proba(x_test) if hasattr(model, "predict_proba") else None
                    scores = class_scores(y_test, model.predict(x_test), proba, model.classes_)
                else:
                    scores = number_scores(y_test, model.predict(x_test))
            rows_out.append({"model": name, "model_label": kind.label, "trained_on": way,
                             "trained_on_label": TRAINED_ON[way], **scores})
    if task == "classification":
        values, counts = np.unique(y["original"], return_counts=True)
        majority = values[int(np.argmax(counts))]  # ties: the first value in sorted order
        base = class_scores(y_test, np.full(len(y_test), majority, dtype=object), None, values)
        base["auc"] = 0.5  # a constant score ranks no record above another
    else:
        base = number_scores(y_test, np.full(len(y_test), float(np.mean(y["original"]))))
    rows_out.append({"model": "baseline", "model_label": "Majority class" if task == "classification" else "Mean",
                     "trained_on": "baseline", "trained_on_label": TRAINED_ON["baseline"], **base})
    if progress is not None:
        progress(1.0, "scoring")
    metrics = CLASS_METRICS if task == "classification" else NUMBER_METRICS
    return {
        "spec": spec.describe(),
        "task": task,
        "metrics": list(metrics),
        "metric_labels": {m: METRIC_LABELS[m] for m in metrics},
        "numbers": list(features.numbers),
        "categories": list(features.categories),
        "split": {"kind": SPLIT_KIND, "seed": spec.seed, "folds": 1, "test_rows": int(len(test)),
                  "train_rows": int(len(train)), "synthetic_rows": int(len(synthetic)),
                  "test_share": len(test) / (len(train) + len(test))},
        "suppressed_training_rows_left_out": 0,
        "suppressed_rows": 0,
        "records": int(len(train) + len(test)),
        "rows": rows_out,
    }
