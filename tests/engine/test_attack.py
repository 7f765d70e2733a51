"""The attack report: homogeneous ECs, posterior beliefs, worst EMD, entropy per EC."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table, anonymize
from anonymizer_app.engine.measure.attack import attack_report


def test_report_on_a_hand_made_partition():
    frame = pd.DataFrame({"s": ["1000", "1000", "2000", "3000", "1000", "3000"]})
    classes = np.array([0, 0, 1, 1, 1, -1])
    rep = attack_report(frame, classes, ["s"])["s"]
    assert rep["records"] == 5 and rep["equivalence_classes"] == 2
    assert rep["homogeneous_classes"] == 1 and rep["records_in_homogeneous_classes"] == 2
    assert rep["homogeneous"][0] == {"class": 0, "size": 2, "value": "1000", "rows": [1, 2]}
    assert rep["posterior"]["1000"]["highest"] == 1.0
    assert rep["posterior"]["1000"]["prior"] == pytest.approx(0.5)  # over all six input records
    assert rep["posterior"]["2000"]["highest"] == pytest.approx(1 / 3)
    # class 0 = {1000, 1000} vs (1/2, 1/6, 1/3): equal EMD 1/2, ordered (1/2: 1/2 + 1/3) / 2 = 5/12
    assert rep["worst_emd_equal"]["emd"] == pytest.approx(0.5)
    assert rep["worst_emd_ordered"]["emd"] == pytest.approx(5 / 12)
    assert rep["entropy"][1]["entropy"] == pytest.approx(math.log(3))
    assert rep["entropy_min"] == 0.0


def test_every_result_carries_the_attack_report():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(20, 40, 50).astype(str), "dis": rng.choice(["a", "b"], 50)})
    table = Table(frame, {"age": "qi", "dis": "sensitive"})
    for algorithm in ("datafly", "mondrian", "oka"):
        rep = anonymize(table, None, algorithm, k=3).report()["attack"]["dis"]
        assert rep["equivalence_classes"] >= 1 and "posterior" in rep and "entropy" in rep


def test_entropy_and_distributions_are_the_worst_classes_of_all():
    """Not the first classes by id: the lowest-entropy ECs, with distributions for them and for the
    ECs farthest from the table, chosen among every EC."""
    rng = np.random.default_rng(3)
    n = 4000
    values = rng.choice(list("abcdef"), n)
    classes = rng.integers(0, 600, n)
    values[classes == 590] = "a"  # a homogeneous EC with a high id
    rep = attack_report(pd.DataFrame({"s": values}), classes, ["s"], limit=25)["s"]
    assert len(rep["entropy"]) == 25
    assert rep["entropy"][0]["class"] == 590 and rep["entropy"][0]["entropy"] == 0.0
    ents = [e["entropy"] for e in rep["entropy"]]
    assert ents == sorted(ents) and ents[-1] <= rep["entropy_mean"]
    listed = {d["class"] for d in rep["class_distributions"]}
    assert {e["class"] for e in rep["entropy"]} <= listed
    assert rep["worst_emd_equal"]["class"] in listed
