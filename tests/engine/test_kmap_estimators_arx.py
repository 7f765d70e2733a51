"""k-map with an estimated population equals ARX 3.9.2's KMap(k, α, population, POISSON | ZERO_TRUNCATED_POISSON)
on Adult (8 QIs, ARX's hierarchies, discernibility): the derived k, the type-I error and the optimum.

Oracle values: ARX 3.9.2 itself (../shared/tools/arx/arx-bench.jar) driven by benchmarks/arx_oracle/ArxOracle.java:
``java -cp arx-bench.jar ArxOracle.java kmap adult.csv QIS K ALPHA usa|f=FRACTION poisson|ztp SUPPRESSION``
prints ARX's getDerivedK(), getType1Error() and the optimal transformation (getGlobalOptimum). "usa" is ARX's
USA population, 317,238,626 people; "f=0.01" ARX's population of round(30,162 / 0.01) people.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import InputError, Table, anonymize, read_hierarchy, read_table
from anonymizer_app.engine.privacy import KMap, check_feasible
from anonymizer_app.engine.privacy.k_map import POISSON, ZERO_TRUNCATED_POISSON, derive_k

ADULT = Path(__file__).resolve().parents[2] / "anonymizer_app" / "demo_data" / "adult"
QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
N = 30162
POPULATION = {"usa": 317_238_626, "f=0.01": 3_016_200}
EST = {"poisson": POISSON, "ztp": ZERO_TRUNCATED_POISSON}

# (k, α, population, estimator, suppression, ARX's derived k, ARX's type-I error, ARX's optimum, DM, suppressed)
ARX = [
    (2, 0.01, "usa", "poisson", 0, 2, 0.00019013531144529416, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (2, 0.01, "usa", "poisson", 0.04, 2, 0.00019013531144529416, [1, 0, 1, 1, 1, 2, 2, 1], 5643993, 45),
    (5, 0.01, "usa", "poisson", 0, 2, 0.0004752704968176147, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (5, 0.01, "usa", "poisson", 0.04, 2, 0.0004752704968176147, [1, 0, 1, 1, 1, 2, 2, 1], 5643993, 45),
    (5, 0.1, "usa", "poisson", 0, 2, 0.0004752704968176147, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (10, 0.01, "usa", "poisson", 0, 2, 0.0009503151115899389, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (100, 0.01, "usa", "poisson", 0, 2, 0.00946261448572605, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (100, 0.1, "usa", "poisson", 0.04, 2, 0.00946261448572605, [1, 0, 1, 1, 1, 2, 2, 1], 5643993, 45),
    (1000, 0.01, "usa", "poisson", 0, 3, 0.004243264867981988, [1, 1, 1, 1, 3, 2, 2, 1], 55170356, 0),
    (1000, 0.01, "usa", "poisson", 0.04, 3, 0.004243264867981988, [0, 0, 1, 1, 3, 2, 2, 0], 7513375, 81),
    (1000, 0.1, "usa", "poisson", 0, 2, 0.09069680696681504, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (2, 0.01, "usa", "ztp", 0, 2, 0.0, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (5, 0.01, "usa", "ztp", 0, 2, 0.0002376729044800685, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (5, 0.1, "usa", "ztp", 0.04, 2, 0.0002376729044800685, [1, 0, 1, 1, 1, 2, 2, 1], 5643993, 45),
    (10, 0.01, "usa", "ztp", 0, 2, 0.0004753081437858242, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (100, 0.01, "usa", "ztp", 0, 2, 0.004746301766163641, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (1000, 0.01, "usa", "ztp", 0, 3, 0.0014709046251897284, [1, 1, 1, 1, 3, 2, 2, 1], 55170356, 0),
    (1000, 0.01, "usa", "ztp", 0.04, 3, 0.0014709046251897284, [0, 0, 1, 1, 3, 2, 2, 0], 7513375, 81),
    (1000, 0.1, "usa", "ztp", 0, 2, 0.046785162674299, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (2, 0.01, "f=0.01", "poisson", 0, 2, 0.0, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (2, 0.1, "f=0.01", "poisson", 0.04, 2, 0.019801326693244747, [1, 0, 1, 1, 1, 2, 2, 1], 5643993, 45),
    (5, 0.01, "f=0.01", "poisson", 0, 3, 0.00120910427425025, [1, 1, 1, 1, 3, 2, 2, 1], 55170356, 0),
    (5, 0.01, "f=0.01", "poisson", 0.04, 3, 0.00120910427425025, [0, 0, 1, 1, 3, 2, 2, 0], 7513375, 81),
    (5, 0.1, "f=0.01", "poisson", 0, 2, 0.048770575499285984, [1, 1, 1, 2, 2, 2, 2, 1], 49216658, 0),
    (10, 0.01, "f=0.01", "poisson", 0, 3, 0.004678840160444397, [1, 1, 1, 1, 3, 2, 2, 1], 55170356, 0),
    (10, 0.1, "f=0.01", "poisson", 0.04, 2, 0.09516258196404048, [1, 0, 1, 1, 1, 2, 2, 1], 5643993, 45),
    (100, 0.01, "f=0.01", "poisson", 0.04, 6, 0.00365984682734366, [0, 0, 1, 2, 3, 2, 2, 0], 10173662, 90),
    (100, 0.1, "f=0.01", "poisson", 0, 4, 0.08030139707139305, [1, 1, 1, 1, 3, 2, 2, 1], 55170356, 0),
    (5, 0.01, "f=0.01", "ztp", 0, 3, 0.0004114672303727751, [1, 1, 1, 1, 3, 2, 2, 1], 55170356, 0),
    (100, 0.01, "f=0.01", "ztp", 0, 5, 0.005789792431567187, [1, 1, 1, 1, 3, 2, 2, 1], 55170356, 0),
]


def _model(k, alpha, population, estimator) -> KMap:
    return KMap(k, N / POPULATION[population], EST[estimator], alpha)


@pytest.mark.parametrize("k, alpha, population, estimator, _s, derived, type1, _o, _dm, _sup", ARX)
def test_derived_k_and_type1_error_equal_arx(k, alpha, population, estimator, _s, derived, type1, _o, _dm, _sup):
    m = _model(k, alpha, population, estimator)
    assert m.derived_k == derived
    assert m.type1_error == pytest.approx(type1, rel=1e-9, abs=1e-15)
    assert f"derived k = {derived}, type-I error {type1:.3g}" in m.summary()


@pytest.fixture(scope="module")
def adult():
    frame, _ = read_table(ADULT / "adult.csv")
    roles = {c: "quasi-identifying" for c in QIS}
    roles["occupation"] = "sensitive"
    return Table(frame, roles), {c: read_hierarchy(ADULT / f"adult_hierarchy_{c}.csv") for c in QIS}


# one case per distinct (derived k, suppression) of the table, and the issue's two (--kmap 5 at USA and 0.01)
OPTIMA = [ARX[i] for i in (2, 3, 9, 12, 21, 22, 26, 27, 29)]


@pytest.mark.parametrize("k, alpha, population, estimator, suppression, derived, _t, optimum, dm, suppressed", OPTIMA)
def test_adult_optimum_equals_arx(adult, k, alpha, population, estimator, suppression, derived, _t, optimum, dm,
                                  suppressed):
    table, hs = adult
    result = anonymize(table, hs, "flash", k=1, models=[_model(k, alpha, population, estimator)],
                       suppression_limit=suppression, options={"metric": "discernibility"})
    assert result.verified
    assert [result.transformation[c] for c in QIS] == optimum
    assert result.metrics["discernibility"] == dm
    assert int(np.asarray(result.suppressed).sum()) == suppressed
    kept = np.asarray(result.class_sizes)
    assert kept[kept > 0].min() >= derived


def test_the_issue_case_is_no_longer_published_unchanged(adult):
    """--kmap 5 at π = 9.5e-5 (USA) and 0.01: the plain expectation f/π >= 5 held for all 12,458 classes; the
    derived k (2, 3) leaves no sample unique."""
    table, hs = adult
    for pi, derived in ((N / 317_238_626, 2), (0.01, 3)):
        result = anonymize(table, hs, "flash", k=1, models=[KMap(5, pi)], options={"metric": "discernibility"})
        sizes = np.asarray(result.class_sizes)
        assert sizes[sizes > 0].min() >= derived and result.transformation["age"] == 1


def test_derivation_by_hand():
    # Poisson, λ = 5 · 0.01 = 0.05: P(X <= 0) = e^-0.05 < 0.99 <= P(X <= 1): c = 1, k' = c + 2 = 3
    k, t = derive_k(5, 0.01, 0.01, POISSON)
    assert k == 3 and t == pytest.approx(1 - np.exp(-0.05) * 1.05, rel=1e-12)
    # zero-truncated: P(1 | X >= 1) = λe^-λ / (1 - e^-λ) = 0.9750 < 0.99, + P(2 | X >= 1): c = 2, k' = 3
    lam = 0.05
    p1 = lam * np.exp(-lam) / (1 - np.exp(-lam))
    p2 = lam**2 / 2 * np.exp(-lam) / (1 - np.exp(-lam))
    k, t = derive_k(5, 0.01, 0.01, ZERO_TRUNCATED_POISSON)
    assert k == 3 and t == pytest.approx(1 - p1 - p2, rel=1e-9)
    # the search stops at k: certain, type-I error 0, k' <= k
    assert derive_k(1, 0.5, 0.01, POISSON) == (1, 0.0)
    assert derive_k(3, 1.0, 0.0, ZERO_TRUNCATED_POISSON) == (3, 0.0)
    # significance 1 accepts every class
    assert derive_k(50, 0.01, 1.0, ZERO_TRUNCATED_POISSON) == (1, 1.0)


def test_model_parameters_check_and_refusals():
    m = KMap(5, 0.01, "zero-truncated-poisson", 0.01)  # k' = 3 (test_derivation_by_hand)
    assert m.classes_failing(np.array([1, 2, 3, 7])).tolist() == [True, True, False, False]
    assert m.card(np.array([3, 4]))["value"] == 3 and "derived k = 3" in m.card(np.array([3]))["value_label"]
    assert m.to_dict() == {"model": "k-map", "kmap_k": 5, "sampling_fraction": 0.01,
                           "estimator": "zero-truncated-poisson", "significance": 0.01}
    assert KMap.monotonic and KMap.monotonic_without_suppression
    with pytest.raises(InputError, match="estimator must be one of poisson, zero-truncated-poisson"):
        KMap(5, 0.01, "expectation")
    with pytest.raises(InputError, match="significance must be at most 1"):
        KMap(5, 0.01, POISSON, 1.5)
    with pytest.raises(InputError, match=r"asks for classes of at least 3 records \(derived k"):
        check_feasible([KMap(5, 0.01)], 2, {}, 0.0)
    check_feasible([KMap(5, 0.01)], 3, {}, 0.0)


# ---- the command line and the run form read the parameters from the registry ------------------------------
def test_the_cli_flags(tmp_path):
    import io

    from django.core.management import call_command

    frame, _ = read_table(ADULT / "adult.csv")
    src = tmp_path / "adult.csv"
    frame.head(3000).to_csv(src, index=False)
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    # k = 100 at π = 0.01, α = 0.01, zero-truncated: k' = 5 (ARX's figure for Adult's π, same here)
    assert KMap(100, 0.01, ZERO_TRUNCATED_POISSON, 0.01).derived_k == 5
    call_command("anonymize", str(src), "--qi", "age", "--qi", "sex", "--qi", "race", "--algorithm", "flash",
                 "--k", "1", "--kmap", "100", "--kmap-sampling-fraction", "0.01", "--kmap-estimator",
                 "zero-truncated-poisson", "--kmap-significance", "0.01", "--out", str(out), "--report", str(report),
                 stdout=io.StringIO(), stderr=io.StringIO())
    sizes = pd.read_csv(out, dtype=str).groupby(["age", "sex", "race"]).size()
    assert sizes.min() >= 5
    import json

    checks = {c["model"]: c for c in json.loads(report.read_text())["model_checks"]}
    assert checks["k-map"]["holds"] is True and checks["k-map"]["value"] == sizes.min()
    assert "derived k = 5, type-I error 0.00579" in checks["k-map"]["describe"]
    assert checks["k-map"]["parameters"] == {"model": "k-map", "kmap_k": 100, "sampling_fraction": 0.01,
                                             "estimator": "zero-truncated-poisson", "significance": 0.01}


@pytest.mark.django_db
def test_the_run_form(client_alice, user, monkeypatch):
    from anonymizer_helpers import people_dataset, run_jobs_synchronously

    from anonymizer_app.models import Job

    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user)
    r = client_alice.get(f"/datasets/{ds.pk}/run/")
    assert 'name="model:kmap:estimator"' in r.content.decode()
    r = client_alice.post(f"/datasets/{ds.pk}/run/", {
        "algorithm": "flash", "k": 2, "suppression_percent": 10, "sensitive": "disease",
        "model:kmap:enabled": "on", "model:kmap:kmap_k": "50", "model:kmap:sampling_fraction": "0.05",
        "model:kmap:estimator": "poisson", "model:kmap:significance": "0.05"})
    assert r.status_code == 302
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    assert job.models == [{"model": "k-map", "kmap_k": 50, "sampling_fraction": 0.05, "estimator": "poisson",
                           "significance": 0.05}]
    check = next(c for c in job.result.report["model_checks"] if c["model"] == "k-map")
    derived = KMap(50, 0.05, POISSON, 0.05).derived_k
    assert check["holds"] is True and check["value"] >= derived
    assert f"derived k = {derived}" in client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
