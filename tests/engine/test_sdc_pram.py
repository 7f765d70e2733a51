"""PRAM (engine/sdc/pram.py) against sdcMicro's pram: the invariant matrix exactly as R/pram.R builds it (a
loop transcription of its formulas), the draws in distribution (Pearson's chi-square of the observed
transitions against the matrix, fixed seeds, threshold the chi-square quantile at a false-alarm rate fixed
in advance), and the reference README's assertions (test_pram.R)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.sdc import METHODS, SdcContext
from anonymizer_app.engine.sdc.pram import invariant_from_diagonal, parse_matrix, pram

SDCMICRO = Path(__file__).resolve().parents[1] / "sdcmicro_reference"  # copies of ../shared/datasets/sdcmicro
FALSE_ALARM = 1e-3  # the chi-square test's level, fixed before looking at any draw


def read_testdata() -> pd.DataFrame:
    return pd.read_csv(SDCMICRO / "testdata.csv", dtype=str, keep_default_na=False)


def r_invariant(p: list[float], pds: list[float], alpha: float) -> np.ndarray:
    """R/pram.R:425-446 transcribed loop by loop (1-based indices kept in the names only)."""
    size = len(p)
    P = [[(1 - pds[i]) / (size - 1) for _ in range(size)] for i in range(size)]
    for i in range(size):
        P[i][i] = pds[i]
    Q = [[0.0] * size for _ in range(size)]
    for k in range(size):
        s = sum(p[m] * P[m][k] for m in range(size))
        for j in range(size):
            Q[k][j] = P[j][k] * p[j] / s
    R = [[sum(P[i][m] * Q[m][j] for m in range(size)) for j in range(size)] for i in range(size)]
    return np.array([[alpha * R[i][j] + (1 - alpha) * (i == j) for j in range(size)] for i in range(size)])


def chi_square(original: pd.Series, published: pd.Series, categories: list[str], matrix: np.ndarray):
    """Pearson's statistic of the transition counts against n_i * matrix[i]; df = free cells of the rows."""
    statistic, df = 0.0, 0
    for i, c in enumerate(categories):
        rows = published[original == c]
        if len(rows) == 0:
            continue
        counts = rows.value_counts().reindex(categories, fill_value=0).to_numpy()
        expected = len(rows) * matrix[i]
        positive = expected > 0
        assert counts[~positive].sum() == 0  # nothing drawn where the matrix says 0
        statistic += float((((counts - expected) ** 2)[positive] / expected[positive]).sum())
        df += int(positive.sum()) - 1
    return statistic, df


def test_invariant_matrix_is_sdcmicros():
    counts = np.array([120.0, 3.0, 0.0, 877.0, 40.0])
    pds = [0.83, 0.97, 0.8, 0.91, 0.88]
    for alpha in (0.5, 0.1, 1.0):
        ours = invariant_from_diagonal(counts, np.array(pds), alpha)
        assert ours == pytest.approx(r_invariant(list(counts / counts.sum()), pds, alpha), abs=1e-15)
        assert ours.sum(axis=1) == pytest.approx(np.ones(5), abs=1e-15)
        # invariance: p' R = p'
        assert counts @ ours == pytest.approx(counts, abs=1e-9)
    # R divides p by the sum of the factor codes instead of the count: a constant that cancels
    assert invariant_from_diagonal(counts * 7.3, np.array(pds), 0.5) == pytest.approx(
        invariant_from_diagonal(counts, np.array(pds), 0.5), abs=1e-15)


def test_reported_matrix_is_the_invariant_one_for_the_drawn_diagonal():
    data = read_testdata()
    out = pram(data, ["roof"], pd_min=0.8, alpha=0.5, seed=42)
    report = out.details["pram"]["roof"]
    pds = np.random.default_rng(42).uniform(0.8, 1.0, len(report["categories"]))  # the first draws
    counts = np.array(report["frequencies_before"], dtype=float)
    assert np.array(report["matrices"][0]["matrix"]) == pytest.approx(
        r_invariant(list(counts / counts.sum()), list(pds), 0.5), abs=1e-15)
    assert report["frequencies_expected"] == pytest.approx(report["frequencies_before"], abs=1e-8)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_draws_follow_the_matrix(seed):
    data = read_testdata()
    out = pram(data, ["roof", "walls"], seed=seed)
    for variable in ("roof", "walls"):
        report = out.details["pram"][variable]
        matrix = np.array(report["matrices"][0]["matrix"])
        statistic, df = chi_square(data[variable], out.frame[variable], report["categories"], matrix)
        assert statistic <= chi2.ppf(1 - FALSE_ALARM, df), (variable, statistic, df)
        assert report["changed"] == int((data[variable] != out.frame[variable]).sum())
        assert out.changed_cells[variable] == report["changed"]
        assert report["changed_percent"] == round(100 * report["changed"] / len(data), 2)
        assert report["changed"] > 0
    assert out.figures["changed cells"] == sum(out.changed_cells.values())
    assert out.figures["changed share"] == sum(out.changed_cells.values()) / (2 * len(data))


