"""ARX's Loss metric (MetricMDNMLoss, gs-factor 0.5, geometric mean) as a lattice metric: the optimum and its
value equal ARX 3.9.2's on Adult.

Expected values printed by arx-bench (ARX 3.9.2, Metric.createLossMetric()) on 2026-11-28:
    arx-bench --data adult.csv --hierarchy-prefix adult_hierarchy_ --qi <QIs> --k 5 --suppression S --metric loss
metric_value is ARX's aggregate, metric_value_per_qi its per-QI values (rounded by ARX to 10 decimals, in the
order of the data's columns, where occupation comes before salary-class).
"""

from __future__ import annotations

import numpy as np
import pytest

from anonymizer_app.engine import Table, anonymize, read_hierarchy, read_table
from anonymizer_app.engine.measure.metrics import loss_figures
from tests.reference_data import ADULT

Q8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
Q9 = Q8 + ["occupation"]

# (QIs, suppression) -> (optimum {QI: level}, ARX's value, ARX's per-QI values {QI: value}, records suppressed)
ARX = {
    (8, 0.0): ({"sex": 0, "age": 4, "race": 1, "marital-status": 2, "education": 3, "native-country": 2,
                "workclass": 0, "salary-class": 0}, 0.542210825407941,
               {"sex": 0, "age": 1, "race": 1, "marital-status": 1, "education": 1, "native-country": 1,
                "workclass": 0, "salary-class": 0}, 0),
    (8, 0.04): ({"sex": 0, "age": 3, "race": 0, "marital-status": 1, "education": 1, "native-country": 1,
                 "workclass": 1, "salary-class": 0}, 0.19578178999676976,
                {"sex": 0.0390557655, "age": 0.2234794064, "race": 0.0390557655, "marital-status": 0.4557113807,
                 "education": 0.2229118316, "native-country": 0.3024617067, "workclass": 0.313611261,
                 "salary-class": 0.0390557655}, 1178),
    (9, 0.0): ({"sex": 0, "age": 4, "race": 1, "marital-status": 1, "education": 3, "native-country": 2,
                "workclass": 2, "salary-class": 0, "occupation": 1}, 0.5731509655590044,
               {"sex": 0, "age": 1, "race": 1, "marital-status": 0.4331609309, "education": 1, "native-country": 1,
                "workclass": 1, "occupation": 0.2867336893, "salary-class": 0}, 0),
    (9, 0.04): ({"sex": 0, "age": 3, "race": 0, "marital-status": 1, "education": 1, "native-country": 1,
                 "workclass": 1, "salary-class": 0, "occupation": 2}, 0.26611081915757495,
                {"sex": 0.0390557655, "age": 0.2234794064, "race": 0.0390557655, "marital-status": 0.4557113807,
                 "education": 0.2229118316, "native-country": 0.3024617067, "workclass": 0.313611261,
                 "occupation": 1, "salary-class": 0.0390557655}, 1178),
}


@pytest.fixture(scope="module")
def adult():
    frame, _ = read_table(ADULT / "adult.csv")
    hs = {c: read_hierarchy(ADULT / f"adult_hierarchy_{c}.csv") for c in Q9}
    return frame, hs


def _run(adult, qis, s, algorithm="flash"):
    frame, hs = adult
    table = Table(frame, {c: "quasi-identifying" for c in qis})
    return anonymize(table, {c: hs[c] for c in qis}, algorithm, k=5, suppression_limit=s,
                     options={"metric": "loss"})


def _check(result, key):
    levels, value, per_qi, suppressed = ARX[key]
    assert result.verified
    assert result.search["optimum_levels"] == levels
    assert int(result.suppressed.sum()) == suppressed
    # ARX rounds each QI's value to 10 decimals before its geometric mean: equal within that
    assert result.search["optimum_value"] == pytest.approx(value, abs=1e-9)
    assert result.metrics["loss"] == pytest.approx(value, abs=1e-9)
    qi = list(result.qi)
    codes = result.leaf_codes.codes
    figures = loss_figures(list(result.leaf_codes.hierarchies), [False] * len(qi), codes,
                           [levels[c] for c in qi], np.asarray(result.suppressed, dtype=bool), per_qi=True)
    assert figures["per_qi"]["loss"] == pytest.approx([per_qi[c] for c in qi], abs=1e-9)
    assert figures["per_qi"]["suppressed_share"] == pytest.approx([suppressed / 30162] * len(qi))


@pytest.mark.parametrize("s", [0.0, 0.04])
def test_loss_equals_arx_8_qis(adult, s):
    _check(_run(adult, Q8, s), (8, s))


@pytest.mark.slow
@pytest.mark.parametrize("s", [0.0, 0.04])
def test_loss_exhaustive_equals_arx_8_qis(adult, s):
    _check(_run(adult, Q8, s, "exhaustive"), (8, s))


@pytest.mark.slow
@pytest.mark.parametrize("s", [0.0, 0.04])
def test_loss_equals_arx_9_qis(adult, s):
    _check(_run(adult, Q9, s), (9, s))
