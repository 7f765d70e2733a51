"""Risk with sampling weights as sdcMicro computes it (issue 31): every expected value of the sdcMicro reference
README for freqCalc, indivRisk, measure_risk/calcRisks, suda2 and dRisk, exact; and independent brute-force checks
on small random tables: fk/Fk with a missing key value matching any value (every pair of records compared), SUDA2's
minimal sample uniques (every subset of key variables enumerated), household risk (a product per household)."""

from __future__ import annotations

import math
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import InputError
from anonymizer_app.engine.measure.risk.sdc_frequencies import key_codes, sample_frequencies
from anonymizer_app.engine.measure.risk.sdc_individual import (
    global_risk,
    household_risk,
    individual_risk,
    risk_threshold,
)
from anonymizer_app.engine.measure.risk.sdc_numeric import d_risk, interval_disclosure
from anonymizer_app.engine.measure.risk.sdc_risk import numeric_risk, sdc_risk_report
from anonymizer_app.engine.measure.risk.sdc_weights import parse_weights
from anonymizer_app.engine.measure.risk.suda2 import dis_constants, score_weights, suda2, suda_values

REFERENCE = Path(__file__).resolve().parents[1] / "sdcmicro_reference"
NA = None

# tests/testthat/test_freqCalc.R:4-7 and test_indivRisk.R:5-8 (the README's shared toy input)
A = [2, 3, 2, 2, 3, 3, 1, 2]
B = [3, 3, 3, 3, 3, 3, 4, 3]
C = [1, 3, 1, 2, 1, 1, 1, 1]
W = np.array([18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51])
C_NA = [1, 3, NA, 2, 1, 1, NA, 1]


def freq(a, b, c, weights=None, alpha=1.0):
    frame = pd.DataFrame({"A": a, "B": b, "C": c})
    return sample_frequencies(key_codes(frame, ["A", "B", "C"]), weights, alpha)


# ---- freqCalc --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("a, b, c, fk, Fk, n1, n2", [
    (A, B, C, [3, 1, 3, 1, 2, 2, 1, 3], [108.0, 45.5, 108.0, 17.0, 100.0, 100.0, 123.5, 108.0], 3, 2),
    (A, B, C_NA, [3, 1, 4, 2, 2, 2, 1, 3], [108.0, 45.5, 125.0, 56.0, 100.0, 100.0, 123.5, 108.0], 2, 3),
    ([2, 3, NA, 2, 3, 3, 1, 2], [3, 3, NA, 3, 3, 3, 4, 3], [NA] * 8, [4, 4, 8, 4, 4, 4, 2, 4],
     [125.0, 184.5, 394.0, 125.0, 184.5, 184.5, 162.5, 125.0], 0, 1),
])
def test_freqcalc(a, b, c, fk, Fk, n1, n2):  # test_freqCalc.R:8-12, 41-45, 73-77 and unweighted 24-28, 56-60, 84-88
    weighted = freq(a, b, c, W)
    assert weighted.fk.tolist() == fk and weighted.Fk.tolist() == Fk
    assert (weighted.n1, weighted.n2) == (n1, n2)
    plain = freq(a, b, c)
    assert plain.fk.tolist() == fk and plain.Fk.tolist() == fk and (plain.n1, plain.n2) == (n1, n2)


def test_freqcalc_single_key_with_missing():  # test_freqCalc.R:95-98, 112-116
    f = sample_frequencies(key_codes(pd.DataFrame({"A": [2, 3, NA, 2, 1, NA, 1, 2]}), ["A"]))
    assert f.fk.tolist() == f.Fk.tolist() == [5, 3, 8, 5, 4, 8, 4, 5] and (f.n1, f.n2) == (0, 0)


