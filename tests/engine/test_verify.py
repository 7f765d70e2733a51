"""verify() / verify_output must catch a tampered result."""

from __future__ import annotations

import pandas as pd
import pytest

from anonymizer_app.engine import (
    KAnonymity,
    Table,
    VerificationError,
    anonymize,
    parse_hierarchy,
    verify_output,
)

AGE = "21;[20-30);*\n24;[20-30);*\n28;[20-30);*\n33;[30-40);*\n35;[30-40);*\n38;[30-40);*\n61;[60-70);*\n"
ROWS = [("1", "21", "flu"), ("2", "24", "cold"), ("3", "28", "flu"), ("4", "33", "flu"), ("5", "35", "cancer"),
        ("6", "38", "flu"), ("7", "61", "cold")]


@pytest.fixture
def case():
    frame = pd.DataFrame(ROWS, columns=["id", "age", "disease"])
    table = Table(frame, {"id": "identifying", "age": "qi", "disease": "sensitive"})
    hs = {"age": parse_hierarchy(AGE, "age")}
    # k=3, limit 0.15 (1 record): decades give classes 3, 3, 1 -> 61 suppressed
    result = anonymize(table, hs, k=3, suppression_limit=0.15)
    assert result.transformation == {"age": 1}
    assert result.output["age"].tolist() == ["[20-30)"] * 3 + ["[30-40)"] * 3 + ["*"]
    assert result.suppressed.tolist() == [False] * 6 + [True]
    assert result.verified
    return table, hs, result


def _verify(table, hs, result, output=None, suppressed=None, metrics=None, limit=None, transformation="same",
            models=None):
    verify_output(
        table, hs,
        result.output if output is None else output,
        result.suppressed if suppressed is None else suppressed,
        result.models if models is None else models,
        result.suppression_limit if limit is None else limit,
        result.metrics if metrics is None else metrics,
        result.transformation if transformation == "same" else transformation,
    )


def test_untouched_result_verifies(case):
    table, hs, result = case
    _verify(table, hs, result)
    _verify(table, hs, result, transformation=None)


def test_cell_replaced_by_a_non_ancestor(case):
    table, hs, result = case
    out = result.output.copy()
    out.loc[1, "age"] = "[30-40)"  # 24 is not in [30-40)
    with pytest.raises(VerificationError, match=r"row 2, column 'age': output '\[30-40\)' is not a "
                                                r"generalization of '24' at level 1"):
        _verify(table, hs, result, output=out)
    with pytest.raises(VerificationError, match="row 2"):
        _verify(table, hs, result, output=out, transformation=None)


def test_cell_at_another_level_than_reported(case):
    table, hs, result = case
    out = result.output.copy()
    out.loc[0, "age"] = "21"  # an ancestor (itself) but not at the reported level 1
    with pytest.raises(VerificationError, match="at level 1"):
        _verify(table, hs, result, output=out)


def test_class_below_k(case):
    table, hs, result = case
    out = result.output.copy()
    out.loc[0, "age"] = "21"  # a genuine ancestor (level 0) -> class {21} of 1, and [20-30) of 2
    metrics = dict(result.metrics, equivalence_classes=3, min_class_size=1)
    with pytest.raises(VerificationError, match=r"3-anonymity does not hold: 2 equivalence class\(es\) fail, "
                                                r"the smallest has 1 record"):
        _verify(table, hs, result, output=out, metrics=metrics, transformation=None)


def test_suppressed_row_showing_a_value(case):
    table, hs, result = case
    out = result.output.copy()
    out.loc[6, "age"] = "[60-70)"
    with pytest.raises(VerificationError, match="a suppressed record shows a value in 'age'"):
        _verify(table, hs, result, output=out)


def test_more_suppressed_than_the_limit(case):
    table, hs, result = case
    out = result.output.copy()
    out.loc[0, "age"] = "*"
    sup = result.suppressed.copy()
    sup[0] = True
    # limit 0.15 x 7 = 1.05 -> at most 1 record
    with pytest.raises(VerificationError, match="2 records suppressed, more than the limit of 1"):
        _verify(table, hs, result, output=out, suppressed=sup)
    # lower the limit instead: 0.1 x 7 = 0.7 -> none allowed
    with pytest.raises(VerificationError, match="1 records suppressed, more than the limit of 0"):
        _verify(table, hs, result, limit=0.1)


def test_changed_sensitive_column(case):
    table, hs, result = case
    out = result.output.copy()
    out.loc[3, "disease"] = "cold"
    with pytest.raises(VerificationError, match="column 'disease' is not a QI but was changed"):
        _verify(table, hs, result, output=out)


def test_identifier_left_in_output(case):
    table, hs, result = case
    out = result.output.copy()
    out.insert(0, "id", table.frame["id"])
    with pytest.raises(VerificationError, match="output columns"):
        _verify(table, hs, result, output=out)


def test_row_dropped(case):
    table, hs, result = case
    out = result.output.iloc[:-1]
    with pytest.raises(VerificationError, match="output has 6 rows, input 7"):
        _verify(table, hs, result, output=out, suppressed=result.suppressed[:-1])


@pytest.mark.parametrize("key,value,message", [
    ("equivalence_classes", 3, "reported 3 equivalence classes, output has 2"),
    ("suppressed", 0, "reported 0 suppressed records, output has 1"),
    ("min_class_size", 2, "reported smallest class size differs"),
])
def test_wrong_reported_figures(case, key, value, message):
    table, hs, result = case
    with pytest.raises(VerificationError, match=message):
        _verify(table, hs, result, metrics=dict(result.metrics, **{key: value}))


def test_stronger_model_than_reached(case):
    table, hs, result = case
    with pytest.raises(VerificationError, match="4-anonymity does not hold"):
        _verify(table, hs, result, models=[KAnonymity(4)])


def test_result_verify_method_catches_tampering(case):
    table, hs, result = case
    result.verified = False
    result.output.loc[2, "age"] = "[30-40)"
    with pytest.raises(VerificationError):
        result.verify(table, hs)
    assert result.verified is False
