"""Utility and risk figures on small tables, computed by hand (arithmetic in the comments).

Definitions: ../shared/docs/definitions.md.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table, anonymize, parse_hierarchy
from anonymizer_app.engine.measure.metrics import class_figures, homogeneity, loss_figures

# Age: 12 leaves; 10 and 29 are in the hierarchy but not in the data.
AGE = """\
10;[10-20);*
20;[20-30);*
22;[20-30);*
24;[20-30);*
25;[20-30);*
29;[20-30);*
31;[30-40);*
33;[30-40);*
35;[30-40);*
36;[30-40);*
39;[30-40);*
47;[40-50);*
"""
# City: 5 leaves; Florence is not in the data.
CITY = """\
Rome;Centre;*
Florence;Centre;*
Milan;North;*
Turin;North;*
Naples;South;*
"""
ROWS = [
    # id, age, city, disease
    ("r1", "20", "Rome", "flu"),
    ("r2", "22", "Rome", "flu"),
    ("r3", "25", "Milan", "cold"),
    ("r4", "24", "Turin", "flu"),
    ("r5", "31", "Turin", "flu"),
    ("r6", "33", "Milan", "flu"),
    ("r7", "39", "Turin", "cancer"),
    ("r8", "47", "Naples", "cold"),
    ("r9", "36", "Milan", "cold"),
    ("r10", "35", "Turin", "flu"),
]


def _run(types=None, **kw):
    frame = pd.DataFrame(ROWS, columns=["id", "age", "city", "disease"])
    table = Table(frame, {"id": "identifying", "age": "qi", "city": "qi", "disease": "sensitive"}, types or {})
    hs = {"age": parse_hierarchy(AGE, "age"), "city": parse_hierarchy(CITY, "city")}
    return anonymize(table, hs, **kw)


@pytest.fixture(scope="module")
def result():
    # Datafly, k=2, limit 0.15 -> budget floor(1.5) = 1 record.
    # it.1 (0,0): 10 distinct tuples, 10 failing > 1; distinct age 10, city 4 -> age
    # it.2 (1,0): ([20-30),Rome)2 ([20-30),Milan)1 ([20-30),Turin)1 ([30-40),Turin)3 ([30-40),Milan)2
    #             ([40-50),Naples)1: 3 failing > 1; distinct age 3, city 4 -> city
    # it.3 (1,1): ([20-30),Centre){r1,r2} ([20-30),North){r3,r4} ([30-40),North){r5,r6,r7,r9,r10}
    #             ([40-50),South){r8}: 1 failing <= 1 -> stop, suppress r8.
    return _run(k=2, suppression_limit=0.15)


def test_datafly_path(result):
    assert result.transformation == {"age": 1, "city": 1}
    assert [s.get("generalized") for s in result.steps] == ["age", "city", None]
    assert result.suppressed.tolist() == [False] * 7 + [True] + [False] * 2
    assert result.output.loc[7, ["age", "city"]].tolist() == ["*", "*"]


def test_class_and_risk_figures(result):
    m = result.metrics
    # N = 10, suppressed 1, classes of 2, 2 and 5
    assert m["suppressed"] == 1
    assert m["equivalence_classes"] == 3
    assert m["min_class_size"] == 2
    assert m["mean_class_size"] == pytest.approx(9 / 3)
    assert m["discernibility"] == 2**2 + 2**2 + 5**2 + 1 * 10  # = 43
    assert m["c_avg"] == pytest.approx(9 / (3 * 2))  # (N - sup) / (#EC x k) = 1.5
    assert m["prosecutor_risk_highest"] == pytest.approx(1 / 2)
    assert m["prosecutor_risk_average"] == pytest.approx(3 / 9)  # #EC / (N - sup)
    # risk 1/2 (4 records) > 0.2; risk 1/5 = 0.2 is not above the threshold -> 4 of 9 kept records
    assert m["records_at_risk"] == pytest.approx(4 / 9)
    # marketer risk: #EC / published records, counted here over the published rows (r8 suppressed is not
    # in the release)
    published = result.output.loc[~np.asarray(result.suppressed), ["age", "city"]]
    classes = {tuple(r) for r in published.itertuples(index=False)}
    assert (len(classes), len(published)) == (3, 9)
    assert m["marketer_risk"] == pytest.approx(len(classes) / len(published))  # 3 / 9, not 3 / 10
    assert m["sample_uniques"] == 0
    # {r1,r2}: flu, flu -> homogeneous; {r3,r4}: cold, flu; {r5,r6,r7,r9,r10}: flu, flu, cancer, cold, flu
    assert m["homogeneous_classes"] == 1
    assert m["homogeneous_records"] == 2


def test_ncp(result):
    # age (integer, numeric NCP): data min 20, max 47 -> span 27 (the hierarchy's 10 and 29 play no part)
    #   [20-30): data 20,22,24,25 -> (25-20)/27 = 5/27, 4 records -> 20/27
    #   [30-40): data 31,33,35,36,39 -> (39-31)/27 = 8/27, 5 records -> 40/27
    #   r8 suppressed -> 1
    # city (categorical): |leaves| = 5; Centre {Rome, Florence} 2/5, North {Milan, Turin} 2/5
    #   9 kept records x 2/5 = 18/5; r8 suppressed -> 1
    # NCP = (20/27 + 40/27 + 1 + 18/5 + 1) / (10 records x 2 QIs) = (352/45) / 20
    expected = (20 / 27 + 40 / 27 + 1 + 18 / 5 + 1) / 20
    assert expected == pytest.approx(352 / 900)
    assert result.metrics["ncp"] == pytest.approx(expected)


def test_ncp_categorical_when_age_is_typed_as_text():
    # Same path (distinct counts are the same), but age NCP is now the leaf share:
    #   [20-30) covers 20,22,24,25,29 = 5 of the 12 leaves, [30-40) 31,33,35,36,39 = 5 of 12
    #   9 kept records x 5/12 = 15/4; r8 -> 1; city as above 18/5 + 1
    res = _run(types={"age": "string"}, k=2, suppression_limit=0.15)
    assert res.transformation == {"age": 1, "city": 1}
    assert res.metrics["ncp"] == pytest.approx((15 / 4 + 1 + 18 / 5 + 1) / 20)


def test_generalization_height(result):
    # both hierarchies have height 2; level 1 -> 1/2 per kept cell: 9 records x 2 QIs x 1/2 = 9;
    # the suppressed record's 2 cells count 1 each -> (9 + 2) / 20
    assert result.metrics["generalization_height"] == pytest.approx(11 / 20)


def test_non_uniform_entropy(result):
    # -log2 P(original | generalized), P estimated on the input (10 records):
    # age  [20-30): 4 input records, each value once -> 4 x log2 4 = 8
    #      [30-40): 5 records, each value once -> 5 x log2 5
    #      r8 suppressed: P(47 | *) = 1/10 -> log2 10
    # city Centre: Rome 2 of 2 -> 0
    #      North: 7 records, Milan 3, Turin 4 -> 3 log2(7/3) + 4 log2(7/4)
    #      r8 suppressed: P(Naples | *) = 1/10 -> log2 10
    expected = 8 + 5 * math.log2(5) + 2 * math.log2(10) + 3 * math.log2(7 / 3) + 4 * math.log2(7 / 4)
    assert result.metrics["non_uniform_entropy"] == pytest.approx(expected)


def test_metrics_before(result):
    b = result.metrics_before
    # the input: 10 distinct (age, city) tuples -> 10 classes of 1
    assert b["equivalence_classes"] == 10
    assert b["sample_uniques"] == 10
    assert b["discernibility"] == 10
    assert b["prosecutor_risk_highest"] == pytest.approx(1.0)
    assert b["prosecutor_risk_average"] == pytest.approx(1.0)
    assert b["records_at_risk"] == pytest.approx(1.0)
    assert b["marketer_risk"] == pytest.approx(1.0)
    assert b["c_avg"] == pytest.approx(10 / (10 * 2))
    assert b["ncp"] == 0
    assert b["generalization_height"] == 0
    assert b["non_uniform_entropy"] == 0
    assert (b["homogeneous_classes"], b["homogeneous_records"]) == (10, 10)


def test_full_generalization_everything_one():
    # k=10 and no suppression: both QIs go to '*': one class of 10.
    res = _run(k=10)
    assert res.transformation == {"age": 2, "city": 2}
    m = res.metrics
    # age '*': (47-20)/27 = 1; city '*': 5/5 = 1
    assert m["ncp"] == pytest.approx(1.0)
    assert m["generalization_height"] == pytest.approx(1.0)
    assert m["discernibility"] == 100
    assert m["equivalence_classes"] == 1
    assert m["records_at_risk"] == 0
    assert m["marketer_risk"] == pytest.approx(0.1)
    # entropy: age 10 cells x log2 10; city: Rome 2, Milan 3, Turin 4, Naples 1 of 10
    expected = 10 * math.log2(10) + 2 * math.log2(10 / 2) + 3 * math.log2(10 / 3) + 4 * math.log2(10 / 4) + \
        math.log2(10)
    assert m["non_uniform_entropy"] == pytest.approx(expected)
    assert (m["homogeneous_classes"], m["homogeneous_records"]) == (0, 0)


def test_figure_20_table_metrics():
    # seed 003 Table 1 at (post-code 1 of 2, age 1 of 3), k=2: four classes of 2.
    ages = ["44", "57", "53", "45", "49", "42", "59", "54"]
    zips = ["12278", "23448", "31284", "45026", "45354", "12456", "23781", "31695"]
    five = {"44": "[40-45)", "57": "[55-60)", "53": "[50-55)", "45": "[45-50)", "49": "[45-50)", "42": "[40-45)",
            "59": "[55-60)", "54": "[50-55)"}
    ten = {a: "[40-50)" if int(a) < 50 else "[50-60)" for a in ages}
    hz = parse_hierarchy("".join(f"{z};{z[:2]}***;*\n" for z in zips), "zip")
    ha = parse_hierarchy("".join(f"{a};{five[a]};{ten[a]};*\n" for a in ages), "age")
    table = Table(pd.DataFrame({"zip": zips, "age": ages}), {"zip": "qi", "age": "qi"})
    m = anonymize(table, {"zip": hz, "age": ha}, k=2).metrics
    # zip span 45354-12278 = 33076; classes 12*** 12456-12278 = 178, 23*** 23781-23448 = 333,
    #   31*** 31695-31284 = 411, 45*** 45354-45026 = 328; two records each
    # age span 59-42 = 17; [40-45) 44-42 = 2, [55-60) 59-57 = 2, [50-55) 54-53 = 1, [45-50) 49-45 = 4
    ncp = (2 * (178 + 333 + 411 + 328) / 33076 + 2 * (2 + 2 + 1 + 4) / 17) / 16
    assert m["ncp"] == pytest.approx(ncp)
    assert m["generalization_height"] == pytest.approx((1 / 2 + 1 / 3) / 2)
    assert m["non_uniform_entropy"] == pytest.approx(16.0)  # every cell: P = 1/2
    assert m["discernibility"] == 16
    assert m["records_at_risk"] == pytest.approx(1.0)
    assert m["prosecutor_risk_average"] == pytest.approx(4 / 8)


# ---- the functions on their own ------------------------------------------------------------------
def test_class_figures_direct():
    # classes of 1, 3, 6; N = 12 with 2 suppressed; k = 3
    f = class_figures(np.array([1, 3, 6]), n=12, suppressed=2, k=3)
    assert f["equivalence_classes"] == 3
    assert f["min_class_size"] == 1
    assert f["mean_class_size"] == pytest.approx(10 / 3)
    assert f["discernibility"] == 1 + 9 + 36 + 2 * 12  # 70
    assert f["c_avg"] == pytest.approx(10 / 9)
    assert f["prosecutor_risk_highest"] == pytest.approx(1.0)
    assert f["prosecutor_risk_average"] == pytest.approx(3 / 10)
    assert f["records_at_risk"] == pytest.approx(4 / 10)  # classes of 1 and 3 (risks 1, 1/3); 6 -> 1/6
    assert f["marketer_risk"] == pytest.approx(3 / 10)  # #EC / (N - suppressed): the published records
    assert f["sample_uniques"] == 1


@pytest.mark.parametrize("size,at_risk", [(4, 1.0), (5, 0.0), (6, 0.0)])
def test_records_at_risk_threshold_is_strict(size, at_risk):
    f = class_figures(np.array([size, 10]), n=size + 10, suppressed=0, k=2)
    assert f["records_at_risk"] == pytest.approx(at_risk * size / (size + 10))


def test_homogeneity_direct():
    # class 0: a, a (homogeneous, 2 records); class 1: a, b, a; class 2: c (1 record); row 5 suppressed
    f = homogeneity(np.array([0, 0, 1, 1, 1, -1, 2]), pd.Series(["a", "a", "a", "b", "a", "b", "c"]))
    assert f == {"homogeneous_classes": 2, "homogeneous_records": 3}


def test_ncp_of_a_lifted_value_is_that_of_the_node_it_was_lifted_to():
    # 'Sala' sits under Avellino (Campania) and Forli (Emilia): with on_conflict="lift" it is generalized to
    # the lowest common ancestor, the country 'Italy', already at level 1. The node 'Italy' covers all 4
    # leaves, so the cell's NCP is 4/4 = 1 (definitions.md: |leaves(g)| / |leaves(root)|).
    # A lifted value stands for the node it was lifted to: 'Sala' reads 'Italy' at level 1, and 'Italy'
    # holds all 4 leaves, so its NCP is 4/4 = 1, not the 1/4 a per-level count would give.
    text = ("Roma;Roma;Lazio;Italy\nLatina;Latina;Lazio;Italy\nSala;Avellino;Campania;Italy\n"
            "Sala;Forli;Emilia;Italy\nNapoli;Napoli;Campania;Italy\n")
    h = parse_hierarchy(text, "city", on_conflict="lift")
    assert [h.ancestor("Sala", lv) for lv in range(4)] == ["Sala", "Italy", "Italy", "Italy"]
    codes = h.encode(pd.Series(["Sala", "Roma"]), "city").reshape(-1, 1)
    loss = loss_figures([h], [False], codes, [1], np.zeros(2, dtype=bool))
    # Sala -> 'Italy': 4/4; Roma -> 'Roma' (province, one leaf): 1/4; mean over 2 cells
    assert loss["ncp"] == pytest.approx((4 / 4 + 1 / 4) / 2)