def test_freqcalc_three_rows_eight_keys():  # test_freqCalc.R:124-127, 141-145 (R fills column-major)
    values = np.array([2, 3, NA, 2, 3, 3, 1, NA, 3, 3, NA, 3, 3, 2, 2, 3, NA, NA, 1, 2, NA, NA, 4, 4],
                      dtype=object).reshape(8, 3).T
    frame = pd.DataFrame(values, columns=[f"V{i}" for i in range(8)])
    f = sample_frequencies(key_codes(frame, list(frame.columns)))
    assert f.fk.tolist() == f.Fk.tolist() == [1, 2, 2] and (f.n1, f.n2) == (1, 2)


# ---- indivRisk -------------------------------------------------------------------------------------------
WEIGHTED_RK = {
    ("approx", 1): [0.01369863, 0.08579129, 0.01369863, 0.17707583, 0.01877883, 0.01877883, 0.03931625, 0.01369863],
    ("approx", 2): [0.02739726, 0.17158258, 0.02739726, 0.35415167, 0.03755767, 0.03755767, 0.07863251, 0.02739726],
    ("exact", 1): [0.01355297, 0.08579129, 0.01355297, 0.17707583, 0.01877883, 0.01877883, 0.03931625, 0.01355297],
    ("exact", 2): [0.02710594, 0.17158258, 0.02710594, 0.35415167, 0.03755767, 0.03755767, 0.07863251, 0.02710594],
}


@pytest.mark.parametrize("method, qual", list(WEIGHTED_RK))
def test_indivrisk_weighted(method, qual):  # test_indivRisk.R:13-14, 23-24, 34-35, 44-45 (8 digits as printed)
    f = freq(A, B, C, W)
    assert np.round(individual_risk(f.fk, f.Fk, method, qual), 8).tolist() == WEIGHTED_RK[(method, qual)]
    # survey=FALSE: 1/fk, qual ignored (test_indivRisk.R:18-19, 28-29, 39-40, 49-50)
    assert np.round(individual_risk(f.fk, f.Fk, method, qual, survey=False), 5).tolist() == \
        [0.33333, 1, 0.33333, 1, 0.5, 0.5, 1, 0.33333]


@pytest.mark.parametrize("method", ["approx", "exact"])
def test_indivrisk_unweighted(method):  # test_indivRisk.R:66-103
    f = freq(A, B, C)
    third = [0.33333, 1, 0.33333, 1, 0.5, 0.5, 1, 0.33333]
    for survey in (True, False):
        assert np.round(individual_risk(f.fk, f.Fk, method, 1, survey), 5).tolist() == third
    assert np.round(individual_risk(f.fk, f.Fk, method, 2, survey=False), 5).tolist() == third
    assert np.round(individual_risk(f.fk, f.Fk, method, 2), 5).tolist() == [0.66667, 2, 0.66667, 2, 1, 1, 2, 0.66667]


def test_indivrisk_with_missing():  # test_indivRisk.R:109-207
    a = [2, 3, 2, 2, 3, 3, 1, NA]
    f = freq(a, B, C_NA, W)
    assert f.fk.tolist() == [3, 1, 4, 2, 3, 3, 1, 5]  # the README's derived frequencies
    assert f.Fk.tolist() == [108, 45.5, 125, 56, 151, 151, 123.5, 208]
    assert np.round(individual_risk(f.fk, f.Fk, "approx", 1), 9).tolist() == \
        [0.013698630, 0.085791288, 0.010554090, 0.032466112, 0.009836066, 0.009836066, 0.039316254, 0.005973716]
    assert np.round(individual_risk(f.fk, f.Fk, "approx", 2), 8).tolist() == \
        [0.02739726, 0.17158258, 0.02110818, 0.06493222, 0.01967213, 0.01967213, 0.07863251, 0.01194743]
    assert np.round(individual_risk(f.fk, f.Fk, "exact", 1), 9).tolist() == \
        [0.013552968, 0.085791288, 0.010504889, 0.032466112, 0.009756889, 0.009756889, 0.039316254, 0.005962551]
    fifth = [0.33333, 1, 0.25, 0.5, 0.33333, 0.33333, 1, 0.2]
    for qual in (1, 2):
        assert np.round(individual_risk(f.fk, f.Fk, "approx", qual, survey=False), 5).tolist() == fifth
    plain = freq(a, B, C_NA)
    assert np.round(individual_risk(plain.fk, plain.Fk, "exact", 1), 5).tolist() == fifth
    assert np.round(individual_risk(plain.fk, plain.Fk, "approx", 2), 5).tolist() == \
        [0.66667, 2, 0.5, 1, 0.66667, 0.66667, 2, 0.4]


