"""Datafly on Table 1 of seed 003 (QIs zipcode then age, k=2): the iterations of its Figure 20."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from anonymizer_app.engine import Table, anonymize, parse_hierarchy

# Table 1 of seed 003, in its row order.
TABLE_1 = [
    # Id, Surname, Age, Gender, Post-Code
    ("1", "Smith", "44", "Male", "12278"),
    ("2", "Anderson", "57", "Male", "23448"),
    ("3", "Garcia", "53", "Female", "31284"),
    ("4", "Johnson", "45", "Male", "45026"),
    ("5", "Miller", "49", "Female", "45354"),
    ("6", "Williams", "42", "Male", "12456"),
    ("7", "Brown", "59", "Male", "23781"),
    ("8", "Taylor", "54", "Female", "31695"),
]

# Hierarchies written out by hand: post-code -> first two digits + '***' -> '*****';
# age -> 5-year interval -> 10-year interval -> '*'.
POST_CODE_HIERARCHY = """\
12278;12***;*****
23448;23***;*****
31284;31***;*****
45026;45***;*****
45354;45***;*****
12456;12***;*****
23781;23***;*****
31695;31***;*****
"""
AGE_HIERARCHY = """\
44;[40-45);[40-50);*
57;[55-60);[50-60);*
53;[50-55);[50-60);*
45;[45-50);[40-50);*
49;[45-50);[40-50);*
42;[40-45);[40-50);*
59;[55-60);[50-60);*
54;[50-55);[50-60);*
"""


def _table(qi_order: list[str]) -> tuple[Table, dict]:
    frame = pd.DataFrame(TABLE_1, columns=["Id", "Surname", "Age", "Gender", "Post-Code"])
    # The QI order of a Table is its column order: put the QIs in the requested order, Gender last.
    frame = frame[["Id", "Surname", *qi_order, "Gender"]]
    table = Table(frame, {"Id": "identifying", "Surname": "identifying", "Post-Code": "qi", "Age": "qi",
                          "Gender": "insensitive"})
    hierarchies = {
        "Post-Code": parse_hierarchy(POST_CODE_HIERARCHY, "Post-Code"),
        "Age": parse_hierarchy(AGE_HIERARCHY, "Age"),
    }
    return table, hierarchies


def test_hierarchies_as_written():
    _, hs = _table(["Post-Code", "Age"])
    assert hs["Post-Code"].height == 2  # the single top label '*****' is the root: nothing added
    assert hs["Age"].height == 3
    assert hs["Post-Code"].notes == []


def test_figure_20_iterations():
    table, hs = _table(["Post-Code", "Age"])
    result = anonymize(table, hs, k=2)
    assert table.qi == ["Post-Code", "Age"]
    steps = result.steps
    assert len(steps) == 3

    # Iteration 1: the 8 tuples of Table 1 are all distinct (frequency 1 each). Both QIs have 8 distinct
    # values; the tie goes to the QI listed first, the post-code.
    assert steps[0]["levels"] == {"Post-Code": 0, "Age": 0}
    assert steps[0]["distinct"] == {"Post-Code": 8, "Age": 8}
    assert steps[0]["equivalence_classes"] == 8
    assert steps[0]["records_in_failing_classes"] == 8
    assert steps[0]["generalized"] == "Post-Code"

    # Iteration 2: post-codes 12***, 23***, 31***, 45*** (4 distinct), ages still 8 distinct: every
    # tuple still occurs once (frequency column of Figure 20: all 1) -> generalize the age.
    assert steps[1]["levels"] == {"Post-Code": 1, "Age": 0}
    assert steps[1]["distinct"] == {"Post-Code": 4, "Age": 8}
    assert steps[1]["equivalence_classes"] == 8
    assert steps[1]["records_in_failing_classes"] == 8
    assert steps[1]["generalized"] == "Age"

    # Iteration 3: four tuples of frequency 2 -> 2-anonymous, stop.
    assert steps[2]["levels"] == {"Post-Code": 1, "Age": 1}
    assert steps[2]["distinct"] == {"Post-Code": 4, "Age": 4}
    assert steps[2]["equivalence_classes"] == 4
    assert steps[2]["records_in_failing_classes"] == 0
    assert "generalized" not in steps[2]

    assert result.transformation == {"Post-Code": 1, "Age": 1}
    assert result.suppressed.sum() == 0

    # The frequency list of iteration 3 in Figure 20 (Age, Post-Code, Frequency).
    freq = Counter(zip(result.output["Age"], result.output["Post-Code"]))
    assert freq == {("[40-45)", "12***"): 2, ("[55-60)", "23***"): 2, ("[50-55)", "31***"): 2,
                    ("[45-50)", "45***"): 2}

    # Output rows: identifiers removed, input order, Gender untouched.
    assert list(result.output.columns) == ["Post-Code", "Age", "Gender"]
    assert [tuple(r) for r in result.output.itertuples(index=False)] == [
        ("12***", "[40-45)", "Male"),
        ("23***", "[55-60)", "Male"),
        ("31***", "[50-55)", "Female"),
        ("45***", "[45-50)", "Male"),
        ("45***", "[45-50)", "Female"),
        ("12***", "[40-45)", "Male"),
        ("23***", "[55-60)", "Male"),
        ("31***", "[50-55)", "Female"),
    ]
    m = result.metrics
    assert m["equivalence_classes"] == 4
    assert m["min_class_size"] == 2
    assert m["discernibility"] == 4 * 2**2  # four classes of 2, nothing suppressed
    assert m["c_avg"] == pytest.approx(8 / (4 * 2))
    assert result.verified


def test_tie_goes_to_the_first_listed_qi():
    # With age listed first the tie of iteration 1 goes to the age; the end result is the same.
    table, hs = _table(["Age", "Post-Code"])
    result = anonymize(table, hs, k=2)
    assert [s.get("generalized") for s in result.steps] == ["Age", "Post-Code", None]
    assert result.steps[1]["distinct"] == {"Age": 4, "Post-Code": 8}
    assert result.transformation == {"Age": 1, "Post-Code": 1}
    assert Counter(zip(result.output["Age"], result.output["Post-Code"])) == {
        ("[40-45)", "12***"): 2, ("[55-60)", "23***"): 2, ("[50-55)", "31***"): 2, ("[45-50)", "45***"): 2}


def test_k3_goes_further():
    # k=3: after iteration 3 the four classes of 2 all fail; distinct 4/4 -> post-code to '*****'
    # (1 distinct), then age to 10-year intervals: [40-50) holds 44,45,49,42 and [50-60) 57,53,59,54.
    table, hs = _table(["Post-Code", "Age"])
    result = anonymize(table, hs, k=3)
    assert [s.get("generalized") for s in result.steps] == ["Post-Code", "Age", "Post-Code", "Age", None]
    assert result.transformation == {"Post-Code": 2, "Age": 2}
    assert Counter(zip(result.output["Age"], result.output["Post-Code"])) == {
        ("[40-50)", "*****"): 4, ("[50-60)", "*****"): 4}
    assert result.metrics["discernibility"] == 4**2 + 4**2
