"""Risk per person (engine/measure/risk/persons.py) against plain-Python counting over small tables: for every
published person p, the persons q with S(p) ⊆ S(q), and every figure read from them (definitions.md, "The unit
counted: the person", **Risk per person**)."""

from __future__ import annotations

import random
import time

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table
from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.measure.risk import persons as person_risk
from anonymizer_app.engine.measure.risk.persons import person_risks, person_sets
from anonymizer_app.engine.measure.risk.uniqueness import population_uniqueness
from anonymizer_app.engine.model.hierarchy import Hierarchy
from anonymizer_app.engine.privacy import KAnonymity
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec


def brute(row_class: list[int], person: list[int], threshold: float) -> dict:
    """Every figure by sets and loops, nothing shared with the code under test."""
    sets: dict[int, set[int]] = {}
    for c, p in zip(row_class, person):
        if c >= 0:
            sets.setdefault(p, set()).add(c)
    members: dict[int, set[int]] = {}
    for p, cs in sets.items():
        for c in cs:
            members.setdefault(c, set()).add(p)
    sharing = {p: sum(1 for q in sets if sets[p] <= sets[q]) for p in sets}
    n = len(sets)
    risks = [1 / s for s in sharing.values()]
    sizes = [len(m) for m in members.values()]
    hist: dict[int, int] = {}
    for s in sizes:
        hist[s] = hist.get(s, 0) + 1
    return {
        "sharing": sharing, "persons": n, "equivalence_classes": len(members),
        "min_class_persons": min(sizes) if sizes else 0, "hist": hist,
        "sample_uniques": sum(1 for s in sharing.values() if s == 1),
        "prosecutor_risk_highest": max(risks) if risks else 0.0,
        "prosecutor_risk_average": sum(risks) / n if n else 0.0,
        "persons_at_risk": sum(1 for r in risks if r > threshold),
        "marketer_risk": len({frozenset(cs) for cs in sets.values()}) / n if n else 0.0,
        "persons_in_several_classes": sum(1 for cs in sets.values() if len(cs) > 1),
    }


def check(row_class: list[int], person: list[int], threshold: float = 0.2) -> dict:
    expected = brute(row_class, person, threshold)
    got = person_risks(np.array(row_class), np.array(person), threshold)
    sets = person_sets(np.array(row_class), np.array(person))
    assert {int(p): int(s) for p, s in zip(sets.person, sets.sharing)} == expected["sharing"]
    for key in ("persons", "equivalence_classes", "min_class_persons", "sample_uniques", "persons_at_risk",
                "persons_in_several_classes"):
        assert got[key] == expected[key], key
    for key in ("prosecutor_risk_highest", "prosecutor_risk_average", "marketer_risk"):
        assert got[key] == pytest.approx(expected[key]), key
    assert got["class_size_histogram"] == {str(k): v for k, v in expected["hist"].items()}
    assert sum(b["persons"] for b in got["risk_bands"]) == expected["persons"]
    return got


def test_the_worked_example_of_the_definitions():
    # A and B each in c1 and c2, C only in c1, D only in c2: |c1|p = |c2|p = 3, but only A and B hold {c1, c2}
    rows = [(1, "A"), (2, "A"), (1, "B"), (2, "B"), (1, "C"), (2, "D")]
    code = {"A": 0, "B": 1, "C": 2, "D": 3}
    got = check([c for c, _ in rows], [code[p] for _, p in rows])
    sets = person_sets(np.array([c for c, _ in rows]), np.array([code[p] for _, p in rows]))
    assert dict(zip(sets.person.tolist(), sets.sharing.tolist())) == {0: 2, 1: 2, 2: 3, 3: 3}
    assert got["min_class_persons"] == 3
    assert got["prosecutor_risk_highest"] == 0.5  # A: 1 of A, B
    assert got["prosecutor_risk_average"] == pytest.approx((0.5 + 0.5 + 1 / 3 + 1 / 3) / 4)
    assert got["marketer_risk"] == 3 / 4  # signatures {c1, c2}, {c1}, {c2}
    assert got["persons_at_risk"] == 4  # 1/2 and 1/3 are both above 0.2