# ---- measure_risk / calcRisks ----------------------------------------------------------------------------
def test_calcrisks_global_risk():  # test_calcRisks.R:15-25 with fixtures/seed3_runif_10x6_b.csv, no weights
    frame = pd.read_csv(REFERENCE / "seed3_runif_10x6_b.csv", dtype=str)
    keys = ["Var4", "Var5", "Var6"]
    f = sample_frequencies(key_codes(frame, keys))
    risk = individual_risk(f.fk, f.Fk, survey=False)
    assert risk.tolist() == [0.5, 1, 0.5, 1, 1, 0.5, 1, 0.5, 1, 1]
    assert f.fk.tolist() == f.Fk.tolist() == [2, 1, 2, 1, 1, 2, 1, 2, 1, 1]
    g = global_risk(risk)
    assert (g["global_risk"], g["expected_reidentifications"], g["global_risk_pct"]) == (0.8, 8, 80)
    assert risk_threshold(risk, 0.01) == 0  # threshold = 0, max_risk = 0.01
    report = sdc_risk_report(frame, keys)
    assert (report["global_risk"], report["expected_reidentifications"], report["risk_threshold"]) == (0.8, 8, 0)
    numeric = ["Var1", "Var2", "Var3"]
    assert numeric_risk(frame, frame, numeric)["drisk"] == 1  # @risk$numeric = 1 (test_calcRisks.R:25)


def test_risk_threshold_none_when_safe():
    # the mu-Argus rule: below the maximum already -> sdcMicro's NA
    assert risk_threshold(np.full(100, 0.001), 0.01) is None
    # 90 records of 0.001 and 10 of 0.5: ER = 5.09 > 1; protecting the 10 leaves 0.09 + 0.001·10 < 1
    assert risk_threshold(np.r_[np.full(90, 0.001), np.full(10, 0.5)], 0.01) == 0.001


# ---- suda2 -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def testdata2():
    return pd.read_csv(REFERENCE / "testdata2.csv", dtype=str)


KEYS7 = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def test_suda2_testdata2(testdata2):  # test_suda2.R:2-4, 7-14, 17-24 (commented in sdcMicro)
    assert suda2(testdata2, ["urbrur", "roof", "walls", "water", "sex"]).score[0] == 2
    assert round(suda2(testdata2, KEYS7, original_scores=False).score[0], 2) == 2.73
    assert suda2(testdata2, KEYS7).score[0] == 180


@pytest.mark.parametrize("order, expected", [("abc", [50, 37.5, 37.5]), ("acb", [50, 37.5, 37.5]),
                                             ("cab", [37.5, 50, 37.5]), ("cba", [37.5, 37.5, 50])])
def test_suda2_attribute_contributions(order, expected):  # test_suda2.R:27-64
    dat = pd.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]})[list(order)]
    result = suda2(dat, list(order))
    assert list(result.attribute_contributions.values()) == expected
    assert result.score.tolist() == [2, 4, 2]


def test_suda2_book_example():  # test_suda2.R:67-73
    tab = pd.DataFrame({"age": ["20s"] * 7 + ["60s"], "gender": ["male"] * 4 + ["female"] * 3 + ["male"],
                        "income": ["50k+"] * 2 + ["50k-"] * 6,
                        "education": ["highschool"] * 4 + ["university", "highschool", "middleschool", "university"]})
    assert suda2(tab, list(tab.columns)).score.tolist() == [0, 0, 0, 0, 4, 2, 6, 8]


