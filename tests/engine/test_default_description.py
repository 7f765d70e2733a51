"""The default hierarchy's help is generated from the hierarchy that was built (issue 29, item 6): for each
kind of default, the text names the builder engine.model.defaults chose, its options and the built levels."""

import numpy as np
import pandas as pd

from anonymizer_app.engine import default_hierarchy
from anonymizer_app.engine.model.default_description import describe_default, level_counts
from anonymizer_app.engine.model.defaults import default_builder, skewness


def built(name, values, numeric, column_type):
    v = pd.Series(values, dtype=object)
    h = default_hierarchy(name, v, numeric, column_type)
    kind, options = default_builder(v, column_type)
    assert kind == h.kind
    return h, describe_default(h, options, v)


def test_equal_width_intervals():
    # 17..89: width 10 from 10 to 90, 8 intervals, merged 2 at a time
    h, text = built("age", [str(x) for x in range(17, 90)], True, "integer")
    assert h.kind == "intervals"
    assert [str(x) for x in h.labels[1]][:2] == ["[10-20)", "[20-30)"]
    assert level_counts(h) == [73, 8, 4, 2, 1]
    assert text == ("Equal-width numeric intervals: [10, 90) cut every 10, then merged 2 at a time up to *: "
                    "value (73 distinct) → 8 intervals → 4 → 2 → *.")
    assert "quantile" not in text


def test_quantile_intervals_of_a_skewed_column():
    # 1..20 once each and 1000: skewed (Fisher-Pearson g1 computed independently below)
    values = [str(x) for x in range(1, 21)] + ["1000"]
    x = np.array([float(v) for v in values])
    d = x - x.mean()
    g1 = np.mean(d**3) / np.mean(d**2) ** 1.5
    assert abs(g1 - skewness(x)) < 1e-12 and g1 > 1
    h, text = built("charges", values, True, "integer")
    assert h.kind == "quantiles"
    n = len(h.labels[1])
    assert n == level_counts(h)[1]
    assert text.startswith(f"Quantile intervals (the values are skewed: skewness {g1:.2f}, beyond ±1): {n} "
                           f"intervals holding about equal numbers of records (up to 10 asked")
    assert text.endswith(f"value (21 distinct) → {' → '.join([f'{n} intervals'] + [str(c) for c in level_counts(h)[2:-1]])} → *.")
    assert "equal-width" not in text and "nice" not in text


def test_ordered_grouping_of_education():
    values = ["Bachelors", "HS-grad", "Masters", "Doctorate", "Preschool", "Some-college", "11th", "9th",
              "Assoc-voc"]
    h, text = built("education", values, False, "string")
    assert h.kind == "grouping"
    assert level_counts(h) == [9, 5, 3, 2, 1]
    assert text == ("Ordered grouping: the values in their natural order (Preschool, 9th, 11th, …, Bachelors, "
                    "Masters, Doctorate), grouped 2 at a time, then the groups grouped, up to *: "
                    "value (9 distinct) → 5 groups → 3 → 2 → *.")
    assert "every value" not in text.lower()


def test_flat_with_missing_cells():
    h, text = built("city", ["Rome", "Milan", "", "Bari"], False, "string")
    assert h.kind == "flat"
    assert level_counts(h) == [3, 1]
    assert text == ("Every value straight to * (value → *): no natural order was found among its 3 distinct "
                    "values, so generalizing it means hiding it; missing cells: a leaf of their own, (null) below "
                    "the root.")


def test_single_value():
    h, text = built("country", ["Italy", "Italy"], False, "string")
    assert text == "Its one value straight to * (value → *): generalizing it can only hide it."


def test_dates():
    h, text = built("dob", ["2020-01-05", "2021-03-15", "1999-12-01", "2005-06-30"], False, "date")
    assert h.kind == "dates"
    assert level_counts(h) == [4, 4, 4, 4, 3, 1]
    assert text == ("Dates (read as yyyy-mm-dd): date → month → quarter → year → decade → *: value (4 distinct) → "
                    "4 labels → 4 → 4 → 3 → *.")