def test_one_patient_three_times_is_one_person():
    # five records of one class: P1 three times, P2 and P3 once: 3 persons, each risk 1/3
    got = check([0, 0, 0, 0, 0], [1, 1, 1, 2, 3])
    assert got["persons"] == 3 and got["min_class_persons"] == 3
    assert got["prosecutor_risk_highest"] == pytest.approx(1 / 3)
    assert got["sample_uniques"] == 0


def test_suppressed_rows_and_persons_left_out():
    # person 4's only record is suppressed: 3 published persons; person 2 keeps only its published record
    got = check([0, -1, 0, 1, -1, 1], [1, 2, 2, 3, 4, 3])
    assert got["persons"] == 3
    assert got["sample_uniques"] == 1  # person 3 alone in class 1


def test_nothing_published():
    got = person_risks(np.array([-1, -1]), np.array([0, 1]), 0.2)
    assert got["persons"] == 0 and got["prosecutor_risk_highest"] == 0.0 and got["equivalence_classes"] == 0
    assert set(got) >= set(person_risks(np.array([0]), np.array([0]), 0.2)) - {"population"}


def test_threshold_is_checked():
    with pytest.raises(InputError):
        person_risks(np.array([0]), np.array([0]), 0.0)


@pytest.mark.parametrize("seed", range(40))
def test_random_tables_equal_brute_force(seed):
    rnd = random.Random(seed)
    n_rows = rnd.randint(1, 60)
    n_classes = rnd.randint(1, 8)
    n_persons = rnd.randint(1, 25)
    row_class = [rnd.randrange(-1, n_classes) for _ in range(n_rows)]
    person = [rnd.randrange(n_persons) * 7 + 3 for _ in range(n_rows)]  # codes need not be dense
    if all(c < 0 for c in row_class):
        row_class[0] = 0
    check(row_class, person, threshold=rnd.choice([0.2, 0.1, 0.5, 1.0]))


def test_small_chunks_give_the_same_counts(monkeypatch):
    rnd = random.Random(7)
    row_class = [rnd.randrange(6) for _ in range(300)]
    person = [rnd.randrange(60) for _ in range(300)]
    monkeypatch.setattr(person_risk, "CHUNK_PAIRS", 3)
    check(row_class, person)


def test_a_hash_collision_is_split_exactly(monkeypatch):
    # every class hashed to 0: all sets of one size collide, the exact check must split them
    rows = [(0, 0), (1, 0), (0, 1), (2, 1), (1, 2), (2, 2), (0, 3), (1, 3)]

    class Zero:
        def __init__(self, *_):
            pass

        def integers(self, low, high, size, dtype):
            return np.zeros(size, dtype=dtype)

    monkeypatch.setattr(person_risk.np.random, "default_rng", Zero)
    check([c for c, _ in rows], [p for _, p in rows])


def test_population_figures_use_the_class_sizes_in_persons():
    # classes in persons: {0: 1 person}, {1: 2 persons}, {2: 3 persons}; records 2, 5 and 3
    row_class = [0, 0, 1, 1, 1, 1, 1, 2, 2, 2]
    person = [0, 0, 1, 1, 2, 2, 2, 3, 4, 5]
    got = person_risks(np.array(row_class), np.array(person), 0.2, sampling_fraction=0.1)
    assert got["population"] == {"size": 60, "sampling_fraction": 0.1}
    expected = population_uniqueness({1: 1, 2: 1, 3: 1}, 60, 0.1)
    assert got["population_uniqueness"]["dankar"] == expected["dankar"]
    # journalist: each person's sharing count over 0.1 (1, 2, 2, 3, 3, 3 persons -> 10, 20, 20, 30, 30, 30)
    assert got["journalist_risk_highest"] == pytest.approx(1 / 10)
    assert got["journalist_risk_average"] == pytest.approx((1 / 10 + 2 * (1 / 20) + 3 * (1 / 30)) / 6)
    assert got["journalist_persons_at_risk"] == 0
    sized = person_risks(np.array(row_class), np.array(person), 0.2, population_size=600)
    assert sized["population"] == {"size": 600, "sampling_fraction": 0.01}