def test_strata_each_with_its_own_matrix():
    data = read_testdata()
    out = pram(data, ["walls"], strata=["urbrur", "sex"], seed=5)
    report = out.details["pram"]["walls"]
    assert len(report["matrices"]) == data.groupby(["urbrur", "sex"]).ngroups == 4
    categories = report["categories"]
    statistic, df = 0.0, 0
    for entry in report["matrices"]:
        inside = (data["urbrur"] == entry["stratum"]["urbrur"]) & (data["sex"] == entry["stratum"]["sex"])
        matrix = np.array(entry["matrix"])
        counts = data.loc[inside, "walls"].value_counts().reindex(categories, fill_value=0).to_numpy()
        assert counts @ matrix == pytest.approx(counts, abs=1e-8)  # invariant within the stratum
        s, d = chi_square(data.loc[inside, "walls"], out.frame.loc[inside, "walls"], categories, matrix)
        statistic, df = statistic + s, df + d
        # nobody leaves a stratum: the strata columns are untouched
    assert out.frame[["urbrur", "sex"]].equals(data[["urbrur", "sex"]])
    assert statistic <= chi2.ppf(1 - FALSE_ALARM, df)
    again = pram(data, ["walls"], strata=["urbrur", "sex"], seed=5)
    assert again.frame.equals(out.frame)  # test_pram.R:33-42: the same seed, the same result


def test_identity_matrix_or_pd_1_changes_nothing():
    data = read_testdata()
    levels = sorted(data["roof"].unique(), key=float)
    identity = {a: {b: 1.0 if a == b else 0.0 for b in levels} for a in levels}
    assert pram(data, ["roof"], matrices={"roof": identity}, seed=1).frame.equals(data)  # test_pram.R:64-75
    assert pram(data, ["roof"], pd_min=1.0, seed=1).frame.equals(data)
    assert pram(data, ["roof"], alpha=0.0, seed=1).frame.equals(data)
    # test_pram.R:77-81: roof with the identity, walls with the invariant matrix
    both = pram(data, ["roof", "walls"], matrices={"roof": identity}, alpha=0.5, seed=1)
    assert both.frame["roof"].equals(data["roof"]) and not both.frame["walls"].equals(data["walls"])
    assert both.details["pram"]["roof"]["matrix_source"] == "user"


def test_parameters_change_the_result():
    # test_pram.R:46-61: default vs alpha=0.1 vs pd=0.1 on the fixture, stratified by Var5
    data = pd.read_csv(SDCMICRO / "seed3_pram_100.csv", dtype=str)
    a = pram(data, ["Var3"], strata=["Var5"], seed=123).frame["Var3"]
    b = pram(data, ["Var3"], strata=["Var5"], alpha=0.1, seed=123).frame["Var3"]
    c = pram(data, ["Var3"], strata=["Var5"], pd_min=0.1, seed=123).frame["Var3"]
    assert not a.equals(b) and not a.equals(c)


def test_user_matrix_is_used_and_reported():
    data = read_testdata()
    matrix = {"1": {"1": 0.5, "2": 0.5}, "2": {"1": 0.25, "2": 0.75}}
    out = pram(data, ["urbrur"], matrices={"urbrur": matrix}, seed=9)
    report = out.details["pram"]["urbrur"]
    assert report["matrices"][0]["matrix"] == [[0.5, 0.5], [0.25, 0.75]]
    statistic, df = chi_square(data["urbrur"], out.frame["urbrur"], ["1", "2"], np.array([[.5, .5], [.25, .75]]))
    assert df == 2 and statistic <= chi2.ppf(1 - FALSE_ALARM, df)
    before = np.array(report["frequencies_before"])
    assert report["frequencies_expected"] == pytest.approx((before @ np.array([[.5, .5], [.25, .75]])).tolist())


