"""Automatic hierarchy builders: exact trees for small inputs, data-driven grouping >= k."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymizer_app.engine import HierarchyError, InputError
from anonymizer_app.engine.model.builders import (
    BUILDERS,
    build,
    build_data_driven,
    build_dates,
    build_grouping,
    build_intervals,
    build_masking,
)


def S(*values) -> pd.Series:
    return pd.Series([str(v) for v in values], dtype=object)


def rows(h) -> list[list[str]]:
    return h.to_rows()


# ---- intervals --------------------------------------------------------------------------------------
def test_intervals_default_bounds():
    assert rows(build_intervals("age", S(17, 23, 35, 90, 44))) == [
        ["17", "[10-20)", "[10-30)", "[10-50)", "[10-90)", "*"],
        ["23", "[20-30)", "[10-30)", "[10-50)", "[10-90)", "*"],
        ["35", "[30-40)", "[30-50)", "[10-50)", "[10-90)", "*"],
        ["44", "[40-50)", "[30-50)", "[10-50)", "[10-90)", "*"],
        ["90", "[90-100)", "[90-100)", "[90-100)", "[90-100)", "*"],
    ]


def test_intervals_outside_nodes_and_fanout_per_level():
    h = build_intervals("age", S(10, 25, 35, 95), lower=20, upper=90, width=10, fanout="2,3")
    assert rows(h) == [["10", "<20", "<20", "*"], ["25", "[20-30)", "[20-40)", "*"],
                       ["35", "[30-40)", "[20-40)", "*"], ["95", ">=90", ">=90", "*"]]
    assert h.kind == "intervals"


def test_intervals_outside_refused():
    with pytest.raises(HierarchyError) as exc:
        build_intervals("age", S(10, 25, 95), lower=20, upper=90, width=10, outside="refuse")
    assert str(exc.value) == "column 'age': 2 value(s) outside [20, 90): '10', '95'"


def test_intervals_negatives_and_decimals():
    h = build_intervals("x", S(-0.3, 0.7, 0.05, -1), width=0.1, fanout="5")
    assert rows(h) == [
        ["-1", "[-1, -0.9)", "[-1, -0.5)", "*"],
        ["-0.3", "[-0.3, -0.2)", "[-0.5, 0)", "*"],
        ["0.05", "[0-0.1)", "[0-0.5)", "*"],
        ["0.7", "[0.7-0.8)", "[0.5-0.8)", "*"],  # 0.7 lands in [0.7-0.8) despite binary floats
    ]


def test_intervals_one_value_and_errors():
    assert rows(build_intervals("x", S(5))) == [["5", "[5-6)", "*"]]
    with pytest.raises(HierarchyError, match="column 'x' has no values"):
        build_intervals("x", S())
    with pytest.raises(HierarchyError, match="column 'x': value 'abc' is not a number"):
        build_intervals("x", S(1, "abc"))
    with pytest.raises(InputError, match="fanout must be at least 2"):
        build_intervals("x", S(1, 2), fanout="1")


# ---- grouping ------------------------------------------------------------------------------------
def test_grouping_alphabetical_labels_say_what_they_hold():
    h = build_grouping("e", S("Bachelors", "Masters", "Doctorate", "HS-grad", "Preschool", "Some-college", "Assoc"))
    assert rows(h) == [
        ["Assoc", "{Assoc, Bachelors}", "Assoc..HS-grad", "*"],
        ["Bachelors", "{Assoc, Bachelors}", "Assoc..HS-grad", "*"],
        ["Doctorate", "{Doctorate, HS-grad}", "Assoc..HS-grad", "*"],
        ["HS-grad", "{Doctorate, HS-grad}", "Assoc..HS-grad", "*"],
        ["Masters", "{Masters, Preschool}", "{Masters, Preschool, Some-college}", "*"],
        ["Preschool", "{Masters, Preschool}", "{Masters, Preschool, Some-college}", "*"],
        ["Some-college", "Some-college", "{Masters, Preschool, Some-college}", "*"],
    ]


def test_grouping_frequency_numeric_custom():
    assert rows(build_grouping("c", S("a", "b", "b", "c", "c", "c"), order="frequency", fanout="3")) == [
        ["c", "*"], ["b", "*"], ["a", "*"]]
    assert rows(build_grouping("n", S(10, 9, 100, 1), order="numeric")) == [
        ["1", "{1, 9}", "*"], ["9", "{1, 9}", "*"], ["10", "{10, 100}", "*"], ["100", "{10, 100}", "*"]]
    assert rows(build_grouping("c", S("x", "y", "z"), order="custom", custom_order="z,x,y")) == [
        ["z", "{z, x}", "*"], ["x", "{z, x}", "*"], ["y", "y", "*"]]


def test_grouping_custom_order_errors_and_one_value():
    with pytest.raises(HierarchyError) as exc:
        build_grouping("c", S("x", "y"), order="custom", custom_order=["x"])
    assert str(exc.value) == "column 'c': the custom order lacks 1 value(s) of the column: 'y'"
    with pytest.raises(HierarchyError) as exc:
        build_grouping("c", S("x"), order="custom", custom_order=["x", "w"])
    assert str(exc.value) == "column 'c': the custom order names 1 value(s) not in the column: 'w'"
    assert rows(build_grouping("c", S("only"))) == [["only", "*"]]


# ---- masking --------------------------------------------------------------------------------------
def test_masking_unequal_lengths():
    h = build_masking("zip", S("67012", "670", "67099", "1"))
    assert rows(h) == [
        ["1", "1****", "1****", "1****", "1****", "*"],
        ["670", "670**", "670**", "67***", "6****", "*"],
        ["67012", "6701*", "670**", "67***", "6****", "*"],
        ["67099", "6709*", "670**", "67***", "6****", "*"],
    ]
    assert "2 value(s) shorter than 5 characters padded with '*' on the right" in h.notes[-1]


def test_masking_from_left_and_levels():
    assert rows(build_masking("c", S("123", "124"), from_right=False, levels=2)) == [
        ["123", "*23", "**3", "*"], ["124", "*24", "**4", "*"]]


# ---- dates ----------------------------------------------------------------------------------------
def test_dates_across_years_detected_format():
    h = build_dates("d", S("15/03/2024", "31/12/2019", "01/01/2020"))
    assert rows(h) == [
        ["31/12/2019", "2019-12-31", "2019-12", "2019", "2010s", "*"],
        ["01/01/2020", "2020-01-01", "2020-01", "2020", "2020s", "*"],
        ["15/03/2024", "2024-03-15", "2024-03", "2024", "2020s", "*"],
    ]


def test_dates_iso_and_chosen_levels():
    assert rows(build_dates("d", S("2024-03-15", "2019-12-31"))) == [
        ["2019-12-31", "2019-12", "2019", "2010s", "*"], ["2024-03-15", "2024-03", "2024", "2020s", "*"]]
    assert rows(build_dates("d", S("2024-03-15", "1999-12-31"), levels="century,year")) == [
        ["1999-12-31", "1999", "1900-1999", "*"], ["2024-03-15", "2024", "2000-2099", "*"]]


def test_dates_errors():
    with pytest.raises(HierarchyError) as exc:
        build_dates("d", S("2024-03-15", "2024-02-30"))
    assert str(exc.value) == "column 'd': value '2024-02-30' is not a date in the format yyyy-mm-dd of the other values"
    with pytest.raises(HierarchyError, match="read both as dd/mm/yyyy and as mm/dd/yyyy"):
        build_dates("d", S("01/02/2024", "03/04/2024"))
    assert rows(build_dates("d", S("01/02/2024"), format="mm/dd/yyyy", levels="month"))[0] == [
        "01/02/2024", "2024-01", "*"]


# ---- data-driven ---------------------------------------------------------------------------------
def test_data_driven_exact():
    h = build_data_driven("a", S(*([1] * 6 + [2] + [3] + [4] * 5 + [5])), k=5)
    assert rows(h) == [["1", "{1, 2, 3}", "*"], ["2", "{1, 2, 3}", "*"], ["3", "{1, 2, 3}", "*"],
                       ["4", "{4, 5}", "*"], ["5", "{4, 5}", "*"]]


def test_data_driven_frequent_values_stay():
    h = build_data_driven("c", S(*(["a"] * 3 + ["b"] + ["c"] + ["d"] * 4)), k=2)
    assert rows(h) == [["a", "a", "*"], ["b", "{b, c}", "*"], ["c", "{b, c}", "*"], ["d", "d", "*"]]
    assert rows(build_data_driven("c", S("x"), k=3)) == [["x", "x", "*"]]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-20, 20), min_size=1, max_size=80), st.integers(1, 12),
       st.sampled_from(["numeric", "alphabetical", "frequency"]))
def test_data_driven_every_level1_node_holds_k(values, k, order):
    series = S(*values)
    h = build_data_driven("v", series, k=k, order=order)
    level1 = pd.Series([h.ancestor(v, 1) for v in series])
    sizes = level1.value_counts()
    if len(values) >= k:
        assert sizes.min() >= k
    else:
        assert len(sizes) == 1
    # values already holding k records are merged only when a rare neighbour has nowhere else to go
    assert h.height == 2


# ---- registry -------------------------------------------------------------------------------------
def test_registry_and_build_validates():
    assert set(BUILDERS) == {"intervals", "grouping", "masking", "dates", "data-driven", "quantiles", "flat"}
    ages = S(17, 23, 90)
    assert BUILDERS["intervals"].defaults(ages) == {"lower": 10.0, "upper": 100.0, "width": 10.0, "fanout": "2",
                                                    "outside": "nodes"}
    assert build("masking", "z", S("12", "13"), from_right="no", levels="1").to_rows() == [
        ["12", "*2", "*"], ["13", "*3", "*"]]
    with pytest.raises(InputError, match="k must be at least 1"):
        build("data-driven", "z", S("1"), k="0")
    with pytest.raises(InputError, match="kind must be one of"):
        build("nope", "z", S("1"))
