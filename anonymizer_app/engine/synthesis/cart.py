"""Sequential CART synthesis, the non-DP baseline (as R's synthpop does by default; Reiter 2005, Nowok et al.
2016): the first column is drawn from its observed values; each next column is drawn, for each synthetic row,
from the original values in the leaf of a decision tree fitted on the earlier columns (a classification tree for
a categorical column, a regression tree for a numeric one) into which the synthetic row's earlier values fall.

It copies observed values and can reproduce whole original rows: **no formal privacy guarantee**. It is here as
the baseline the DP synthesizers are judged against."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..parameters import Parameter
from .base import NO_GUARANTEE, SynthesisContext, SynthesisOutcome, Synthesizer, register
from .discretize import MISSING, _text

if TYPE_CHECKING:
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor


def _predictor(values: np.ndarray, numeric: bool) -> np.ndarray:
    """A column as one tree feature: its number (missing: below every value) or its category's rank."""
    if numeric:
        numbers = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
        if np.isnan(numbers).all():
            return np.zeros(len(values))
        return np.where(np.isnan(numbers), np.nanmin(numbers) - 1.0, numbers)
    return np.unique(values, return_inverse=True)[1].astype(float)


def synthesize(frame: pd.DataFrame, context: SynthesisContext, options: Mapping[str, Any]) -> SynthesisOutcome:
    # scikit-learn (0.8 s to import) only when a set is drawn: the registry is read by every command and policy
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    rng = np.random.default_rng(context.seed)
    names = list(context.columns)
    n = len(frame)
    rows = int(options["rows"]) or n
    min_leaf = int(options["min_leaf"])
    original = {c: _text(frame[c]) for c in names}
    numeric = {c: context.kind(c) == "numeric" for c in names}
    synthetic: dict[str, np.ndarray] = {names[0]: original[names[0]][rng.integers(0, n, size=rows)]}
    leaves_used: dict[str, int] = {}
    for i, column in enumerate(names[1:], start=1):
        context.check_cancelled()
        context.progress(i / len(names), f"fitting the tree of {column}")
        earlier = names[:i]
        # encode original and synthetic together so a category has the same rank in both
        both = {c: np.concatenate([original[c], synthetic[c]]) for c in earlier}
        features = np.column_stack([_predictor(both[c], numeric[c]) for c in earlier])
        x_original, x_synthetic = features[:n], features[n:]
        target = original[column]
        if numeric[column]:
            numbers = pd.to_numeric(pd.Series(target), errors="coerce").to_numpy(dtype=float)
            y = np.where(np.isnan(numbers), np.nanmin(numbers) - 1.0 if (~np.isnan(numbers)).any() else 0.0,
                         numbers)
            tree: DecisionTreeClassifier | DecisionTreeRegressor = DecisionTreeRegressor(
                min_samples_leaf=min_leaf, random_state=context.seed)
        else:
            y = np.unique(target, return_inverse=True)[1]
            tree = DecisionTreeClassifier(min_samples_leaf=min_leaf, random_state=context.seed)
        tree.fit(x_original, y)
        leaf_of_original = tree.apply(x_original)
        leaf_of_synthetic = tree.apply(x_synthetic)
        order = np.argsort(leaf_of_original, kind="stable")
        sorted_leaves = leaf_of_original[order]
        start = np.searchsorted(sorted_leaves, leaf_of_synthetic, side="left")
        stop = np.searchsorted(sorted_leaves, leaf_of_synthetic, side="right")
        # every synthetic row's leaf holds original rows (a leaf exists only if training rows reached it)
        pick = start + np.floor(rng.random(rows) * (stop - start)).astype(np.int64)
        synthetic[column] = target[order[pick]]
        leaves_used[column] = int(tree.get_n_leaves())
    context.progress(1.0, "done")
    out = pd.DataFrame({c: synthetic[c] for c in names}, columns=names)
    return SynthesisOutcome(
        frame=out, budget={},
        parameters={"seed": context.seed, "min_leaf": min_leaf, "rows": rows, "order": names},
        figures={"leaves": leaves_used, "missing_marker": MISSING}, guarantee="")


PARAMETERS = (
    Parameter("min_leaf", int, 5, "the fewest original rows in a tree's leaf (synthpop's minbucket)", minimum=1,
              maximum=10000, label="Rows per leaf"),
    Parameter("rows", int, 0, "rows to synthesize (0: as many as the original)", minimum=0, maximum=10_000_000),
)

register(Synthesizer(
    name="cart", label=f"Sequential CART (baseline, {NO_GUARANTEE})",
    summary="Draws each column from the leaf of a decision tree fitted on the earlier columns, as synthpop does; "
            "it can copy original rows and gives no formal privacy guarantee.",
    dp=False, synthesize=synthesize, parameters=PARAMETERS,
    reference="Reiter (2005); Nowok, Raab, Dibben (2016), synthpop, J. Statistical Software 74(11)"))
