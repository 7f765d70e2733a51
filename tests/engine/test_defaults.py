"""Default hierarchies from the column's type and distribution (engine.model.defaults, definitions.md "Default
hierarchies"), natural orders (engine.model.order), quantile intervals, and every builder's missing leaf."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import default_hierarchy
from anonymizer_app.engine.model.builders import BUILDERS, build
from anonymizer_app.engine.model.defaults import default_builder, skewness
from anonymizer_app.engine.model.missing import MISSING, NULL_LABEL
from anonymizer_app.engine.model.order import natural_order

ADULT_EDUCATION = ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
                   "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"]


def _paths(h):
    return {str(leaf): tuple(str(h.labels[lv][h.maps[lv][i]]) for lv in range(h.level_count))
            for i, leaf in enumerate(h.leaves)}


# ---- natural orders --------------------------------------------------------------------------------------
def test_adult_education_in_its_ladder_order():
    assert natural_order(ADULT_EDUCATION) == [
        "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad", "Assoc-voc",
        "Some-college", "Assoc-acdm", "Bachelors", "Masters", "Prof-school", "Doctorate"]


def test_likert_and_other_ladders():
    assert natural_order(["Agree", "Strongly disagree", "Neutral", "Strongly agree", "Disagree"]) == [
        "Strongly disagree", "Disagree", "Neutral", "Agree", "Strongly agree"]
    assert natural_order(["often", "Never", "SOMETIMES", "always", "rarely"]) == [
        "Never", "rarely", "SOMETIMES", "often", "always"]
    assert natural_order(["Good", "Poor", "Excellent", "Fair"]) == ["Poor", "Fair", "Good", "Excellent"]
    assert natural_order(["PhD", "Master's degree", "High school graduate", "Some college"]) == [
        "High school graduate", "Some college", "Master's degree", "PhD"]


def test_a_leading_number_orders_the_values():
    assert natural_order(["10 - often", "2 - rarely", "1 - never", "65+"]) == [
        "1 - never", "2 - rarely", "10 - often", "65+"]


def test_no_natural_order():
    assert natural_order(["Rome", "Milan", "Turin"]) is None
    assert natural_order(["Agree", "Rome"]) is None  # not every value is a rung
    assert natural_order(["Agree"]) is None


# ---- the default builder of a column ------------------------------------------------------------------------
def test_the_default_builder_follows_type_and_distribution():
    rng = np.random.default_rng(1)
    symmetric = pd.Series([str(v) for v in rng.integers(20, 70, 500)])
    skewed = pd.Series([str(int(v)) for v in rng.lognormal(3, 1.2, 500)])
    assert abs(skewness(pd.to_numeric(symmetric).to_numpy())) <= 1 < abs(skewness(pd.to_numeric(skewed).to_numpy()))
    assert default_builder(symmetric, "integer")[0] == "intervals"
    assert default_builder(skewed, "integer")[0] == "quantiles"
    assert default_builder(pd.Series(["2024-01-03", "2024-02-10", ""]), "date") == (
        "dates", {"levels": "month,quarter,year,decade", "format": "yyyy-mm-dd"})
    kind, options = default_builder(pd.Series(["Agree", "Disagree", "NA", "Neutral"]), "string")
    assert kind == "grouping" and options["custom_order"] == "Disagree\nNeutral\nAgree"
    assert default_builder(pd.Series(["Rome", "Milan"]), "string") == ("flat", {})
    assert default_builder(pd.Series(["5", "5", ""]), "integer") == ("flat", {})  # one value


def test_skewness_by_hand():
    # 1, 1, 1, 5: mean 2, deviations -1, -1, -1, 3: m2 = 3, m3 = 6, g1 = 6 / 3^1.5
    assert skewness(np.array([1, 1, 1, 5])) == pytest.approx(6 / 3**1.5)


def test_quantile_intervals_by_hand():
    # 10 records: 1 x5, 2 x2, 3, 50, 900; bins 4: quantiles (numpy 'higher') at 0.25, 0.5, 0.75 of the sorted
    # records (1,1,1,1,1,2,2,3,50,900) are positions ceil(2.25)=3 -> 1, ceil(4.5)=5 -> 2, ceil(6.75)=7 -> 3;
    # cuts above the minimum: 2, 3. Intervals [1-2), [2-3), [3-900]; then pairs: [1-3), [3-900]; then '*'.
    values = pd.Series(["1"] * 5 + ["2", "2", "3", "50", "900"])
    h = build("quantiles", "x", values, bins=4)
    assert _paths(h) == {
        "1": ("1", "[1-2)", "[1-3)", "*"), "2": ("2", "[2-3)", "[1-3)", "*"),
        "3": ("3", "[3-900]", "[3-900]", "*"), "50": ("50", "[3-900]", "[3-900]", "*"),
        "900": ("900", "[3-900]", "[3-900]", "*")}


def test_one_default_wherever_shown():
    """The column page's default (default_hierarchy) equals the builder page's first preview: the default
    builder run with its form defaults."""
    rng = np.random.default_rng(2)
    for values, column_type in ((pd.Series([str(v) for v in rng.integers(0, 99, 300)]), "integer"),
                                (pd.Series([str(int(v)) for v in rng.lognormal(5, 1.5, 300)] + [""]), "integer"),
                                (pd.Series(["Agree", "Disagree", "Neutral", "", "Agree"]), "string"),
                                (pd.Series(["03/01/2024", "15/02/2024", "28/12/2023"]), "date")):
        numeric = column_type == "integer"
        kind, _ = default_builder(values, column_type)
        info = BUILDERS[kind]
        preview = info.run("c", values, info.defaults(values))
        assert _paths(default_hierarchy("c", values, numeric, column_type)) == _paths(preview)


# ---- every builder gives the missing value its own leaf ------------------------------------------------
@pytest.mark.parametrize("kind, values", [
    ("intervals", ["3", "17", "", "25", "NA"]),
    ("quantiles", ["3", "17", "", "25", "NA"]),
    ("grouping", ["b", "a", "?", "c"]),
    ("masking", ["67012", "67013", "", "67110"]),
    ("dates", ["2024-01-03", "null", "2024-02-10"]),
    ("data-driven", ["a", "a", "b", "", "c"]),
    ("flat", ["a", "N/A", "b"]),
])
def test_every_builder_gives_missing_values_their_own_leaf(kind, values):
    h = build(kind, "c", pd.Series(values))
    assert [str(h.labels[lv][h.maps[lv][h.leaf_index[MISSING]]]) for lv in range(h.level_count)] == (
        [MISSING] + [NULL_LABEL] * (h.height - 1) + ["*"])
    assert not {"NA", "?", "null", "N/A"} & set(map(str, h.leaves))  # markers are not values
