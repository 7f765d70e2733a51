"""Models trained on the release (pure: numpy/pandas/scikit-learn): does the analysis the recipient will run
still work?

The same held-out rows of the input are the test set of every model: a fixed split (``test_share`` of the rows,
stratified by the target for classes) or k folds (each row tested once), drawn with ``seed`` and reported.
Each model is trained three ways, plus a trivial baseline:

- ``original``: on the input's training rows, tested on the input's test rows (what the data holder could do);
- ``release``: on the published training rows (suppressed records left out: the recipient has no values for
  them), tested on the published version of the test rows (the release has one row per input row, in the same
  order, so a held-out row's published version is that row of the release, whatever the recoding: full-domain,
  local or multidimensional). Suppressed test rows stay in the test set, as the recipient would see them ('*');
  this is what the recipient measures when it holds out part of the release;
- ``release, original test rows`` (midpoint encoding, every generalized feature numeric): the release's model
  applied to the input's test rows as they are, the question "does a model fitted to the release work on real
  records?". An original text value is a category the release never showed, so the comparison is only made when
  every generalized feature is read as a number (a number is its own midpoint);
- ``baseline``: the majority class of the input's training rows (its AUC is 0.5), or their mean for a number.

The target must be published as it is (not a QI): the truth the models are scored against is then the same for
every model. Classes: accuracy, AUC (binary; macro one-vs-rest for more classes, omitted when a class of the
test rows is missing from the training rows) and macro F1. Numbers: RMSE and R². With k folds each figure is
the mean over the folds.

Every model has a fixed random_state (the seed) and runs on one core (n_jobs=1; OpenMP and BLAS threads limited to
one), so two runs with the same seed give the same figures.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, f1_score, mean_squared_error, r2_score, roc_auc_score
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split
from sklearn.pipeline import Pipeline
from threadpoolctl import threadpool_limits

from ..errors import Cancelled, InputError
from .feature_encoding import ENCODINGS, plan

CLASS_METRICS = ("accuracy", "auc", "f1_macro")
NUMBER_METRICS = ("rmse", "r2")
METRIC_LABELS = {"accuracy": "Accuracy", "auc": "AUC", "f1_macro": "F1 (macro)", "rmse": "RMSE", "r2": "R²"}
TASKS = ("auto", "classification", "regression")
SPLITS = ("holdout", "kfold")
TRAINED_ON = {"original": "original", "release": "release",
              "release_on_original": "release, tested on original rows", "baseline": "baseline"}
# a numeric target with more distinct values than this is a number to predict, else classes (task "auto")
AUTO_CLASSES = 20


@dataclass(frozen=True)
class ModelKind:
    """A model of the registry: its label and the scikit-learn estimator for classes and for numbers."""

    name: str
    label: str
    classifier: Callable[[int], BaseEstimator]
    regressor: Callable[[int], BaseEstimator]


MODELS: dict[str, ModelKind] = {m.name: m for m in (
    ModelKind("logistic", "Logistic regression (ridge regression for numbers)",
              lambda seed: LogisticRegression(max_iter=1000, random_state=seed),
              lambda seed: Ridge(alpha=1.0, random_state=seed)),
    ModelKind("random_forest", "Random forest (100 trees)",
              lambda seed: RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1),
              lambda seed: RandomForestRegressor(n_estimators=100, random_state=seed, n_jobs=1)),
    ModelKind("gradient_boosting", "Gradient boosting (histogram-based)",
              lambda seed: HistGradientBoostingClassifier(random_state=seed),
              lambda seed: HistGradientBoostingRegressor(random_state=seed)),
)}


@dataclass
class UtilitySpec:
    target: str
    features: list[str]
    models: list[str] = field(default_factory=lambda: list(MODELS))
    encoding: str = "one-hot"
    split: str = "holdout"
    test_share: float = 0.3
    folds: int = 5
    seed: int = 0
    task: str = "auto"

    def validate(self, columns: list[str], qi: list[str]) -> None:
        """Raises InputError naming the field and the value at fault."""
        if self.target not in columns:
            raise InputError(f"target: unknown column {self.target!r}")
        if self.target in qi:
            raise InputError(f"target: {self.target!r} is a quasi-identifier; the target must be a column the "
                             f"release publishes as it is")
        if not self.features:
            raise InputError("features: choose at least one column")
        for name in self.features:
            if name not in columns:
                raise InputError(f"features: unknown column {name!r}")
            if name == self.target:
                raise InputError(f"features: {name!r} is the target")
        if not self.models:
            raise InputError(f"models: choose at least one of {', '.join(MODELS)}")
        for name in self.models:
            if name not in MODELS:
                raise InputError(f"models: unknown model {name!r} (choose from {', '.join(MODELS)})")
        if self.encoding not in ENCODINGS:
            raise InputError(f"encoding: must be one of {', '.join(ENCODINGS)}, got {self.encoding!r}")
        if self.split not in SPLITS:
            raise InputError(f"split: must be one of {', '.join(SPLITS)}, got {self.split!r}")
        if self.task not in TASKS:
            raise InputError(f"task: must be one of {', '.join(TASKS)}, got {self.task!r}")
        if not (0.05 <= self.test_share <= 0.9):
            raise InputError(f"test share: must be from 0.05 to 0.9, got {self.test_share}")
        if not (2 <= self.folds <= 20):
            raise InputError(f"folds: must be from 2 to 20, got {self.folds}")
        if not (0 <= self.seed < 2**32):
            raise InputError(f"seed: must be from 0 to {2**32 - 1}, got {self.seed}")

    def describe(self) -> dict:
        return {"target": self.target, "features": list(self.features), "models": list(self.models),
                "encoding": self.encoding, "split": self.split, "test_share": self.test_share,
                "folds": self.folds, "seed": self.seed, "task": self.task}


def task_of(values: pd.Series, task: str) -> str:
    """classification or regression: a text target, or a numeric one with at most AUTO_CLASSES values, is classes."""
    if task != "auto":
        return task
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.notna().all() and numbers.nunique() > AUTO_CLASSES:
        return "regression"
    return "classification"


def splits(y: pd.Series, spec: UtilitySpec, task: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(training rows, test rows) per fold, as positions; the same for every model and every table."""
    positions = np.arange(len(y))
    stratify = task == "classification" and int(y.value_counts().min()) >= 2
    if spec.split == "holdout":
        train, test = train_test_split(positions, test_size=spec.test_share, random_state=spec.seed,
                                       stratify=y.to_numpy() if stratify else None)
        return [(np.sort(train), np.sort(test))]
    smallest = int(y.value_counts().min()) if task == "classification" else len(y)
    if stratify and smallest >= spec.folds:
        folds = StratifiedKFold(n_splits=spec.folds, shuffle=True, random_state=spec.seed).split(positions, y)
    else:
        folds = KFold(n_splits=spec.folds, shuffle=True, random_state=spec.seed).split(positions)
    return [(np.sort(a), np.sort(b)) for a, b in folds]


