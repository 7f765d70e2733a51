"""Statistics before and after (engine.measure.statistics, intervals): every figure recomputed independently
with pandas and scipy on small tables (generalized ranges, '*', suppressed records, missing values)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats.contingency import association

from anonymizer_app.engine.measure import statistics as st
from anonymizer_app.engine.measure.intervals import bounds_of, label_bounds

AGES = ["23", "35", "35", "41", "", "58", "62", "NA", "29", "47", "35", "51"]
# the same rows published: ranges of width 10, one cell generalized to '*', row 6 suppressed ('*' row kept)
PUBLISHED = ["[20-30)", "[30-40)", "[30-40)", "[40-50)", "", "[50-60)", "*", "", "[20-30)", "[40-50)", "[30-40)",
             "[50-60)"]
SUPPRESSED = np.array([False] * 6 + [True] + [False] * 5)
SEX = ["m", "f", "f", "m", "f", "m", "m", "f", "?", "f", "m", "m"]
SEX_AFTER = ["m", "f", "f", "*", "f", "m", "*", "f", "?", "f", "m", "m"]


def test_label_bounds_of_the_projects_range_labels():
    assert label_bounds("[20-30)") == (20.0, 30.0)
    assert label_bounds("[20-30]") == (20.0, 30.0)
    assert label_bounds("[-10, -5)") == (-10.0, -5.0)
    assert label_bounds("20-29") == (20.0, 29.0)
    assert label_bounds("-5--1") == (-5.0, -1.0)
    assert label_bounds("[1.5-2.25)") == (1.5, 2.25)
    assert label_bounds("<20", (3.0, 90.0)) == (3.0, 20.0)
    assert label_bounds(">=80", (3.0, 90.0)) == (80.0, 90.0)
    assert label_bounds("<20") is None  # open-ended without the input's range: no bounds
    for text in ("*", "(null)", "Married", "[20-30", "30-20", "2020-01-xx"):
        assert label_bounds(text) is None
    b = bounds_of(np.array(["12", "[20-30)", "*", "7.5", "x"], dtype=object))
    assert np.allclose(b.low, [12, 20, np.nan, 7.5, np.nan], equal_nan=True)
    assert np.allclose(b.high, [12, 30, np.nan, 7.5, np.nan], equal_nan=True)
    assert b.generalized.tolist() == [False, True, False, False, False]


def _numbers(texts: list[str]) -> pd.Series:
    return pd.to_numeric(pd.Series(texts), errors="coerce").dropna()


def _pandas_figures(x: pd.Series) -> dict:
    out = {"records": len(x), "mean": x.mean(), "sd": x.std(), "median": x.median()}
    out.update({f"p{round(p * 100)}": x.quantile(p) for p in st.QUANTILES})
    return out


def _close(mine: dict, theirs: dict) -> None:
    assert set(mine) == set(theirs)
    for key, value in theirs.items():
        assert mine[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key


def test_counts_with_missing_star_and_suppressed_records():
    s = st.column_statistics("age", pd.Series(AGES), pd.Series(PUBLISHED), SUPPRESSED)
    assert s["kind"] == "numeric"
    assert {k: s["before"][k] for k in ("records", "non_missing", "missing", "distinct")} == \
        {"records": 12, "non_missing": 10, "missing": 2, "distinct": 8}
    after = s["after"]
    # the suppressed record is left out; '*' would count as missing (here it is the suppressed row's)
    assert after["records"] == 11 and after["suppressed"] == 1
    assert after["missing"] == 2 and after["non_missing"] == 9 and after["generalized_to_root"] == 0
    assert after["distinct"] == 4 and after["ranges"] == 9


def test_numbers_before_equal_pandas():
    s = st.column_statistics("age", pd.Series(AGES), pd.Series(AGES))
    _close(s["before"]["numbers"], _pandas_figures(_numbers(AGES)))
    _close(s["after"]["numbers"], _pandas_figures(_numbers(AGES)))
    assert "interval_aware" not in s["after"]  # nothing generalized: one set of figures


def test_midpoint_estimates_equal_pandas_on_midpoints():
    s = st.column_statistics("age", pd.Series(AGES), pd.Series(PUBLISHED), SUPPRESSED)
    kept = [p for p, gone in zip(PUBLISHED, SUPPRESSED) if not gone and p.startswith("[")]
    mids = pd.Series([(int(p[1:3]) + int(p[4:6])) / 2 for p in kept])
    _close(s["after"]["numbers"], _pandas_figures(mids))


def _grouped_quantile(intervals: list[tuple[float, float, int]], p: float) -> float:
    """The textbook grouped-data quantile L + (p n - F) / f x w over non-overlapping ranges in order."""
    n = sum(c for _, _, c in intervals)
    below = 0
    for lo, hi, c in intervals:
        if below + c >= p * n:
            return lo + (p * n - below) / c * (hi - lo)
        below += c
    raise AssertionError


def test_interval_aware_estimates():
    s = st.column_statistics("age", pd.Series(AGES), pd.Series(PUBLISHED), SUPPRESSED)
    aware = s["after"]["interval_aware"]
    groups = [(20, 30, 2), (30, 40, 3), (40, 50, 2), (50, 60, 2)]
    n = 9
    mids = pd.Series(np.repeat([25.0, 35.0, 45.0, 55.0], [2, 3, 2, 2]))
    assert aware["mean"] == pytest.approx(mids.mean())  # the midpoint is the mean of a uniform range
    # the law of total variance: the midpoints' sample variance plus each range's own w^2 / 12
    assert aware["sd"] == pytest.approx(math.sqrt(mids.var() + 100 / 12))
    for p in st.QUANTILES:
        assert aware[f"p{round(p * 100)}"] == pytest.approx(_grouped_quantile(groups, p)), p
    assert aware["median"] == pytest.approx(_grouped_quantile(groups, 0.5))
    assert aware["records"] == n


def test_interval_aware_quantiles_with_points_and_overlapping_ranges():
    """A mixture of exact values and overlapping ranges (local recoding): the quantile is where the mixture's
    distribution function, built independently here on a fine grid, reaches p."""
    labels = np.array(["10", "[0-20]", "[5-15]", "30", "[25-45]"], dtype=object)
    counts = np.array([3, 4, 2, 1, 5])
    b = bounds_of(labels)
    grid = np.linspace(0, 45, 450_001)
    cdf = np.zeros_like(grid)
    for lo, hi, c in zip(b.low, b.high, counts):
        cdf += c * (np.clip((grid - lo) / (hi - lo), 0, 1) if hi > lo else (grid >= lo))
    for p in (0.05, 0.2, 0.25, 0.5, 0.6, 0.75, 0.95):
        expected = grid[np.searchsorted(cdf, p * counts.sum() - 1e-12)]
        assert st.mixture_quantile(b, counts, p) == pytest.approx(expected, abs=2e-4), p


def test_open_ended_labels_take_the_inputs_range():
    before = pd.Series(["3", "18", "25", "40", "85", "91"])
    after = pd.Series(["<20", "<20", "[20-60)", "[20-60)", ">=80", ">=80"])
    s = st.column_statistics("x", before, after)
    mids = pd.Series([11.5, 11.5, 40, 40, 85.5, 85.5])  # <20 is [3, 20], >=80 is [80, 91]
    _close(s["after"]["numbers"], _pandas_figures(mids))


def test_categorical_frequencies_and_a_category_input():
    s = st.column_statistics("sex", pd.Series(SEX), pd.Series(SEX_AFTER), SUPPRESSED)
    assert s["kind"] == "categorical"
    assert s["before"]["frequencies"]["values"] == ["m", "f", "?"]
    assert s["before"]["frequencies"]["counts"] == [6, 5, 1]
    assert s["before"]["missing"] == 1  # '?' is a missing marker
    assert s["after"]["frequencies"]["values"] == ["f", "m", "*", "?"]
    assert s["after"]["frequencies"]["counts"] == [5, 4, 1, 1]
    assert s["after"]["generalized_to_root"] == 1 and s["after"]["missing"] == 2 and s["after"]["suppressed"] == 1
    same = st.column_statistics("sex", pd.Series(SEX, dtype="category"), pd.Series(SEX_AFTER, dtype="category"),
                                SUPPRESSED)
    assert same == s


def test_numeric_frequencies_in_value_order_and_the_rest_summed():
    values = [str(v) for v in np.repeat(np.arange(40), np.arange(40) % 7 + 1)]
    f = st.column_statistics("v", pd.Series(values), pd.Series(values))["before"]["frequencies"]
    expected = pd.Series(values).astype(int).value_counts()
    top = expected.sort_values(ascending=False, kind="stable")
    chosen = sorted(top.groupby(top).apply(lambda g: sorted(g.index)).explode().tolist(),
                    key=lambda v: (-expected[v], v))[:st.FREQUENCY_TOP]
    assert f["values"] == [str(v) for v in sorted(chosen)]
    assert f["counts"] == [int(expected[v]) for v in sorted(chosen)]
    assert f["other_values"] == 10 and f["other_records"] == len(values) - sum(f["counts"])


def _pair_frames():
    rng = np.random.default_rng(7)
    n = 400
    age = rng.integers(17, 80, n)
    hours = np.clip(age // 2 + rng.integers(0, 30, n), 1, 99)
    job = np.array(["a", "b", "c", "d"])[(age // 20) % 4]
    job = np.where(rng.random(n) < 0.3, rng.choice(["a", "b", "c", "d"], n), job)
    before = pd.DataFrame({"age": age.astype(str), "hours": hours.astype(str), "job": job})
    before.loc[rng.random(n) < 0.05, "hours"] = ""
    after = pd.DataFrame({"age": [f"[{a // 10 * 10}-{a // 10 * 10 + 10})" for a in age],
                          "hours": before["hours"], "job": np.where(np.isin(job, ["c", "d"]), "c|d", job)})
    after.loc[rng.random(n) < 0.05, "age"] = "*"
    suppressed = rng.random(n) < 0.04
    return before, after, suppressed


def _crosstab_v(x: pd.Series, y: pd.Series) -> float:
    return association(pd.crosstab(x, y).to_numpy(), method="cramer", correction=False)


def test_cramers_v_against_scipy():
    before, after, suppressed = _pair_frames()
    pair = st.association("age", "job", (before["age"], before["job"]), (after["age"], after["job"]), suppressed)
    assert pair["before"]["cramers_v"] == pytest.approx(_crosstab_v(before["age"], before["job"]))
    kept = after[~suppressed & (after["age"] != "*")]
    assert pair["after"]["cramers_v"] == pytest.approx(_crosstab_v(kept["age"], kept["job"]))
    assert pair["after"]["records"] == len(kept)
    assert pair["change"]["cramers_v"] == pytest.approx(pair["after"]["cramers_v"] - pair["before"]["cramers_v"])
    assert st.cramers_v(pd.crosstab(before["age"], before["job"]).to_numpy()) == \
        pytest.approx(pair["before"]["cramers_v"])
    # the shown table sums to the records counted, the rest in "other values"
    table = pair["before"]["table"]
    assert np.array(table["counts"]).sum() == pair["before"]["records"]
    assert table["rows"][-1] == st.OTHER and len(table["rows"]) == st.CROSS_TOP + 1
    ages = [float(v) for v in table["rows"][:-1]]
    assert ages == sorted(ages)  # numeric rows in value order


def test_correlations_against_pandas_on_midpoints():
    before, after, suppressed = _pair_frames()
    pair = st.association("age", "hours", (before["age"], before["hours"]), (after["age"], after["hours"]),
                          suppressed)
    x = pd.DataFrame({"a": pd.to_numeric(before["age"]), "h": pd.to_numeric(before["hours"], errors="coerce")})
    x = x.dropna()
    assert pair["before"]["pearson"] == pytest.approx(x["a"].corr(x["h"]))
    assert pair["before"]["spearman"] == pytest.approx(x["a"].corr(x["h"], method="spearman"))
    kept = after[~suppressed]
    mids = kept["age"].map(lambda v: np.nan if v == "*" else (float(v[1:].split("-")[0]) + 5))
    y = pd.DataFrame({"a": mids, "h": pd.to_numeric(kept["hours"], errors="coerce")}).dropna()
    assert pair["after"]["pearson"] == pytest.approx(y["a"].corr(y["h"]))
    assert pair["after"]["spearman"] == pytest.approx(y["a"].corr(y["h"], method="spearman"))
    assert pair["kinds"] == ["numeric", "numeric"]


def test_histogram_on_one_set_of_edges():
    s = st.column_statistics("age", pd.Series(AGES), pd.Series(PUBLISHED), SUPPRESSED)
    h = s["histogram"]
    edges = np.array(h["edges"])
    assert np.all(np.diff(edges) > 0) and edges[0] <= 20 and edges[-1] > 62
    before = np.histogram(_numbers(AGES), bins=edges)[0]
    assert h["before"] == pytest.approx(before.tolist())
    assert sum(h["after"]) == pytest.approx(9)  # the published ranges' records, spread over the bins
    width = edges[1] - edges[0]
    # [30-40) holds 3 records: 3 x width / 10 in each bin inside it
    inside = (edges[:-1] >= 30) & (edges[1:] <= 40)
    assert np.allclose(np.array(h["after"])[inside], 3 * width / 10)


def test_table_statistics_columns_in_input_order():
    before, after, suppressed = _pair_frames()
    out = st.table_statistics(before, after.drop(columns=["hours"]), suppressed)
    assert [c["column"] for c in out["columns"]] == ["age", "job"]
    assert out["records_before"] == 400 and out["suppressed"] == int(suppressed.sum())
    assert out["records_after"] == 400 - int(suppressed.sum())


def test_a_column_generalized_to_star_everywhere():
    """Every published age '*': no numbers after, the cells counted as missing and '*', no association."""
    stars = pd.Series(["*"] * len(AGES))
    s = st.column_statistics("age", pd.Series(AGES), stars, SUPPRESSED)
    assert s["after"]["numbers"] == {} and "interval_aware" not in s["after"]
    assert s["after"]["missing"] == 11 and s["after"]["generalized_to_root"] == 11 and s["after"]["distinct"] == 0
    assert sum(s["histogram"]["after"]) == 0
    pair = st.association("age", "sex", (pd.Series(AGES), pd.Series(SEX)), (stars, pd.Series(SEX_AFTER)),
                          SUPPRESSED)
    assert pair["after"]["records"] == 0 and pair["after"]["cramers_v"] is None
    assert pair["change"]["cramers_v"] is None and pair["after"]["table"]["counts"] == []


def test_suppressed_records_the_published_table_does_not_hold():
    """A run that removed its suppressed records: they are counted (``removed``), not looked for."""
    kept = ~SUPPRESSED
    s = st.column_statistics("age", pd.Series(AGES), pd.Series(PUBLISHED)[kept].reset_index(drop=True), removed=1)
    assert s["after"]["suppressed"] == 1 and s["after"]["records"] == 11
    out = st.table_statistics(pd.DataFrame({"age": AGES}),
                              pd.DataFrame({"age": PUBLISHED}).loc[kept].reset_index(drop=True), removed=1)
    assert (out["suppressed"], out["records_after"]) == (1, 11)


def test_round_edges_whole_for_whole_numbers():
    # (71 - 22) / 20 = 2.45: a width of 2.5, made whole (3) for whole numbers; the last bin holds 71
    assert st.nice_edges(22, 71, integers=True).tolist() == list(range(21, 73, 3))
    assert st.nice_edges(22, 71).tolist() == [20 + 2.5 * i for i in range(22)]
    assert st.nice_edges(0.1, 0.9).tolist() == pytest.approx(np.arange(0.1, 0.96, 0.05).tolist())