def test_suda2_seed3_fixture():  # test_suda2.R:150-153
    frame = pd.read_csv(REFERENCE / "seed3_runif_10x6_b.csv", dtype=str)
    result = suda2(frame, ["Var4", "Var5", "Var6"])
    assert result.score.tolist() == [0, 1, 0, 2, 2, 0, 4, 0, 3, 2]
    assert result.contribution[:, 0].tolist() == [0, 0, 0, 0, 0.5, 0, 0.5, 0, 2 / 3, 0.5]


def test_dis_suda_formula(testdata2):
    """DIS-SUDA recomputed from Suda2.h's formula in plain Python (double precision; the engine keeps sdcMicro's
    single-precision Dis, hence the tolerance)."""
    result = suda2(testdata2, KEYS7)
    values, _ = suda_values(testdata2, KEYS7)
    patterns = pd.Series([tuple(r) for r in values.tolist()]).value_counts()
    n_p = 2 * int((patterns == 2).sum())
    buckets = []
    for row in values.tolist():  # Suda2.h's 16-bit hash: rotate left by one, add the value
        h = 0
        for v in row:
            h = (((h << 1) & 0xFFFF) + v + (1 if h & 0x8000 else 0)) % 65536
        buckets.append(h)
    per_bucket = pd.Series(buckets).value_counts()
    # sdcMicro counts a unique pattern in nU only when it is alone in its bucket (Suda2.h:1119-1185)
    n_u = sum(1 for b in buckets if per_bucket[b] == 1)
    assert int((patterns == 1).sum()) == 93 and n_u == 59
    assert (result.unique_total, result.duplicate_pairs) == (n_u, n_p) == dis_constants(values)
    dis = n_u * 0.01 / (n_u * 0.01 + n_p * 0.99) if n_u + n_p else math.nan
    q = 1 + (8 - 7) / 20
    adjust = sum(s ** -q for s in result.score if s > 0)
    for s, d in zip(result.score, result.dis_score):
        expected = 0.0 if s == 0 else 1 / (1 + (n_u / dis - n_u) / (s ** q * adjust))
        assert d == pytest.approx(expected, rel=1e-5)


def test_dis_counts_only_records_alone_in_their_hash_bucket():
    # (0, 2) and (1, 0) hash to the same 16-bit bucket (0·2+2 = 2, 1·2+0 = 2): two uniques, but nU counts neither
    values = np.array([[0, 2], [1, 0], [5, 5], [5, 5]])
    assert dis_constants(values) == (0, 2)


def brute_suda(rows: list[tuple], m_total: int) -> tuple[list[float], list[list[int]]]:
    """Every subset of key variables of every record, uniqueness counted pair by pair; MSU sizes per record."""
    n, m = len(rows), len(rows[0])
    msus: list[list[int]] = [[] for _ in range(n)]
    weights = [math.factorial(m_total - s) for s in range(1, m + 1)]
    for i in range(n):
        unique_sets = []
        for size in range(1, m + 1):
            for subset in combinations(range(m), size):
                if any(rows[i][v] is None for v in subset):
                    continue
                if all(any(rows[j][v] != rows[i][v] for v in subset) for j in range(n) if j != i):
                    unique_sets.append(set(subset))
        for s in unique_sets:
            if not any(t < s for t in unique_sets):
                msus[i].append(len(s))
    return [sum(weights[s - 1] for s in sizes) for sizes in msus], msus


@pytest.mark.parametrize("seed", range(6))
def test_suda2_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(5, 40)), int(rng.integers(3, 6))
    data = rng.integers(0, 3, size=(n, m)).astype(object)
    data[rng.random((n, m)) < 0.1] = None  # a missing value is never part of an MSU
    frame = pd.DataFrame(data, columns=[f"k{j}" for j in range(m)])
    result = suda2(frame, list(frame.columns))
    scores, msus = brute_suda([tuple(r) for r in data.tolist()], m)
    assert result.score.tolist() == scores
    assert [sorted(int(s) for s in range(1, m + 1) for _ in range(int(c[s - 1]))) for c in result.msu_counts] == \
        [sorted(x) for x in msus]


