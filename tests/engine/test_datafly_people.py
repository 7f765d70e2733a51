"""Datafly on the seed-001 exercise data (people/db_100.csv), checked against an independent reference.

The reference (tests/engine/_reference.py) reads the CSV files with the csv module and runs Datafly
over dicts and Counters; nothing of it comes from the engine.
"""

from __future__ import annotations

import csv
import random
from collections import Counter

import pandas as pd
import pytest

from anonymizer_app.engine import HierarchyError, Table, anonymize, read_hierarchy, read_table
from tests.reference_data import PEOPLE

from . import _reference as ref

DB = PEOPLE / "db_100.csv"
FILES = {
    "age": PEOPLE / "age_generalization.csv",
    "city_birth": PEOPLE / "city_birth_generalization.csv",
    "zip_code": PEOPLE / "zip_code_generalization.csv",
}
QIS = ["age", "city_birth", "zip_code"]
# The 12 ambiguous city names used in db_100.csv (datasets/README.md).
AMBIGUOUS_IN_DB = {"Casanova", "Cerreto", "Erchie", "Luserna", "Pedemonte", "Rifreddo", "Sala", "San Giovanni",
                   "San Girolamo", "San Lorenzo", "San Pancrazio", "San Paolo"}


# ---- fixtures ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def raw_rows() -> list[dict]:
    with open(DB, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def frame():
    df, _ = read_table(DB)
    return df


@pytest.fixture(scope="module")
def engine_hierarchies() -> dict:
    out = {}
    for policy in ("lift", "first"):
        out[policy] = {
            "age": read_hierarchy(FILES["age"], on_conflict="first"),
            "city_birth": read_hierarchy(FILES["city_birth"], on_conflict=policy),
            "zip_code": read_hierarchy(FILES["zip_code"]),
        }
    return out


@pytest.fixture(scope="module")
def reference_hierarchies() -> dict:
    out = {}
    for policy in ("lift", "first"):
        out[policy] = {q: ref.read_hierarchy(FILES[q], policy) for q in QIS}
    return out


def _table(frame, qis):
    roles = {"id": "identifying", "disease": "sensitive"}
    roles.update({q: "quasi-identifying" for q in qis})
    return Table(frame, roles)


# ---- the files -----------------------------------------------------------------------------------
def test_reference_reads_the_files_as_the_readme_describes(raw_rows, reference_hierarchies):
    assert len(raw_rows) == 100
    assert list(raw_rows[0]) == ["id", "age", "city_birth", "zip_code", "disease"]
    city_paths = ref.read_paths(FILES["city_birth"])
    amb = set(ref.ambiguous(city_paths))
    assert len(amb) == 686
    assert {r["city_birth"] for r in raw_rows} & amb == AMBIGUOUS_IN_DB
    for q in QIS:  # every data value is a leaf
        assert {r[q] for r in raw_rows} <= set(reference_hierarchies["first"][q])
    # heights: age file has 2 labels on top (0-50, 50-100) -> a root is added; city/zip have one top.
    assert {q: ref.height(reference_hierarchies["first"][q]) for q in QIS} == {
        "age": 4, "city_birth": 3, "zip_code": 5}


def test_city_file_refused_by_default_naming_values_and_lines():
    with pytest.raises(HierarchyError) as info:
        read_hierarchy(FILES["city_birth"])
    msg = str(info.value)
    assert "city_birth_generalization.csv" in msg
    assert "686 value(s)" in msg
    # San Giovanni: first three of its paths are on lines 3 (L'Aquila), 382 (Chieti), 586 (Teramo), 1310
    # (Catanzaro) -- `grep -n '^San Giovanni,' city_birth_generalization.csv`.
    assert "'San Giovanni' (lines 3, 382, 586, 1310" in msg
    assert "L'Aquila;Abruzzo;Italy vs Chieti;Abruzzo;Italy" in msg
    assert "lift" in msg and "first" in msg  # the resolutions are offered
    conflicts = {c.value: c for c in info.value.conflicts}
    assert len(conflicts) == 686
    assert AMBIGUOUS_IN_DB <= set(conflicts)
    assert conflicts["Sala"].lines == (1849, 3359, 16637, 17553)
    assert conflicts["Casanova"].lines == (2180, 5161, 5588)


@pytest.mark.parametrize("policy", ["lift", "first"])
def test_city_file_parses_with_a_resolution(policy, engine_hierarchies, reference_hierarchies):
    h = engine_hierarchies[policy]["city_birth"]
    expected = reference_hierarchies[policy]["city_birth"]
    assert h.height == 3
    assert len(h.leaves) == len(expected) == 16584
    assert any("686 ambiguous" in n for n in h.notes)
    for leaf in sorted(AMBIGUOUS_IN_DB) + ["None", "Cagnano Amiterno", "Capitignano"]:
        assert tuple(h.ancestor(leaf, lv) for lv in range(4)) == expected[leaf], leaf
    if policy == "lift":  # San Giovanni sits in several regions: only 'Italy' is common
        assert [h.ancestor("San Giovanni", lv) for lv in range(4)] == ["San Giovanni", "Italy", "Italy", "Italy"]
        # Casanova: Caserta (Campania), Genova and Savona (Liguria) -> lifted to Italy as well
        assert [h.ancestor("Casanova", lv) for lv in range(4)] == ["Casanova", "Italy", "Italy", "Italy"]
    else:
        assert [h.ancestor("San Giovanni", lv) for lv in range(4)] == [
            "San Giovanni", "L'Aquila", "Abruzzo", "Italy"]
        assert [h.ancestor("Sala", lv) for lv in range(4)] == ["Sala", "Avellino", "Campania", "Italy"]


def test_reference_lift_agrees_below_a_common_region():
    # Paths that share the region but not the province are lifted to the region.
    assert ref.lift_path([("Chieti", "Abruzzo", "Italy"), ("Teramo", "Abruzzo", "Italy")]) == (
        "Abruzzo", "Abruzzo", "Italy")
    assert ref.lift_path([("A", "X"), ("B", "Y")]) == ("*", "*")


def test_age_file_is_not_a_tree_and_says_where():
    # '0-20' sits under '0-50' on lines 1-5 and under '50-100' on lines 6-19 of the shipped file.
    with pytest.raises(HierarchyError) as err:
        read_hierarchy(FILES["age"])
    assert "'0-20' at level 2 has parents '0-50' (line 1), '50-100' (line 6)" in str(err.value)


def test_age_file_resolved_first_or_lifted_gets_a_root():
    h = read_hierarchy(FILES["age"], on_conflict="first")
    assert h.height == 4
    assert [h.ancestor("7", lv) for lv in range(5)] == ["7", "0-10", "0-20", "0-50", "*"]
    assert [h.ancestor("3", lv) for lv in range(5)] == ["3", "0-10", "0-20", "0-50", "*"]
    lifted = read_hierarchy(FILES["age"], on_conflict="lift")
    assert [lifted.ancestor("7", lv) for lv in range(5)] == ["7", "0-10", "0-20", "*", "*"]
    assert [lifted.ancestor("60", lv) for lv in range(5)] == [
        "60", *(h.ancestor("60", lv) for lv in range(1, 5))]


# ---- Datafly against the reference ------------------------------------------------------------------
CONFIGS = [
    (qis, policy)
    for qis in (["age", "city_birth", "zip_code"], ["age", "zip_code"], ["city_birth", "zip_code"], ["age"])
    for policy in (("lift", "first") if "city_birth" in qis else ("first",))
]


@pytest.mark.parametrize("qis,policy", CONFIGS, ids=lambda x: "+".join(x) if isinstance(x, list) else x)
@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("limit", [0.0, 0.03, 0.05, 0.1, 0.16, 0.2, 0.29])
def test_datafly_equals_reference(qis, policy, k, limit, raw_rows, frame, engine_hierarchies,
                                  reference_hierarchies):
    hier = reference_hierarchies[policy]
    try:
        expected = ref.datafly(raw_rows, qis, hier, k, limit)
    except ref.ReferenceUnsatisfiable:  # pragma: no cover - does not happen on this data
        pytest.fail("reference found no solution")
    table = _table(frame, qis)
    result = anonymize(table, engine_hierarchies[policy], k=k, suppression_limit=limit)

    assert result.transformation == expected["levels"]
    assert [s["levels"] for s in result.steps] == [s["levels"] for s in expected["steps"]]
    assert [s.get("generalized") for s in result.steps] == [s.get("generalized") for s in expected["steps"]]
    assert [s["distinct"] for s in result.steps] == [s["distinct"] for s in expected["steps"]]
    assert [s["records_in_failing_classes"] for s in result.steps] == [
        s["records_in_failing_classes"] for s in expected["steps"]]
    assert [s["equivalence_classes"] for s in result.steps] == [s["equivalence_classes"] for s in expected["steps"]]

    fig = ref.figures(raw_rows, expected, "disease")
    m = result.metrics
    assert m["suppressed"] == fig["suppressed"] == int(result.suppressed.sum())
    assert result.suppressed.tolist() == expected["suppressed"]
    assert m["equivalence_classes"] == fig["equivalence_classes"]
    assert m["min_class_size"] == fig["min_class_size"] == result.k_achieved
    assert m["homogeneous_classes"] == fig["homogeneous_classes"]
    assert m["homogeneous_records"] == fig["homogeneous_records"]
    assert m["discernibility"] == fig["discernibility"]
    assert fig["suppressed"] <= ref.budget(limit, 100)

    columns = ["age", "city_birth", "zip_code", "disease"]
    assert list(result.output.columns) == columns  # id removed
    got = [tuple(r) for r in result.output.itertuples(index=False)]
    assert got == ref.output_rows(raw_rows, columns, qis, expected)
    assert result.verified


# ---- literal expectations, cross-checked by the reference above -------------------------------------
@pytest.mark.parametrize("policy", ["lift", "first"])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_literal_results_without_suppression(k, policy, frame, engine_hierarchies):
    # 11 iterations: city, zip, zip, age, zip, city, zip, city, age (tie 10/10 with zip: age is
    # listed first), zip; ages end in the 20-year bands 0-20 ... 80-100.
    result = anonymize(_table(frame, QIS), engine_hierarchies[policy], k=k, suppression_limit=0)
    assert result.transformation == {"age": 2, "city_birth": 3, "zip_code": 5}
    assert [s.get("generalized") for s in result.steps] == [
        "city_birth", "zip_code", "zip_code", "age", "zip_code", "city_birth", "zip_code", "city_birth",
        "age", "zip_code", None]
    m = result.metrics
    assert (m["suppressed"], m["equivalence_classes"], m["min_class_size"]) == (0, 5, 17)
    assert (m["homogeneous_classes"], m["homogeneous_records"]) == (0, 0)
    assert m["discernibility"] == 2072
    # the five classes are the 20-year age bands; their sizes counted from the ages of db_100.csv with
    # awk '{c[int($1/20)]++}': 26, 17, 23, 17, 17 -> 676 + 289 + 529 + 289 + 289 = 2072
    assert Counter(result.output["age"]) == {"0-20": 26, "20-40": 17, "40-60": 23, "60-80": 17, "80-100": 17}
    assert set(result.output["city_birth"]) == {"Italy"}
    assert set(result.output["zip_code"]) == {"*****"}


@pytest.mark.parametrize("policy", ["lift", "first"])
def test_literal_result_k2_with_20_percent_suppression(policy, frame, engine_hierarchies):
    # Budget 20 records: at (age 2, city 3, zip 4) only 16 records sit in classes below 2 -> stop there.
    result = anonymize(_table(frame, QIS), engine_hierarchies[policy], k=2, suppression_limit=0.2)
    assert result.transformation == {"age": 2, "city_birth": 3, "zip_code": 4}
    m = result.metrics
    assert (m["suppressed"], m["equivalence_classes"], m["min_class_size"]) == (16, 27, 2)
    assert m["homogeneous_classes"] == 1
    assert m["discernibility"] == 1900


# ---- a larger table sampled from the hierarchies (datasets/README.md: "generate them by sampling") --
DISEASES = ["AIDS", "Alzheimer's disease", "Anorexia", "Autism", "Cancer", "Heart disease"]


@pytest.fixture(scope="module")
def sampled_rows(reference_hierarchies) -> list[dict]:
    rnd = random.Random(1)
    h = reference_hierarchies["first"]
    ages, cities, zips = (sorted(h[q]) for q in QIS)
    return [{"id": str(i + 1), "age": rnd.choice(ages), "city_birth": rnd.choice(cities),
             "zip_code": rnd.choice(zips), "disease": rnd.choice(DISEASES)} for i in range(2000)]


@pytest.mark.parametrize("policy", ["lift", "first"])
@pytest.mark.parametrize("k", [2, 5, 10, 20])
@pytest.mark.parametrize("limit", [0.0, 0.02, 0.05])
def test_datafly_equals_reference_on_2000_sampled_rows(policy, k, limit, sampled_rows, engine_hierarchies,
                                                       reference_hierarchies):
    frame = pd.DataFrame(sampled_rows, columns=["id", "age", "city_birth", "zip_code", "disease"])
    result = anonymize(_table(frame, QIS), engine_hierarchies[policy], k=k, suppression_limit=limit)
    expected = ref.datafly(sampled_rows, QIS, reference_hierarchies[policy], k, limit)
    assert result.transformation == expected["levels"]
    assert [s.get("generalized") for s in result.steps] == [s.get("generalized") for s in expected["steps"]]
    assert result.suppressed.tolist() == expected["suppressed"]
    fig = ref.figures(sampled_rows, expected, "disease")
    m = result.metrics
    for key in ("suppressed", "equivalence_classes", "min_class_size", "homogeneous_classes",
                "homogeneous_records", "discernibility"):
        assert m[key] == fig[key], key
    columns = ["age", "city_birth", "zip_code", "disease"]
    got = [tuple(r) for r in result.output.itertuples(index=False)]
    assert got == ref.output_rows(sampled_rows, columns, QIS, expected)
