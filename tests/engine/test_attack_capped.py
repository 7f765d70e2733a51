"""The attack report of a sensitive column with many distinct values: bounded in size, its capped tables
summarised, and its figures over all values the same as the uncapped (EC x value matrix) computation's."""

import json
import math
import time

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.measure import attack
from anonymizer_app.engine.privacy.distributions import sensitive_domain


def income_table(n: int, seed: int = 3) -> tuple[pd.DataFrame, np.ndarray]:
    """n records of decimal incomes (about one distinct value per record) in ECs of 5."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"income": np.round(rng.lognormal(10, 1, n), 4)})
    classes = np.repeat(np.arange(n // 5), 5)
    rng.shuffle(classes)
    return frame, classes


def test_100000_distinct_decimals_give_a_small_report_quickly():
    frame, classes = income_table(100_000)
    start = time.perf_counter()
    report = attack.attack_report(frame, classes, ["income"], {"income": True})
    seconds = time.perf_counter() - start
    size = len(json.dumps(report))
    print(f"100,000 distinct incomes: {size:,} bytes in {seconds:.2f} s")
    assert size < 200_000 and seconds < 20
    income = report["income"]
    distinct = frame["income"].nunique()
    capped = income["capped"]
    assert capped["distinct_values"] == distinct and capped["cap"] == attack.VALUES_CAP
    assert len(income["table_distribution"]) == len(income["posterior"]) == attack.VALUES_CAP
    assert capped["table_distribution"]["other_values"] == distinct - attack.VALUES_CAP
    assert sum(income["table_distribution"].values()) + capped["table_distribution"]["other_share"] == \
        pytest.approx(1.0)
    # ECs of 5 distinct values: every value's highest posterior is 1/5 at most (exact, over all values)
    assert capped["highest_posterior"]["highest"] == max(p["highest"] for p in income["posterior"].values())
    bins = income["bins"]
    assert len(bins["labels"]) == 10 and sum(p["prior"] for p in bins["posterior"]) == pytest.approx(1.0)


def test_capped_figures_are_the_dense_computation_s(monkeypatch):
    frame, classes = income_table(3_000, seed=5)
    frame["income"] = np.round(frame["income"], -3)  # a few hundred values, several per EC
    classes[::97] = -1  # some records suppressed
    capped = attack.attack_report(frame, classes, ["income"], {"income": True})["income"]
    monkeypatch.setattr(attack, "VALUES_CAP", 10**9)
    dense = attack.attack_report(frame, classes, ["income"], {"income": True})["income"]
    assert "capped" not in dense and capped["capped"]["distinct_values"] == len(dense["posterior"]) > 50
    for key in ("records", "equivalence_classes", "homogeneous_classes", "records_in_homogeneous_classes"):
        assert capped[key] == dense[key]
    for key in ("worst_emd_equal", "worst_emd_ordered"):
        assert capped[key]["emd"] == pytest.approx(dense[key]["emd"], rel=1e-9)
    assert capped["entropy_min"] == pytest.approx(dense["entropy_min"])
    assert capped["entropy_mean"] == pytest.approx(dense["entropy_mean"])
    assert sorted(e["entropy"] for e in capped["entropy"]) == pytest.approx(sorted(e["entropy"] for e in
                                                                                   dense["entropy"]))
    for value, p in capped["posterior"].items():
        assert p["highest"] == pytest.approx(dense["posterior"][value]["highest"])
        assert p["prior"] == pytest.approx(dense["posterior"][value]["prior"])
    top = max(dense["posterior"].values(), key=lambda p: p["highest"])["highest"]
    assert capped["capped"]["highest_posterior"]["highest"] == pytest.approx(top)
    for value, share in capped["table_distribution"].items():
        assert share == pytest.approx(dense["table_distribution"][value])
    # the 50 most frequent values (ties: value order, the dense table's order)
    most = sorted(dense["table_distribution"].items(), key=lambda kv: -kv[1])[:50]
    assert capped["table_distribution"] == dict(most)
    # an EC's counts: the 20 most frequent and the rest summed
    counts = {d["class"]: d for d in dense["class_distributions"]}
    for d in capped["class_distributions"]:
        whole = counts.get(d["class"])
        if whole is None:
            continue
        assert sum(d["counts"].values()) + d.get("other_records", 0) == sum(whole["counts"].values())
        assert len(d["counts"]) + d.get("other_values", 0) == len(whole["counts"])


def test_parts_merge_as_one(monkeypatch):
    """Out of core the report is merged from parts of the ECs: the same capped report."""
    frame, classes = income_table(2_000, seed=9)
    dom = sensitive_domain(frame, "income", numeric=True)
    whole = attack.merge_parts([attack.report_part(dom, classes)])
    low = np.where(classes < 200, classes, -1)
    high = np.where(classes >= 200, classes - 200, -1)
    parts = [attack.report_part(dom, low), attack.report_part(dom, high, class_offset=200)]
    merged = attack.merge_parts(parts)
    assert json.dumps(merged["posterior"]) == json.dumps(whole["posterior"])
    assert merged["capped"] == whole["capped"] and merged["bins"] == whole["bins"]
    assert merged["worst_emd_ordered"] == whole["worst_emd_ordered"]


def test_few_values_keep_every_value():
    frame = pd.DataFrame({"s": list("abcab") * 20})
    report = attack.attack_report(frame, np.arange(100) // 10, ["s"])["s"]
    assert "capped" not in report and "bins" not in report and set(report["posterior"]) == set("abc")
    assert math.isclose(sum(report["table_distribution"].values()), 1.0)


def test_an_ec_with_many_values_lists_20_and_its_ranges():
    frame, _ = income_table(2_000, seed=11)
    classes = np.arange(2_000) % 4  # 4 ECs of 500 distinct values
    report = attack.attack_report(frame, classes, ["income"], {"income": True})["income"]
    assert len(report["class_distributions"]) == 4
    for d in report["class_distributions"]:
        assert len(d["counts"]) == attack.CLASS_VALUES_CAP and d["other_values"] == 500 - attack.CLASS_VALUES_CAP
        assert sum(d["counts"].values()) + d["other_records"] == 500 == sum(d["bin_counts"])
        assert len(d["bin_counts"]) == len(report["bins"]["labels"])
    assert len(json.dumps(report)) < 50_000