def test_suda2_max_size_and_weights():
    assert score_weights(4).tolist() == [6, 2, 1, 1]
    assert score_weights(3, original_scores=False).tolist() == pytest.approx([1, 1 / 3, 0])
    frame = pd.DataFrame({"a": ["1", "2", "2"], "b": ["1", "1", "2"], "c": ["1", "1", "1"]})
    assert suda2(frame, ["a", "b", "c"], max_size=1).score.tolist() == [2, 0, 2]
    assert suda2(frame, ["a", "b", "c"]).score.tolist() == [2, 1, 2]  # record 2: {a, b} adds (3-2)! = 1
    with pytest.raises(InputError, match="largest MSU size must lie between 1 and 3"):
        suda2(frame, ["a", "b", "c"], max_size=4)


# ---- fk/Fk against every pair of records -----------------------------------------------------------------
def brute_frequencies(rows: list[tuple], w: list[float], alpha: float) -> tuple[list[float], list[float]]:
    n = len(rows)
    fk, Fk = [], []
    for i in range(n):
        a, b = 0.0, 0.0
        mi = tuple(v is None for v in rows[i])
        if all(mi):
            fk.append(float(n))
            Fk.append(float(sum(w)))
            continue
        for j in range(n):
            mj = tuple(v is None for v in rows[j])
            if any(x is not None and y is not None and x != y for x, y in zip(rows[i], rows[j])):
                continue
            factor = 1.0 if mi == mj else (alpha if not any(mi) else (1.0 if not any(mj) else alpha))
            a += factor
            b += factor * w[j]
        fk.append(a)
        Fk.append(b)
    return fk, Fk


@pytest.mark.parametrize("seed", range(8))
def test_frequencies_against_every_pair(seed):
    rng = np.random.default_rng(100 + seed)
    n, m = int(rng.integers(1, 60)), int(rng.integers(1, 5))
    data = rng.integers(0, 3, size=(n, m)).astype(object)
    data[rng.random((n, m)) < 0.2] = None
    w = rng.uniform(1, 50, n).round(2).tolist()
    alpha = [1.0, 0.5, 0.0][seed % 3]
    frame = pd.DataFrame(data, columns=[f"k{j}" for j in range(m)])
    f = sample_frequencies(key_codes(frame, list(frame.columns)), np.array(w), alpha)
    fk, Fk = brute_frequencies([tuple(r) for r in data.tolist()], w, alpha)
    assert f.fk.tolist() == pytest.approx(fk, abs=1e-9) and f.Fk.tolist() == pytest.approx(Fk, rel=1e-12)


# ---- household risk, dRisk, weights -----------------------------------------------------------------------
def test_household_risk_is_the_product_over_members():
    rng = np.random.default_rng(7)
    risk = rng.uniform(0, 0.6, 40)
    risk[3] = 1.0
    hh = rng.integers(0, 9, 40).astype(str)
    got = household_risk(risk, hh)
    for i in range(40):
        members = [risk[j] for j in range(40) if hh[j] == hh[i]]
        assert got[i] == pytest.approx(1 - math.prod(1 - r for r in members), abs=1e-12)


def test_drisk():
    x = np.array([[1.0, 10], [2, 20], [3, 30], [4, 40]])
    assert d_risk(x, x) == 1  # unmodified: every record at risk
    xm = x.copy()
    xm[0, 0] = 1.5  # sd(xm[:, 0]) = 1.1902…, 0.05·sd = 0.0595 < 0.5: record 1 leaves the interval
    xm[1, 1] = 20.5  # sd(xm[:, 1]) ≈ 12.8; 0.05·sd ≈ 0.64 > 0.5: record 2 stays within
    assert interval_disclosure(x, xm).tolist() == [False, True, True, True]
    assert d_risk(x, xm) == 0.75
    assert d_risk(x, xm, k=0) == 0.5  # k = 0: only unchanged values are at risk
    x_na = x.copy()
    x_na[0, 0] = np.nan  # a missing value is skipped (sdcMicro's na.rm)
    assert interval_disclosure(x_na, xm).tolist() == [True, True, True, True]


