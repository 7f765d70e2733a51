"""The SNB estimate and Dankar's choice equal ARX 3.9.2's (RiskModelPopulationUniqueness, ModelSNB with its
Newton-Raphson solver and default ARXSolverConfiguration): no SNB estimate on Adult, where ARX has none (its own
unit test TestRiskMetrics.testDecisionRule2 fails on "Unexpected convergence of SNB"), and ARX's number where its
solver converges.

Oracle values: ARX itself (../shared/tools/arx/arx-bench.jar) through benchmarks/arx_oracle/ArxOracle.java:
``ArxOracle.java uniq adult.csv QIS usa|f=FRACTION`` (Adult's classes on the QIs, ARX's USA population
317,238,626 or round(30,162 / f) people) and ``ArxOracle.java hist POPULATION 1:c1,2:c2,...`` (a class-size
histogram). ARX prints 0.0 for an estimate it does not have (NaN inside).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from anonymizer_app.engine.measure.risk import population_uniqueness, snb, snb_classes
from anonymizer_app.engine.measure.risk.newton import PREPARED_STARTS

ADULT = Path(__file__).resolve().parents[2] / "anonymizer_app" / "demo_data" / "adult" / "adult.csv"
Q8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
Q9 = Q8 + ["occupation"]
N = 30162
POP = {"usa": 317_238_626, "0.01": 3_016_200, "0.1": 301_620, "0.2": 150_810}

# (QIs, population, ARX's Pitman, ARX's Zayatz, ARX's Dankar model); ARX's SNB: none in every case
ADULT_ARX = [
    (Q8, "usa", 4614481.191292255, 2.729548425049688e7, "pitman"),
    (Q8, "0.01", 200186.70646050764, 294012.2067968835, "pitman"),
    (Q8, "0.1", 42411.14113232119, 44668.9406129838, "pitman"),
    (Q8, "0.2", 26582.70697153739, 26603.01913636273, "zayatz"),
    (Q9, "usa", 1.2339373406325705e7, 8.393014767411424e7, "pitman"),
    (Q9, "0.01", 436167.7146707063, 819539.9058719622, "pitman"),
    (Q9, "0.1", 83503.47855187597, 96741.67099172718, "pitman"),
    (Q9, "0.2", 50766.87124638239, 53946.23356045803, "zayatz"),
]


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(ADULT, sep=";", dtype=str, keep_default_na=False)


def _hist(frame: pd.DataFrame, qi: list[str]) -> dict[int, int]:
    return {int(s): int(c) for s, c in frame.groupby(qi).size().value_counts().items()}


@pytest.mark.parametrize("qi, population, pitman, zayatz, model", ADULT_ARX)
def test_adult_snb_and_dankar_equal_arx(adult, qi, population, pitman, zayatz, model):
    size = POP[population]
    r = population_uniqueness(_hist(adult, qi), size, N / size)
    e = r["estimators"]
    assert (e["snb"]["converged"], e["snb"]["uniques"]) == (False, None)
    assert e["snb"]["reason"].startswith("ARX's Newton-Raphson solver found no root of the SNB equations from any of "
                                         "its 17 start points")
    assert e["pitman"]["uniques"] == pytest.approx(pitman, rel=1e-9)
    assert e["zayatz"]["uniques"] == pytest.approx(zayatz, rel=1e-6)
    assert r["dankar"]["model"] == model
    assert r["dankar"]["uniques"] == pytest.approx(pitman if model == "pitman" else zayatz, rel=1e-6)
    if N / size > 0.1:
        assert r["dankar"]["why"] == "sampling fraction > 0.1 and SNB did not converge: Zayatz"


# (population, histogram, ARX's SNB or None, ARX's Zayatz) where ARX's solver converges, and where it does not
HIST_ARX = [
    (206, {1: 35, 2: 14, 3: 22, 4: 14}, 34.23278729530201, 35.35305011348288),
    (176, {1: 31, 2: 1, 3: 30}, 40.31475561051536, 34.59211586152711),
    (731, {1: 39, 2: 37, 3: 37, 4: 25, 5: 10, 6: 10, 7: 32}, 31.293415146769032, 35.50031906420985),
    (351, {1: 35, 2: 16, 3: 2, 4: 4, 5: 5, 6: 1, 7: 28}, 33.197928837027995, 35.54960671081492),
    (129, {1: 9, 2: 8, 3: 21, 4: 7}, 7.349793999947438, 8.00473721024864),
    (340, {1: 19, 2: 15, 3: 21, 4: 6, 5: 34}, 16.104260583517544, 17.699213273988324),
    (194, {1: 4, 2: 4, 3: 1, 4: 40}, 2.967857654818242, 3.58566235105177),
    (521, {1: 34, 2: 29, 4: 25, 5: 21, 6: 10, 7: 16}, 28.532786298075134, 32.180792133130296),
    (330, {1: 30, 2: 10, 3: 5, 4: 3, 6: 2}, None, 55.71634614262612),
    (150, {1: 30, 2: 10, 3: 5, 4: 3, 6: 2}, None, 36.461349115501015),
    (400, {1: 50, 2: 20, 3: 10, 5: 4, 8: 2}, None, 72.08434218099248),
    (330, {1: 30, 2: 10, 3: 5, 4: 3, 6: 2, 10: 1}, None, 51.74028055196927),
    (50, {1: 5, 3: 2}, None, 12.941735777296499),
]


@pytest.mark.parametrize("population, hist, expected, zayatz", HIST_ARX)
def test_snb_converges_exactly_where_arx_does(population, hist, expected, zayatz):
    n = sum(s * c for s, c in hist.items())
    assert n / population > 0.1  # Dankar's rule looks at SNB
    r = population_uniqueness(hist, population, n / population)
    s = r["estimators"]["snb"]
    if expected is None:
        assert (s["converged"], s["uniques"]) == (False, None)
        assert (r["dankar"]["model"], r["dankar"]["uniques"]) == ("zayatz", pytest.approx(zayatz, rel=1e-9))
    else:
        assert s["converged"] and s["uniques"] == pytest.approx(expected, rel=1e-9)
        assert s["share"] == pytest.approx(expected / population, rel=1e-9)
        # ARX chose SNB in these cases, Zayatz (the smaller) for the population of 176
        assert r["dankar"]["model"] == ("zayatz" if population == 176 else "snb")
        assert r["dankar"]["uniques"] == pytest.approx(min(zayatz, expected), rel=1e-9)


def test_the_number_of_population_classes_as_arx_computes_it():
    hist, f = {1: 4, 2: 4, 3: 1, 4: 40}, 0.3
    a = sum(j * f**2 * (1 - f**2) ** (j - 1) * c for j, c in hist.items())
    b = sum((1 - f) ** j * c * (1 + f) ** j - 1 for j, c in hist.items())  # ARX's "- 1" per class size
    c_ = sum((1 - f) ** j * c for j, c in hist.items())
    d = sum(j * f * (1 - f) ** (j - 1) * c for j, c in hist.items())
    assert snb_classes(hist, f) == pytest.approx(49 + 4 * (a / b) * (c_ / d) ** 2, rel=1e-12)


def test_the_solver_takes_arx_start_points():
    assert len(PREPARED_STARTS) == 16 and PREPARED_STARTS[0] == (0.0, 0.0)
    assert sorted(round(x, 12) for x in {p[0] for p in PREPARED_STARTS}) == [0.0, 0.33, 0.66, 0.99]
    s = snb({1: 35, 2: 14, 3: 22, 4: 14}, 206, 185 / 206)
    assert s.converged and s.parameters["tries"] == 11  # from (1, 1), then the 10th prepared point
    assert math.isclose(s.uniques, s.parameters["K"] * s.parameters["beta"] ** s.parameters["alpha"])


# Pitman as ARX solves it: (population, histogram, ARX's estimate or None). ARX's roots at α < 0 lie outside
# Pitman's parameter space: refused here, the reason quoting ARX's number.
PITMAN_ARX = [
    (10000, {1: 30, 2: 10, 3: 5, 4: 3, 6: 2, 10: 1}, 50.22710196617528),
    (330, {1: 30, 2: 10, 3: 5, 4: 3, 6: 2, 10: 1}, 42.873127825888204),
    (330, {1: 30, 2: 10, 3: 5, 4: 3, 6: 2}, 39.74492579786442),
    (1000, {1: 50, 2: 20, 3: 10, 5: 4, 8: 2}, 60.651749425416476),
    (351, {1: 35, 2: 16, 3: 2, 4: 4, 5: 5, 6: 1, 7: 28}, 41.4084043084342),
    (1000, {1: 5, 3: 2}, 1.0578458568050224),
    (3800, {1: 10, 2: 5, 3: 3, 5: 2}, 0.014876067115572364),
    (250, {1: 20, 2: 15, 3: 8, 4: 6, 5: 3}, None),
    (206, {1: 35, 2: 14, 3: 22, 4: 14}, None),
    (129, {1: 9, 2: 8, 3: 21, 4: 7}, None),
    (194, {1: 4, 2: 4, 3: 1, 4: 40}, None),
    (4000, {1: 40}, None),
]


@pytest.mark.parametrize("population, hist, expected", PITMAN_ARX)
def test_pitman_converges_where_arx_does(population, hist, expected):
    from anonymizer_app.engine.measure.risk import pitman

    p = pitman(hist, population)
    if expected is None:
        assert (p.converged, p.uniques) == (False, None)
    elif p.converged:
        assert 0 < p.parameters["alpha"] < 1
        assert p.uniques == pytest.approx(expected, rel=2e-7)  # a root to ARX's accuracy 1e-6
    else:
        assert p.parameters["alpha"] <= 0 and "outside Pitman's parameter space" in p.reason
        assert float(p.reason.rsplit(": ", 1)[1]) == pytest.approx(expected, rel=2e-3)  # quoted to 4 digits


def test_300_random_histograms_against_arx():
    """arx_uniqueness_oracle.jsonl: 300 random class-size histograms (seed 26; 1 to 8 sizes, π from 0.01 to 0.8)
    with ARX's Pitman, Zayatz, SNB and Dankar's choice (``ArxOracle.java hists``). SNB: an estimate exactly where
    ARX has one, equal to 1e-6; Dankar's choice ARX's except where ARX took a Pitman root outside the parameter
    space, which is refused here; Pitman's solver lands where ARX's does but on 3 degenerate roots (ARX: below
    1e-7 uniques)."""
    import json

    from anonymizer_app.engine.measure.risk.pitman_arx import pitman_arx

    rows = [json.loads(line) for line in (Path(__file__).parent / "arx_uniqueness_oracle.jsonl").open()]
    assert len(rows) == 300
    snb_estimates = refused = pitman_apart = 0
    for row in rows:
        hist = {int(a): int(b) for a, b in (p.split(":") for p in row["hist"].split(","))}
        pop, arx = row["population"], row["arx"]
        n = sum(s * c for s, c in hist.items())
        r = population_uniqueness(hist, pop, n / pop)
        s, p = r["estimators"]["snb"], r["estimators"]["pitman"]
        assert s["converged"] == (arx["snb"] != 0), row
        if s["converged"]:
            snb_estimates += 1
            assert s["uniques"] == pytest.approx(arx["snb"], rel=1e-6)
        if (r["dankar"]["model"] or "dankar").upper() != arx["dankar_model"]:
            assert arx["dankar_model"] == "PITMAN" and "outside Pitman's parameter space" in p["reason"], row
            refused += 1
        raw = pitman_arx(hist, pop)[0] if max(hist) >= 2 else math.nan
        if (arx["pitman"] == 0) != math.isnan(raw) or (arx["pitman"] != 0 and raw != pytest.approx(arx["pitman"],
                                                                                                   rel=1e-5)):
            assert arx["pitman"] < 1e-7, row
            pitman_apart += 1
    assert (snb_estimates, refused, pitman_apart) == (7, 10, 3)
