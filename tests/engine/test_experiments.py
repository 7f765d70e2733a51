"""engine.measure.experiments: generated people tables and the seed-001 homogeneity analysis."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table, anonymize
from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.measure import experiments as ex


def test_generate_people_is_seeded_and_uses_the_leaves():
    a = ex.generate_people(500, seed=3)
    b = ex.generate_people(500, seed=3)
    c = ex.generate_people(500, seed=4)
    assert a.equals(b) and not a.equals(c)
    assert list(a.columns) == ["id", "age", "city_birth", "zip_code", "disease"]
    assert a["id"].tolist() == list(range(1, 501))
    hs = ex.people_hierarchies()
    for q in ex.PEOPLE_QIS:
        assert set(a[q]) <= set(hs[q].leaves)
    db = pd.read_csv(ex.DEMO_PEOPLE / "db_100.csv", dtype=str)
    assert set(a["disease"]) <= set(db["disease"])


def test_generate_people_follows_the_disease_distribution():
    big = ex.generate_people(20000, seed=0)
    db = pd.read_csv(ex.DEMO_PEOPLE / "db_100.csv", dtype=str)
    want = db["disease"].value_counts(normalize=True)
    got = big["disease"].value_counts(normalize=True)
    for value, share in want.items():
        assert got[value] == pytest.approx(share, abs=0.015)


def test_generate_people_errors(tmp_path):
    with pytest.raises(InputError):
        ex.generate_people(0)
    with pytest.raises(InputError, match="missing"):
        ex.generate_people(10, hierarchy_dir=tmp_path)


def _brute_homogeneous(frame: pd.DataFrame, result, sensitive: str):
    kept = result.class_of_row >= 0
    per_class = frame[sensitive][kept].groupby(result.class_of_row[kept]).nunique()
    sizes = pd.Series(result.class_of_row[kept]).value_counts()
    homog = per_class[per_class == 1].index
    return len(homog), int(sizes[homog].sum())


def test_homogeneity_vs_k_counts_homogeneous_classes():
    table = ex.people_table(ex.generate_people(2000, seed=1))
    hs = ex.people_hierarchies()
    rows = ex.homogeneity_vs_k(table, hs, [2, 5, 10], "mondrian", 0.0)
    assert [r["k"] for r in rows] == [2, 5, 10]
    for r in rows:
        direct = anonymize(table, hs, "mondrian", k=r["k"])
        classes, records = _brute_homogeneous(table.frame, direct, "disease")
        assert (r["homogeneous_classes"], r["homogeneous_records"]) == (classes, records)
        assert r["equivalence_classes"] == len(direct.class_sizes)
        assert r["k_reached"] >= r["k"] and r["rows"] == 2000 and r["seconds"] >= 0
    # bigger k: fewer (or as many) homogeneous classes
    counts = [r["homogeneous_classes"] for r in rows]
    assert counts == sorted(counts, reverse=True)


def test_homogeneity_on_a_hand_table():
    frame = pd.DataFrame({"age": ["1", "1", "2", "2", "2", "3", "3"],
                          "dis": ["a", "a", "a", "b", "b", "c", "c"]})
    table = Table(frame, {"age": "qi", "dis": "sensitive"})
    hs = {"age": __import__("anonymizer_app.engine", fromlist=["parse_hierarchy"]).parse_hierarchy(
        "1,low\n2,low\n3,high\n", "age")}
    rows = ex.homogeneity_vs_k(table, hs, [2, 3], "datafly")
    assert rows[0]["equivalence_classes"] == 3 and rows[0]["homogeneous_classes"] == 2
    assert rows[0]["homogeneous_records"] == 4
    # k=3: level 1 {low: 5 records a,a,a,b,b} and {high: 2} -> Datafly goes to the root (one class)
    assert rows[1]["homogeneous_classes"] == 0 and rows[1]["k_reached"] >= 3
    with pytest.raises(InputError):
        ex.homogeneity_vs_k(Table(frame, {"age": "qi", "dis": "insensitive"}), hs, [2])
    assert np.isfinite(rows[1]["seconds"])