def test_missing_values_are_kept_and_not_counted():
    frame = pd.DataFrame({"x": ["a", "", "b", "a", "NA", "b", "c"] * 50})
    out = pram(frame, ["x"], pd_min=0.0, alpha=1.0, seed=3)
    missing = frame["x"].isin(["", "NA"])
    assert out.frame["x"][missing].equals(frame["x"][missing])
    assert set(out.frame["x"][~missing]) <= {"a", "b", "c"}
    report = out.details["pram"]["x"]
    assert report["missing"] == 100 and report["frequencies_before"] == [100, 100, 50]


@pytest.mark.parametrize("matrix, message", [
    ({"1": {"1": 1.0}}, r"must be square over the column's values \('1', '2'\): no row for '2'"),
    ({"1": {"1": 0.5, "2": 0.4}, "2": {"2": 1.0}}, r"row '1': the probabilities sum to 0.9, not 1"),
    ({"1": {"1": 1.5, "2": -0.5}, "2": {"2": 1.0}}, r"row '1', column '1': 1.5 is not a probability"),
    ({"1": {"1": 1.0, "3": 0.0}, "2": {"2": 1.0}}, r"row '1': '3' is not a value of the column"),
    ({"1": {"1": "x"}, "2": {"2": 1.0}}, r"row '1', column '1': 'x' is not a number"),
    ({"1": {"1": 1.0}, "2": {"2": 1.0}, "9": {"9": 1.0}}, r"rows for values the column does not hold: '9'"),
])
def test_user_matrix_refusals_name_the_row(matrix, message):
    with pytest.raises(InputError, match=message):
        parse_matrix(matrix, "urbrur", ["1", "2"])


def test_refused_options():
    data = read_testdata()
    with pytest.raises(InputError, match="cannot be both changed and a strata variable"):
        pram(data, ["roof"], strata=["roof"])
    with pytest.raises(InputError, match="pd .* must be between 0 and 1"):
        pram(data, ["roof"], pd_min=1.5)
    with pytest.raises(InputError, match="no column named 'nope'"):
        pram(data, ["nope"])


def test_registry_entry_reads_the_options():
    method = METHODS["pram"]
    assert method.kind == "perturbation" and method.guarantee == ""
    data = read_testdata()
    context = SdcContext(key_variables=["roof"], seed=4)
    out = method.apply(data, context, {"strata": "urbrur", "alpha": "0.3",
                                       "matrices": '{"walls": {"2": {"2": 1}, "3": {"3": 1}, "9": {"9": 1}}}', "variables": "roof, walls"})
    direct = pram(data, ["roof", "walls"], strata=["urbrur"], alpha=0.3, seed=4,
                  matrices={"walls": {c: {c: 1} for c in ["2", "3", "9"]}})
    assert out.frame.equals(direct.frame)
    with pytest.raises(InputError, match="not JSON"):
        method.apply(data, context, {"matrices": "{"})


def test_figures_read_through_the_catalogue():
    from anonymizer_app.engine.measure.figure_catalogue import sdc_method_figures

    frame = pd.DataFrame({"x": ["a", "b"] * 100})
    swap = {"a": {"a": 0.0, "b": 1.0}, "b": {"a": 1.0, "b": 0.0}}  # every value swapped
    rows = sdc_method_figures(pram(frame, ["x"], matrices={"x": swap}).figures)
    assert [(r["key"], r["text"]) for r in rows] == [("pram_changed_cells", "200"), ("pram_changed_share", "100%")]


def test_too_many_categories_are_refused():
    frame = pd.DataFrame({"id": [str(i) for i in range(2_001)]})
    with pytest.raises(InputError, match="'id' has 2,001 distinct values, more than 2,000"):
        pram(frame, ["id"])


def test_categorical_columns_as_the_reader_gives_them():
    frame = pd.DataFrame({"b": pd.Categorical(["x", "y", "x", ""] * 25)})
    out = pram(frame, ["b"], pd_min=0.0, alpha=1.0, seed=2).frame["b"]
    assert isinstance(out.dtype, pd.CategoricalDtype)
    assert (out[frame["b"] == ""] == "").all() and set(out[frame["b"] != ""]) <= {"x", "y"}
