"""Noise addition (engine/sdc/noise.py) against sdcMicro: IL_correl of the reference README exactly (with R's
own normal draws, tests/engine/_r_random.py), the noise's distribution otherwise (fixed seeds; tolerances
derived from the sampling variance of a variance/covariance estimate, not tuned)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.sdc import METHODS, SdcContext
from anonymizer_app.engine.sdc.noise import add_noise, il_correl
from tests.engine._r_random import RRandom

SDCMICRO = Path(__file__).resolve().parents[1] / "sdcmicro_reference"  # copies of ../shared/datasets/sdcmicro
# two-sided false-alarm rate of each distribution check, Bonferroni-divided over the entries checked
ALPHA = 1e-4


def z_bound(checks: int) -> float:
    return float(norm.ppf(1 - ALPHA / (2 * checks)))


def tarragona() -> pd.DataFrame:
    return pd.read_csv(SDCMICRO / "Tarragona.csv")


def test_il_correl_matches_sdcmicro_with_r_draws():
    # test_il_correl.R:2-17: set.seed(1); addNoise(Tarragona, noise=100) then (same stream) noise=25
    data = tarragona()
    r = RRandom(1)
    first = add_noise(data, list(data.columns), method="additive", noise=100, normals=r.norm_rand)
    x = data.to_numpy(dtype=float)
    assert il_correl(x, x) == 0.0
    assert il_correl(x, first.frame.to_numpy(dtype=float)) == pytest.approx(0.462347410776, abs=1e-11)
    assert first.figures["IL_correl"] == pytest.approx(0.462347410776, abs=1e-11)
    second = add_noise(data, list(data.columns), method="additive", noise=25, normals=r.norm_rand)
    assert second.figures["IL_correl"] == pytest.approx(0.229297771144, abs=1e-11)


def test_additive_noise_has_the_specified_sd():
    rng = np.random.default_rng(11)
    n = 20_000
    data = pd.DataFrame({"a": rng.normal(50, 10, n), "b": rng.exponential(3, n)})
    out = add_noise(data, ["a", "b"], method="additive", noise=40, seed=5)
    noise = out.frame.to_numpy() - data.to_numpy()
    specified = 0.4 * data.std(ddof=1).to_numpy()
    assert out.parameters["noise sd"] == pytest.approx(specified.tolist(), rel=1e-12)
    z = z_bound(4)
    # a sample variance s² of n normals has sd σ² sqrt(2/(n-1)); the mean has sd σ/sqrt(n)
    assert np.all(np.abs(noise.var(axis=0, ddof=1) - specified ** 2) <= z * specified ** 2 * np.sqrt(2 / (n - 1)))
    assert np.all(np.abs(noise.mean(axis=0)) <= z * specified / np.sqrt(n))
    # independent columns: the correlation of the noise within z/sqrt(n) of 0
    assert abs(np.corrcoef(noise, rowvar=False)[0, 1]) <= z / np.sqrt(n)


def test_correlated_noise_has_the_specified_covariance():
    data = tarragona()[["FIXED.ASSETS", "CURRENT.ASSETS", "SALES"]]
    reps = 30  # 30 stacked copies: 25,020 draws, so the covariance check has power
    big = pd.concat([data] * reps, ignore_index=True)
    out = add_noise(big, list(big.columns), method="correlated", noise=50, seed=3)
    sigma = 0.5 * np.cov(big.to_numpy(dtype=float), rowvar=False)
    assert np.array(out.parameters["noise covariance"]) == pytest.approx(sigma, rel=1e-12)
    noise = out.frame.to_numpy(dtype=float) - big.to_numpy(dtype=float)
    n = len(noise)
    observed = np.cov(noise, rowvar=False)
    # Var of a sample covariance of normals: (Σ_ij² + Σ_ii Σ_jj) / (n - 1)
    se = np.sqrt((sigma ** 2 + np.outer(np.diag(sigma), np.diag(sigma))) / (n - 1))
    assert np.all(np.abs(observed - sigma) <= z_bound(6) * se)


def test_correlated2_keeps_means_and_variances():
    rng = np.random.default_rng(2)
    n = 20_000
    data = pd.DataFrame({"a": rng.normal(100, 15, n), "b": rng.normal(-5, 2, n)})
    delta = 0.3
    out = add_noise(data, ["a", "b"], method="correlated2", delta=delta, seed=9)
    x, xm = data.to_numpy(), out.frame.to_numpy()
    d = np.sqrt(1 - delta ** 2)
    assert out.parameters["d"] == pytest.approx(d, rel=1e-15)
    means, sds = x.mean(axis=0), x.std(axis=0, ddof=1)
    # what was added beyond x*d + (1-d)*mean, scaled by delta*sd, is standard normal
    z_draws = (xm - x * d - (1 - d) * means) / (delta * sds)
    z = z_bound(4)
    assert np.all(np.abs(z_draws.mean(axis=0)) <= z / np.sqrt(n))
    assert np.all(np.abs(z_draws.var(axis=0, ddof=1) - 1) <= z * np.sqrt(2 / (n - 1)))


def test_missing_cells_stay_missing_and_text_stays_text():
    frame = pd.DataFrame({"income": ["10", "", "30", "NA", "55.5"], "age": ["1", "2", "3", "4", "5"]})
    out = add_noise(frame, ["income", "age"], noise=150, seed=1)
    assert out.frame["income"].iloc[1] == "" and out.frame["income"].iloc[3] == "NA"
    assert all(isinstance(v, str) and float(v) != float(o) for v, o in
               zip(out.frame["income"].iloc[[0, 2, 4]], ["10", "30", "55.5"]))
    assert out.changed_cells == {"income": 3, "age": 5}
    again = add_noise(frame, ["income", "age"], noise=150, seed=1)
    assert again.frame.equals(out.frame)  # seeded
    assert not add_noise(frame, ["income", "age"], noise=150, seed=2).frame.equals(out.frame)


def test_more_noise_perturbs_more():
    # test_addNoise.R: noise=150 perturbs more than noise=20 (same draws, so exactly 7.5 times as much)
    data = tarragona()
    small = add_noise(data, list(data.columns), noise=20, seed=4).frame.to_numpy() - data.to_numpy()
    large = add_noise(data, list(data.columns), noise=150, seed=4).frame.to_numpy() - data.to_numpy()
    assert np.abs(large).sum() == pytest.approx(7.5 * np.abs(small).sum(), rel=1e-12)


def test_refusals_name_the_cause():
    frame = pd.DataFrame({"a": ["1", "x", "3"], "b": ["", "", ""], "c": ["1", "2", "4"]})
    with pytest.raises(InputError, match=r"'a' is not numeric \(row 2 holds 'x'\)"):
        add_noise(frame, ["a"])
    with pytest.raises(InputError, match="at least 2 numeric variables"):
        add_noise(frame, ["c"], method="correlated")
    with pytest.raises(InputError, match="at least 2 rows without a missing value"):
        add_noise(frame, ["b", "c"], method="correlated")  # sdcMicro: correlated errors on an all-NA column
    with pytest.raises(InputError, match="delta must be between 0 and 1"):
        add_noise(frame, ["c"], method="correlated2", delta=1.0)
    with pytest.raises(InputError, match="method must be one of"):
        add_noise(frame, ["c"], method="ROMM")


def test_registry_entry_reads_the_options():
    method = METHODS["noise"]
    assert method.kind == "perturbation" and method.guarantee == ""
    data = tarragona()[["FIXED.ASSETS", "CURRENT.ASSETS"]]
    context = SdcContext(key_variables=[], numeric_variables=["FIXED.ASSETS", "CURRENT.ASSETS"], seed=8)
    out = method.apply(data, context, {"method": "correlated", "noise": "30"})
    direct = add_noise(data, ["FIXED.ASSETS", "CURRENT.ASSETS"], method="correlated", noise=30, seed=8)
    assert out.frame.equals(direct.frame) and out.parameters["noise"] == 30.0
    with pytest.raises(InputError, match="method must be one of"):
        method.apply(data, context, {"method": "restr"})


def test_reported_risk_and_loss_recomputed():
    data = tarragona()[["SALES", "LABOR.COSTS", "NET.PROFIT"]]
    out = add_noise(data, list(data.columns), noise=10, seed=6)
    x, xm = data.to_numpy(dtype=float), out.frame.to_numpy(dtype=float)
    # dRisk (sdcMicro R/dRisk.R, k = 0.05): every original value within 0.05 sd(published) of the published one
    safe = (np.abs(x - xm) <= 0.05 * xm.std(axis=0, ddof=1)).all(axis=1)
    assert out.figures["dRisk"] == pytest.approx(safe.mean(), abs=1e-15)
    # IL1s (dUtility): sum |x - x'| / (sd(x) sqrt 2)
    assert out.figures["IL1s"] == pytest.approx((np.abs(x - xm) / (x.std(axis=0, ddof=1) * np.sqrt(2))).sum(),
                                                rel=1e-12)
    unchanged = add_noise(data, list(data.columns), noise=0, seed=6)
    assert unchanged.figures["dRisk"] == 1.0 and unchanged.figures["IL1s"] == 0.0
    assert unchanged.figures["IL_correl"] == pytest.approx(0.0, abs=1e-15)


def test_figures_read_through_the_catalogue():
    from anonymizer_app.engine.measure.figure_catalogue import sdc_method_figures

    data = tarragona()[["SALES", "LABOR.COSTS"]]
    rows = sdc_method_figures(add_noise(data, list(data.columns), noise=0, seed=1).figures)
    assert {r["key"]: r["text"] for r in rows} == {"il1s": "0", "il1": "0", "eigen_loss": "0", "drisk": "100%",
                                                   "il_correl": "0.000"}


def test_categorical_text_columns_as_the_reader_gives_them():
    frame = pd.DataFrame({"a": pd.Categorical(["1", "2", "", "4.5"])})
    out = add_noise(frame, ["a"], seed=1).frame["a"]
    assert out.iloc[2] == "" and all(float(v) != float(o) for v, o in zip(out.iloc[[0, 1, 3]], ["1", "2", "4.5"]))