def class_scores(y_true: np.ndarray, predicted: np.ndarray, proba: np.ndarray | None,
                 classes: np.ndarray) -> dict:
    """Accuracy, AUC and macro F1 of predictions (``proba``: one column per entry of ``classes``)."""
    out = {"accuracy": float(accuracy_score(y_true, predicted)),
           "f1_macro": float(f1_score(y_true, predicted, average="macro", zero_division=0)),
           "auc": None}
    present = np.unique(y_true)
    if proba is None or len(present) < 2 or not set(present) <= set(classes):
        return out
    try:
        with warnings.catch_warnings():  # an undefined AUC is reported as None, not as a warning
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            if len(classes) == 2:
                auc = float(roc_auc_score(y_true == classes[1], proba[:, 1]))
            else:
                auc = float(roc_auc_score(y_true, proba, multi_class="ovr", average="macro", labels=classes))
    except ValueError:  # a class of the training rows absent from the test rows: no macro one-vs-rest AUC
        auc = math.nan
    out["auc"] = auc if math.isfinite(auc) else None
    return out


def number_scores(y_true: np.ndarray, predicted: np.ndarray) -> dict:
    """RMSE and R² (None when undefined: R² of a single test row, or of test rows all of one value)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        r2 = float(r2_score(y_true, predicted)) if len(y_true) > 1 else math.nan
    return {"rmse": float(np.sqrt(mean_squared_error(y_true, predicted))), "r2": r2 if math.isfinite(r2) else None}


def evaluate(original: pd.DataFrame, published: pd.DataFrame, suppressed: np.ndarray, spec: UtilitySpec,
             numeric: set[str], qi: list[str],
             progress: Callable[[float, str], bool | None] | None = None) -> dict:
    """The figures of every model (_evaluate) on one core: OpenMP (gradient boosting) and BLAS threads limited to
    one, as n_jobs=1 does for the forests; a worker shares its machine, and the figures do not depend on it."""
    with threadpool_limits(limits=1):
        return _evaluate(original, published, suppressed, spec, numeric, qi, progress)


def _evaluate(original: pd.DataFrame, published: pd.DataFrame, suppressed: np.ndarray, spec: UtilitySpec,
              numeric: set[str], qi: list[str],
              progress: Callable[[float, str], bool | None] | None = None) -> dict:
    """The figures of every model trained on the input and on the release (see the module docstring).
    ``published``: the release, one row per input row in the same order; ``suppressed``: per row, whether the
    release suppressed it; ``numeric``: the columns numeric in the input; ``progress(fraction, phase)``
    returning False stops with Cancelled."""
    spec.validate(list(original.columns), qi)
    if len(published) != len(original) or len(suppressed) != len(original):
        raise InputError("the release must have one row per input row")
    original = original.reset_index(drop=True)
    published = published.reset_index(drop=True)
    suppressed = np.asarray(suppressed, dtype=bool)
    task = task_of(original[spec.target], spec.task)
    y_text = original[spec.target].astype(str)
    if task == "regression":
        y_all = pd.to_numeric(original[spec.target], errors="coerce")
        if y_all.isna().any():
            raise InputError(f"target: {spec.target!r} has cells that are not numbers; choose the task classification")
        y = y_all.to_numpy(dtype=float)
    else:
        y = y_text.to_numpy(dtype=object)
        if len(np.unique(y)) < 2:
            raise InputError(f"target: {spec.target!r} has a single value; there is nothing to predict")
    folds = splits(y_text, spec, task)
    features_plan = plan(original, published, spec.features, numeric, spec.encoding)
    x_original = features_plan.frame(original)
    x_published = features_plan.frame(published)
    # the release's model on original rows: only where every generalized feature is read as a number (midpoint);
    # an original text value is a category the release never showed, and would only measure that
    published_kept = published[~suppressed]
    generalized_text = [c for c in features_plan.categories
                        if not original[c][~suppressed].astype(str).equals(published_kept[c].astype(str))]
    ways = ["original", "release"] + (["release_on_original"]
                                      if spec.encoding == "midpoint" and not generalized_text else [])
    steps = len(folds) * len(spec.models) * 2
    done = 0

    def tick(phase: str) -> None:
        if progress is not None and progress(done / steps, phase) is False:
            raise Cancelled("cancelled")

    sums: dict[tuple[str, str], list[dict]] = {}
    left_out = 0
    for f, (train, test) in enumerate(folds):
        kept = train[~suppressed[train]]
        left_out += int(len(train) - len(kept))
        if task == "classification":
            values, counts = np.unique(y[train], return_counts=True)
            majority = values[int(np.argmax(counts))]  # ties: the first value in sorted order
            base = class_scores(y[test], np.full(len(test), majority, dtype=object), None, values)
            base["auc"] = 0.5  # a constant score ranks no record above another
        else:
            base = number_scores(y[test], np.full(len(test), float(np.mean(y[train]))))
        sums.setdefault(("baseline", "baseline"), []).append(base)
        for name in spec.models:
            kind = MODELS[name]
            for way in ("original", "release"):
                fold_text = f" (fold {f + 1} of {len(folds)})" if len(folds) > 1 else ""
                tick(f"training {kind.label.split(' (')[0].lower()} on the {way}{fold_text}")
                rows = train if way == "original" else kept
                x_train = (x_original if way == "original" else x_published).iloc[rows]
                estimator = kind.classifier(spec.seed) if task == "classification" else kind.regressor(spec.seed)
                model = Pipeline([("features", features_plan.transformer()), ("model", estimator)])
                model.fit(x_train, y[rows])
                tests = {"original": (x_original, "original")} if way == "original" else \
                    {"release": (x_published, "release")}
                if way == "release" and "release_on_original" in ways:
                    tests["release_on_original"] = (x_original, "release_on_original")
                for label, (x_all, _) in tests.items():
                    x_test = x_all.iloc[test]
                    if task == "classification":
                        predicted = model.predict(x_test)
                        proba = model.predict_proba(x_test) if hasattr(model, "predict_proba") else None
                        scores = class_scores(y[test], predicted, proba, model.classes_)
                    else:
                        scores = number_scores(y[test], model.predict(x_test))
                    sums.setdefault((name, label), []).append(scores)
                done += 1
    tick("scoring")
    metrics = CLASS_METRICS if task == "classification" else NUMBER_METRICS
    rows_out = []
    for (name, way), per_fold in sums.items():
        label = MODELS[name].label if name != "baseline" else ("Majority class" if task == "classification" else "Mean")
        row: dict[str, object] = {"model": name, "model_label": label, "trained_on": way,
                                  "trained_on_label": TRAINED_ON[way]}
        for metric in metrics:
            values_m = [s[metric] for s in per_fold]
            row[metric] = None if any(v is None for v in values_m) else float(np.mean(values_m))
        rows_out.append(row)
    order = {w: i for i, w in enumerate(["original", "release", "release_on_original", "baseline"])}
    model_order = {m: i for i, m in enumerate([*spec.models, "baseline"])}
    rows_out.sort(key=lambda r: (model_order[str(r["model"])], order[str(r["trained_on"])]))
    first_train, first_test = folds[0]
    return {
        "spec": spec.describe(),
        "task": task,
        "metrics": list(metrics),
        "metric_labels": {m: METRIC_LABELS[m] for m in metrics},
        "numbers": list(features_plan.numbers),
        "categories": list(features_plan.categories),
        "split": {"kind": spec.split, "seed": spec.seed, "folds": len(folds),
                  "test_rows": int(len(first_test)) if spec.split == "holdout" else int(len(original)),
                  "train_rows": int(len(first_train)) if spec.split == "holdout" else None,
                  "test_share": spec.test_share if spec.split == "holdout" else None},
        "suppressed_training_rows_left_out": left_out,
        "suppressed_rows": int(suppressed.sum()),
        "records": int(len(original)),
        "rows": rows_out,
    }
