"""Mondrian: the hand-worked example of seed 003 (Figures 18/19), partition sizes, strictness."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import InputError, Table, UnsatisfiableError, anonymize
from anonymizer_app.engine.algorithms.mondrian import balanced_subset, partition
from anonymizer_app.engine.search.recoding import QISpace

from ._local import mixed_table, problem_of

AGE = [21, 29, 21, 29, 55, 34, 34, 55]
ZIP = [14851, 14852, 14852, 14851, 14853, 14852, 14853, 14851]
DIAGNOSIS = ["Heart Disease", "Heart Disease", "Viral Inflection", "Viral Inflection", "Cancer", "Heart Disease",
             "Viral Inflection", "Viral Inflection"]


def figure18() -> Table:
    frame = pd.DataFrame({"Age": [str(a) for a in AGE], "Zipcode": [str(z) for z in ZIP], "Diagnosis": DIAGNOSIS})
    return Table(frame, {"Age": "qi", "Zipcode": "qi", "Diagnosis": "sensitive"})


def test_figure19_exact_output():
    result = anonymize(figure18(), algorithm="mondrian", k=2)
    assert result.verified
    assert result.output["Age"].tolist() == ["[21-29]"] * 4 + ["[34-55]"] * 4
    assert result.output["Zipcode"].tolist() == [
        "14851", "14852", "14852", "14851", "14853", "[14851-14852]", "14853", "[14851-14852]"]
    assert result.transformation is None
    report = result.report()
    assert report["recoding"] == "multidimensional" and report["transformation"] is None
    assert result.metrics["equivalence_classes"] == 4
    assert result.metrics["discernibility"] == 16
    # NCP: age ranges 8/34 and 21/34, zipcode 0 or 1/2
    expected = (4 * 8 / 34 + 4 * 21 / 34 + 2 * 0.5) / 16
    assert result.metrics["ncp"] == pytest.approx(expected)


def test_figure19_k4_and_relaxed():
    strict = anonymize(figure18(), algorithm="mondrian", k=4)
    assert strict.output["Age"].tolist() == ["[21-29]"] * 4 + ["[34-55]"] * 4
    assert set(strict.output["Zipcode"]) == {"[14851-14852]", "[14851-14853]"}
    relaxed = anonymize(figure18(), algorithm="mondrian", k=2, options={"variant": "relaxed"})
    assert relaxed.verified and relaxed.metrics["min_class_size"] >= 2


def _numeric_cut_exists(values: np.ndarray, k: int) -> bool:
    v = np.sort(values)
    return any(v[i] != v[i + 1] and i + 1 >= k and len(v) - i - 1 >= k for i in range(len(v) - 1))


def _category_cut_exists(children: np.ndarray, k: int) -> bool:
    labels, counts = np.unique(children, return_counts=True)
    total = counts.sum()
    for r in range(1, len(labels)):
        for combo in itertools.combinations(range(len(labels)), r):
            s = counts[list(combo)].sum()
            if s >= k and total - s >= k:
                return True
    return False


@pytest.mark.parametrize("k,seed", [(2, 0), (3, 1), (5, 2), (10, 3)])
def test_partitions_are_k_anonymous_and_strict(k, seed):
    table, given = mixed_table(300, seed)
    problem = problem_of(table, given, k)
    tup, part, weight, _, n_parts = partition(problem)
    space = QISpace(problem.hierarchies, [True, False], problem.codes)
    sizes = np.bincount(part, weights=weight)
    assert sizes.min() >= k and sizes.sum() == table.n
    zone = space.anc[1]
    for p in range(n_parts):
        t = tup[part == p]
        w = weight[part == p]
        codes = np.repeat(problem.freq.codes[t], w, axis=0)
        ages = space.values[0][codes[:, 0]]
        assert not _numeric_cut_exists(ages, k), f"partition {p} still has an allowable age cut"
        anc = zone[codes[:, 1]]
        lca = int(np.argmax([len(set(anc[:, lv])) == 1 for lv in range(anc.shape[1])]))
        if lca > 0:
            assert not _category_cut_exists(anc[:, lca - 1], k), f"partition {p} still has an allowable zone cut"


def test_result_classes_at_least_k():
    table, given = mixed_table(500, 7)
    for k in (2, 4, 9):
        result = anonymize(table, given, algorithm="mondrian", k=k)
        assert result.verified and result.metrics["min_class_size"] >= k
        assert result.metrics["ncp"] > 0 and 0 < result.metrics["generalization_height"] <= 1


def test_balanced_subset_is_exact():
    take = balanced_subset(np.array([7, 5, 4, 3, 1]))
    assert np.array([7, 5, 4, 3, 1])[take].sum() == 10


def test_too_small_table_is_refused_or_suppressed():
    table = figure18()
    with pytest.raises((InputError, UnsatisfiableError)):
        anonymize(table, algorithm="mondrian", k=9)