def test_a_million_rows_of_300k_persons_in_seconds():
    rng = np.random.default_rng(1)
    n, persons, classes = 1_000_000, 300_000, 20_000
    person = rng.integers(0, persons, n)
    # a person's records fall in few classes: a home class, and now and then another one
    home = rng.integers(0, classes, persons)
    row_class = np.where(rng.random(n) < 0.7, home[person], rng.integers(0, classes, n))
    row_class[rng.random(n) < 0.02] = -1
    start = time.perf_counter()
    got = person_risks(row_class, person, 0.2)
    seconds = time.perf_counter() - start
    assert got["persons"] > 280_000
    assert seconds < 20, seconds


def test_the_report_counts_persons_beside_records():
    # P1 has three records (two zips); the run's report counts the published classes in persons, recounted here
    frame = pd.DataFrame({"patient": ["P1", "P1", "P1", "P2", "P3", "P4", "P5", "P6"],
                          "age": ["31", "35", "38", "33", "39", "31", "35", "38"],
                          "zip": ["13053", "13068", "13053", "13068", "13053", "13068", "13053", "13068"],
                          "disease": ["flu", "flu", "hiv", "flu", "hiv", "flu", "hiv", "flu"]})
    table = Table(frame, {"patient": "person id", "age": "qi", "zip": "qi", "disease": "sensitive"})
    hierarchies = {"age": Hierarchy.from_rows([[a, "30-39", "*"] for a in ("31", "33", "35", "38", "39")], "age"),
                   "zip": Hierarchy.from_rows([[z, "130**", "*"] for z in ("13053", "13068")], "zip")}
    spec = RunSpec.build(table, hierarchies, "flash", models=[KAnonymity(3)], suppression_limit=0.0, options={},
                         sensitive="disease")
    publication = pipeline.run(spec)
    report = dict(publication.report)
    persons = report["persons"]
    assert persons["column"] == "patient" and persons["persons"] == 6 and persons["published"] == 6
    # brute force over the published rows: distinct patients per published (age, zip) class
    published = publication.table
    classes: dict[tuple, set] = {}
    records: dict[tuple, int] = {}
    for (_, row), patient in zip(published.iterrows(), frame["patient"]):
        key = (row["age"], row["zip"])
        classes.setdefault(key, set()).add(patient)
        records[key] = records.get(key, 0) + 1
    smallest = min(classes, key=lambda c: len(classes[c]))
    assert persons["min_class_persons"] == len(classes[smallest]) >= 3
    assert persons["min_class_records"] == records[smallest]
    assert persons["class_size_histogram"] == {str(len(ps)): sum(1 for q in classes.values() if len(q) == len(ps))
                                               for ps in classes.values()}
    k_check = next(c for c in persons["model_checks"] if c["model"] == "k-anonymity")
    assert k_check["holds"] and k_check["value"] == len(classes[smallest])
    assert persons["risk"]["persons"] == 6
    # each patient's set of classes, and the patients whose sets include it (the adversary knows all records)
    sets: dict[str, set] = {}
    for (_, row), patient in zip(published.iterrows(), frame["patient"]):
        sets.setdefault(patient, set()).add((row["age"], row["zip"]))
    sharing = [sum(1 for q in sets.values() if s <= q) for s in sets.values()]
    assert persons["risk"]["prosecutor_risk_highest"] == pytest.approx(1 / min(sharing))
    assert persons["risk"]["prosecutor_risk_average"] == pytest.approx(sum(1 / s for s in sharing) / len(sharing))
    assert report["risk"]["records"] == 8  # the record-level figures stay beside them
