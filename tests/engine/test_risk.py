"""Risk analysis (engine/risk): figures on small tables computed by hand here, and the population
estimators against values computed independently from the published formulas (plain loops, exact
binomials, a different solver and start) on a toy class-size frequency table."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from anonymizer_app.engine import InputError
from anonymizer_app.engine.measure.risk import (
    REGIONS,
    analyze,
    dankar,
    pitman,
    population_model,
    population_uniqueness,
    snb,
    snb_classes,
    zayatz,
)

# classes on (a, b): (x,1) x3, (x,2) x1, (y,1) x1, (y,2) x2, (z,3) x1 -> sizes 3, 1, 1, 2, 1
TOY = pd.DataFrame({"a": list("xxxxyyyz"), "b": ["1", "1", "1", "2", "1", "2", "2", "3"], "s": list("pqrstuvw")})


def test_class_statistics_and_sample_risks():
    r = analyze(TOY, ["a", "b"])
    assert r["records"] == 8
    assert r["equivalence_classes"] == 5
    assert (r["min_class_size"], r["max_class_size"]) == (1, 3)
    assert r["mean_class_size"] == 8 / 5
    assert r["sample_uniques"] == 3 and r["sample_uniques_share"] == 3 / 8
    assert r["prosecutor_risk_highest"] == 1.0
    assert r["prosecutor_risk_average"] == 5 / 8
    assert r["marketer_risk"] == 5 / 8
    assert r["records_at_risk"] == 8  # 1/3 > 0.2: every record
    assert r["class_size_histogram"] == {"1": 3, "2": 1, "3": 1}
    assert r["population"] is None and "journalist_risk_highest" not in r
    bands = {b["label"]: b["records"] for b in r["risk_bands"]}
    assert bands["50%–100%"] == 3 and bands["33.3%–50%"] == 2 and bands["25%–33.3%"] == 3
    assert sum(bands.values()) == 8


def test_threshold_counts_records_strictly_above():
    r = analyze(TOY, ["a", "b"], threshold=0.4)
    assert r["records_at_risk"] == 5 and r["records_at_risk_share"] == 5 / 8  # risks 1 (3) and 1/2 (2)
    assert analyze(TOY, ["a", "b"], threshold=0.5)["records_at_risk"] == 3


def test_distinction_separation_and_order():
    rows = analyze(TOY, ["a", "b"], combinations=2)["attributes"]["rows"]
    assert [r["columns"] for r in rows] == [["a", "b"], ["a"], ["b"]]
    ab, a, b = rows
    assert (ab["distinct"], ab["distinction"], ab["separation"], ab["uniques"]) == (5, 5 / 8, 1 - 8 / 56, 3)
    # a: x 4, y 3, z 1 -> pairs alike 4*3 + 3*2 = 18 of 8*7
    assert (a["distinct"], a["distinction"], a["separation"], a["uniques"]) == (3, 3 / 8, 1 - 18 / 56, 1)
    assert (b["distinct"], b["separation"]) == (3, 1 - 18 / 56)


def test_identifier_suggestions_are_minimal():
    frame = TOY.assign(id=[str(i) for i in range(8)])
    att = analyze(frame, ["a", "b", "id"], combinations=3, identifier_distinction=0.6)["attributes"]
    assert [r["columns"] for r in att["identifiers"]] == [["id"], ["a", "b"]]  # no superset of either
    assert att["evaluated"] == 7
    assert analyze(TOY, ["a", "b"], combinations=2)["attributes"]["identifiers"] == []


def test_combination_limit_refuses_with_the_count():
    with pytest.raises(InputError, match=r"^3 combinations of up to 2 of 2 QIs: at most 2 "):
        analyze(TOY, ["a", "b"], combinations=2, combination_limit=2)


def test_journalist_risk_estimated_from_a_sampling_fraction():
    r = analyze(TOY, ["a", "b"], population=population_model(8, sampling_fraction=0.5))
    assert r["population"]["size"] == 16
    # estimated population class sizes 2f: risks 1/2 (f=1), 1/4 (f=2), 1/6 (f=3)
    assert r["journalist_risk_highest"] == 0.5
    assert r["journalist_risk_average"] == pytest.approx((3 * 0.5 + 2 * 0.25 + 3 / 6) / 8)
    assert r["journalist_records_at_risk"] == 5


def test_journalist_risk_against_a_population_table():
    extra = pd.DataFrame({"a": ["x", "x", "y", "w"], "b": ["2", "2", "1", "9"], "s": list("abcd")})
    population = pd.concat([TOY, extra], ignore_index=True)
    r = analyze(TOY, ["a", "b"], population=population_model(8, table=population))
    assert r["population"]["size"] == 12 and r["population"]["sampling_fraction"] == 8 / 12
    # population sizes: (x,1) 3, (x,2) 3, (y,1) 2, (y,2) 2, (z,3) 1
    assert r["journalist_risk_highest"] == 1.0
    assert r["journalist_risk_average"] == pytest.approx((3 / 3 + 1 / 3 + 1 / 2 + 2 / 2 + 1 / 1) / 8)
    assert r["population"]["uniques"] == {"uniques": 2, "share": 2 / 12}  # (z,3) and (w,9)


def test_population_table_without_a_sample_record_is_refused():
    with pytest.raises(InputError, match=r"holds 0 records with a = 'z', b = '3', the sample 1"):
        analyze(TOY, ["a", "b"], population=population_model(8, table=pd.concat([TOY.iloc[:7]] * 2)))


@pytest.mark.parametrize("kwargs, message", [
    ({"sampling_fraction": 0.0}, "sampling fraction 0.0: it is above 0 and at most 1"),
    ({"sampling_fraction": 1.5}, "sampling fraction 1.5: it is above 0 and at most 1"),
    ({"region": "mars"}, "unknown region 'mars' (one of: usa, uk, france, germany, canada, australia)"),
    ({"size": 5}, "population size 5 is smaller than the sample (8 records)"),
    ({"size": 100, "region": "usa"}, "give one population model, not region and population size"),
    ({"sampling_fraction": 1e-300}, "sampling fraction 1e-300: 8 records would be a sample of 8e+300 people, "
                                    "more than 10,000,000,000"),
    ({"size": 10**30}, "population size 1e+30 is more than 10,000,000,000"),
])
def test_population_model_refusals(kwargs, message):
    with pytest.raises(InputError) as e:
        population_model(8, **kwargs)
    assert str(e.value) == message


def test_region_preset_gives_the_cited_population():
    p = population_model(30162, region="USA")
    assert p.size == 331_449_281 == REGIONS["usa"]["population"]
    assert p.sampling_fraction == 30162 / 331_449_281
    assert "2020 Census" in p.source


# ---- population uniqueness on a toy frequency table -------------------------------------------------
HIST = {1: 30, 2: 10, 3: 5, 4: 3, 6: 2, 10: 1}  # class size -> classes
N_SAMPLE = sum(s * c for s, c in HIST.items())  # 99 records, 51 classes
N_POP = 10_000


def _pitman_equations(x):
    """The Pitman likelihood equations as plain sums (Hoshino 2001)."""
    theta, alpha = x
    u = sum(HIST.values())
    d_theta = sum(1 / (theta + i * alpha) for i in range(1, u)) - sum(1 / (theta + i) for i in range(1, N_SAMPLE))
    d_alpha = sum(i / (theta + i * alpha) for i in range(1, u)) - sum(
        c * sum(1 / (k - alpha) for k in range(1, j)) for j, c in HIST.items() if j > 1)
    return [d_theta, d_alpha]


def test_pitman_against_the_likelihood_equations():
    theta, alpha = optimize.fsolve(_pitman_equations, [20.0, 0.3], xtol=1e-13)
    assert max(abs(v) for v in _pitman_equations([theta, alpha])) < 1e-9
    expected = math.exp(math.lgamma(theta + 1) - math.lgamma(theta + alpha) + alpha * math.log(N_POP))
    got = pitman(HIST, N_POP)
    assert got.converged
    assert got.parameters["theta"] == pytest.approx(theta, rel=1e-6)
    assert got.parameters["alpha"] == pytest.approx(alpha, rel=1e-6)
    assert got.uniques == pytest.approx(expected, rel=1e-6)
    assert got.share == pytest.approx(expected / N_POP, rel=1e-6)


def test_zayatz_with_exact_hypergeometric_probabilities():
    u = sum(HIST.values())

    def p_one(j):  # P(f = 1 | F = j) = j C(N - j, n - 1) / C(N, n), exactly
        return Fraction(j * math.comb(N_POP - j, N_SAMPLE - 1), math.comb(N_POP, N_SAMPLE))

    num = Fraction(HIST[1], u) * p_one(1)
    den = sum(Fraction(c, u) * p_one(j) for j, c in HIST.items())
    conditional = num / den
    expected = float(HIST[1] * conditional / Fraction(N_SAMPLE, N_POP))
    got = zayatz(HIST, N_POP, N_SAMPLE / N_POP)
    assert got.converged and got.uniques == pytest.approx(expected, rel=1e-9)
    assert got.parameters["p_population_unique_given_sample_unique"] == pytest.approx(float(conditional), rel=1e-9)


def test_snb_is_arxs():
    """SNB follows ARX 3.9.2 (test_snb_arx.py has ARX's own figures): K from ARX's formula, then ARX's solver."""
    pi = 0.3
    got = snb(HIST, round(N_SAMPLE / pi), pi)
    assert got.parameters["K"] == snb_classes(HIST, pi)
    if got.converged:
        assert got.uniques == pytest.approx(got.parameters["K"] * got.parameters["beta"] ** got.parameters["alpha"])
    else:
        assert got.uniques is None and "found no root of the SNB equations" in got.reason


def test_estimators_that_cannot_converge_say_so_without_a_number():
    # every class unique: the Pitman alpha-equation is sum i/(theta + i alpha) > 0, never 0
    p = pitman({1: 40}, 4000)
    assert (p.converged, p.uniques, p.share) == (False, None, None)
    assert p.reason.startswith("every sample class is unique")
    # no class of size 2: ARX's solver finds no root either (test_snb_arx.py)
    s = snb({1: 5, 3: 2}, 1000, 11 / 1000)
    assert (s.converged, s.uniques) == (False, None)
    assert "found no root of the SNB equations" in s.reason
    # ARX's solver finds a root at α < 0, outside the model's parameter space: refused (ARX reports 0.0149)
    b = pitman({1: 10, 2: 5, 3: 3, 5: 2}, 3800)
    assert (b.converged, b.uniques) == (False, None) and "did not" not in b.reason
    assert b.reason == ("the root α = -2.048, θ = 65 lies outside Pitman's parameter space (0 < α < 1, θ > -α); "
                        "ARX's estimate there: 0.01488")


def test_dankar_rule():
    small = population_uniqueness(HIST, N_POP, N_SAMPLE / N_POP)
    assert small["dankar"]["model"] == "pitman"
    assert small["dankar"]["uniques"] == small["estimators"]["pitman"]["uniques"]
    fallback = population_uniqueness({1: 10, 2: 5, 3: 3, 5: 2}, 3800, 38 / 3800)
    assert fallback["dankar"]["model"] == "zayatz"
    assert fallback["dankar"]["why"] == "sampling fraction <= 0.1 and Pitman did not converge: Zayatz"
    large = population_uniqueness({1: 35, 2: 14, 3: 22, 4: 14}, 206, 185 / 206)  # SNB converges (ARX: 34.23)
    z, s = large["estimators"]["zayatz"]["uniques"], large["estimators"]["snb"]["uniques"]
    assert large["dankar"]["model"] == ("zayatz" if z < s else "snb") == "snb"
    assert large["dankar"]["uniques"] == min(z, s)
    no_snb = dankar(pitman({1: 5, 3: 2}, 50), zayatz({1: 5, 3: 2}, 50, 11 / 50), snb({1: 5, 3: 2}, 50, 11 / 50),
                    11 / 50)
    assert no_snb["model"] == "zayatz" and no_snb["why"] == "sampling fraction > 0.1 and SNB did not converge: Zayatz"


def test_no_sample_uniques_means_no_population_uniques():
    r = population_uniqueness({2: 4, 3: 1}, 1000, 11 / 1000)
    assert r["dankar"]["uniques"] == 0.0
    assert all(e["uniques"] == 0.0 and e["converged"] for e in r["estimators"].values())


def test_adult_eight_qis_reference_classes():
    from pathlib import Path

    # the shipped demo copy of Adult: a missing file fails the test rather than skipping it
    adult = Path(__file__).resolve().parents[2] / "anonymizer_app" / "demo_data" / "adult" / "adult.csv"
    frame = pd.read_csv(adult, sep=";", dtype=str, keep_default_na=False)
    qi = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
    r = analyze(frame, qi)
    assert r["equivalence_classes"] == 12458  # definitions.md's reference number
    assert r["records"] == 30162
    assert np.isclose(r["marketer_risk"], 12458 / 30162)


def test_a_runs_report_holds_the_risk_of_its_published_classes():
    """The report calls engine.measure.risk on the classes the gate checked: recounted here from the published rows."""
    from anonymizer_app.engine import Table
    from anonymizer_app.engine.run import pipeline
    from anonymizer_app.engine.run.spec import RunSpec

    table = Table(TOY, {"a": "qi", "b": "qi", "s": "sensitive"})
    pub = pipeline.run(RunSpec.build(table, None, "datafly", k=2))
    sizes = pub.table.groupby(["a", "b"]).size()
    risk = pub.report["risk"]
    assert risk["equivalence_classes"] == len(sizes) and risk["min_class_size"] == int(sizes.min()) >= 2
    assert risk["sample_uniques"] == 0
    assert risk["prosecutor_risk_highest"] == 1 / int(sizes.min())
    assert risk["marketer_risk"] == len(sizes) / int(sizes.sum())