def test_weights_parsed_or_refused_by_row():
    assert parse_weights(pd.Series(["1.5", " 2", "10"]), "w").tolist() == [1.5, 2, 10]
    with pytest.raises(InputError, match=r"column 'w' cannot be the sampling weight: '-1' \(row 3\) is not a number"):
        parse_weights(pd.Series(["1.5", "2", "-1", "x"]), "w")
    with pytest.raises(InputError, match=r"an empty cell \(row 2\)"):
        parse_weights(pd.Series(["1", "", "2"]), "w")


def test_report_with_weights_and_households():
    frame = pd.DataFrame({"A": A, "B": B, "C": C, "w": W.astype(str), "hh": ["1", "1", "2", "2", "3", "3", "4", "4"]})
    report = sdc_risk_report(frame, ["A", "B", "C"], weight="w", household="hh")
    expected = np.array(WEIGHTED_RK[("approx", 1)])
    assert report["global_risk"] == pytest.approx(expected.mean(), abs=1e-8)
    assert (report["fk_uniques"], report["fk_two"]) == (3, 2)
    assert report["above_levels"][1] == {"level": 0.05, "records": 2}
    assert report["highest_risk_records"][0]["row"] == 4
    f = freq(A, B, C, W)
    risk = individual_risk(f.fk, f.Fk)
    hh_risk = [1 - (1 - risk[2 * h]) * (1 - risk[2 * h + 1]) for h in range(4)]
    assert report["household_risk"]["expected_reidentifications"] == pytest.approx(2 * sum(hh_risk), abs=1e-12)
    assert report["household_risk"]["households"] == 4
    assert report["suda2"]["records_with_msu"] == 3  # the 3 sample uniques (rows 2, 4, 7)


def test_exact_risk_against_the_plain_series():
    """The exact method (vectorized per fk) against indivRisk's loops written out record by record."""
    rng = np.random.default_rng(11)
    fk = rng.integers(1, 12, 60).astype(float)
    Fk = fk * rng.uniform(1.5, 40, 60)
    got = individual_risk(fk, Fk, "exact")
    for f, F, r in zip(fk, Fk, got):
        p = f / F
        if f == 1:
            want = p / (1 - p) * math.log(1 / p)
        elif f == 2:
            want = p / (1 - p) - (p / (1 - p)) ** 2 * math.log(1 / p)
        else:
            a = (p ** (1 - f) - 1) / (f - 1)
            bb = 0.0
            for m in range(int(f) - 2):
                b = 1.0
                for i in range(m + 1):
                    b *= (f - 1 - i) ** 2 / ((i + 1) * (f - 2 - i)) * (p ** (i + 2 - f) - 1) / (p ** (i + 1 - f) - 1)
                bb += (-1) ** (m + 1) * b
            want = (p / (1 - p)) ** f * (a * (1 + bb) + (-1) ** int(f) * math.log(p))
        assert r == pytest.approx(want, rel=1e-9)


def test_level_contributions_as_sdcmicro_sums_them():
    """attribute_level_contributions (suda2.R:140-159): per variable and value, 100 · Σ over its records of
    contributionPercent · score / Σ over all records of the same; recomputed here from the per-record figures."""
    frame = pd.read_csv(REFERENCE / "seed3_runif_10x6_b.csv", dtype=str)
    keys = ["Var4", "Var5", "Var6"]
    result = suda2(frame, keys)
    got = {(c["variable"], c["value"]): c["contribution"] for c in result.level_contributions}
    for j, k in enumerate(keys):
        weighted = result.contribution[:, j] * result.score
        for value in frame[k].unique():
            want = 100 * weighted[(frame[k] == value).to_numpy()].sum() / weighted.sum()
            assert got[(k, value)] == pytest.approx(want, abs=1e-12)
    report = sdc_risk_report(frame, keys)
    shown = report["suda2"]["level_contributions"]
    assert [c["contribution"] for c in shown] == sorted(got.values(), reverse=True)[:len(shown)]
