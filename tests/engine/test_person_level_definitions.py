"""The worked examples of docs/definitions.md, "The unit counted: the person" (issue 28, "Done when": a worked
example where record-level 5-anonymity holds and person-level does not, and the product refuses to call it
5-anonymous per person).

The expected figures are counted here in plain Python from the definitions (records and distinct persons per
class, S(p) ⊆ S(q) for the all-records adversary); the product is then asked to publish the same release.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from anonymizer_app.engine import InputError, Table, UnsatisfiableError, VerificationError
from anonymizer_app.engine.model.hierarchy import Hierarchy
from anonymizer_app.engine.model.table import Role
from anonymizer_app.engine.privacy import KAnonymity
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.gate import publish
from anonymizer_app.engine.run.result import verify_output
from anonymizer_app.engine.run.spec import RunSpec

# ---- five records of one class (age 30–39, ZIP 130**): P1 three times, P2 and P3 once each ----------------------
FIVE = pd.DataFrame({
    "patient": ["P1", "P1", "P1", "P2", "P3"],
    "age": ["31", "35", "37", "33", "39"],
    "zip": ["13053", "13068", "13053", "13061", "13068"],
    "test": ["glucose", "hba1c", "lipids", "glucose", "lipids"],
})
AGE = [[a, "30-39", "*"] for a in ("31", "33", "35", "37", "39")]
ZIP = [[z, "130**", "*"] for z in ("13053", "13061", "13068")]


def _five_hierarchies() -> dict[str, Hierarchy]:
    return {"age": Hierarchy.from_rows(AGE, "age"), "zip": Hierarchy.from_rows(ZIP, "zip")}


def _five_table(patient_role: Role) -> Table:
    return Table(FIVE, {"patient": patient_role, "age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
                        "test": Role.INSENSITIVE})


def _classes(frame: pd.DataFrame, qi: list[str], person: str) -> dict[tuple, tuple[int, set]]:
    """Plain counting: per class (its QI cells) its records and its distinct persons."""
    out: dict[tuple, tuple[int, set]] = {}
    for row in frame.to_dict("records"):
        key = tuple(row[q] for q in qi)
        records, persons = out.get(key, (0, set()))
        persons.add(row[person])
        out[key] = (records + 1, persons)
    return out


def _generalize(frame: pd.DataFrame, rows: dict[str, list[list[str]]], levels: dict[str, int]) -> pd.DataFrame:
    out = frame.copy()
    for q, lv in levels.items():
        path = {r[0]: r for r in rows[q]}
        out[q] = [path[v][lv] for v in frame[q]]
    return out


def test_the_worked_example_counted_by_hand():
    published = _generalize(FIVE, {"age": AGE, "zip": ZIP}, {"age": 1, "zip": 1})
    classes = _classes(published, ["age", "zip"], "patient")
    assert list(classes) == [("30-39", "130**")]
    records, persons = classes[("30-39", "130**")]
    assert records == 5  # record-level 5-anonymity holds
    assert persons == {"P1", "P2", "P3"}  # per person: 3 < 5, 3-anonymity holds


def test_record_level_publishes_it_as_5_anonymous():
    """With the patient column an ordinary identifier the product counts records: one class of 5, published."""
    pub = pipeline.run(RunSpec.build(_five_table(Role.IDENTIFYING), _five_hierarchies(), "flash", k=5))
    assert pub.result.transformation == {"age": 1, "zip": 1}
    assert len(pub.table) == 5 and "patient" not in pub.table.columns
    assert set(map(tuple, pub.table[["age", "zip"]].to_numpy())) == {("30-39", "130**")}


def test_the_gate_refuses_that_release_as_5_anonymous_per_person():
    """The same release (its result claims 5-anonymity) published under a spec whose table has the person id
    `patient`: the gate recounts persons from the published rows and refuses, saying "per person"."""
    hierarchies = _five_hierarchies()
    record_level = pipeline.run(RunSpec.build(_five_table(Role.IDENTIFYING), hierarchies, "flash", k=5)).result
    assert record_level is not None and record_level.k == 5
    per_person = _five_table(Role.PERSON)
    spec = RunSpec.build(per_person, hierarchies, "flash", k=5)
    with pytest.raises(VerificationError, match="per person") as refused:
        publish(record_level, spec, per_person, record_level.hierarchies)
    assert "patient" in str(refused.value) and "3 person" in str(refused.value)
    # verification from the output rows says the same
    with pytest.raises(VerificationError, match="per person"):
        verify_output(per_person, record_level.hierarchies, record_level.output, record_level.suppressed,
                      list(record_level.models), 0.0, None, record_level.transformation)


@pytest.mark.parametrize("algorithm", ["flash", "exhaustive", "incognito", "samarati", "datafly"])
def test_a_person_level_run_does_not_call_it_5_anonymous(algorithm):
    """Asked for k = 5 with the person id, no algorithm publishes: the table has 3 persons (even suppressing
    within a limit below all of them); k = 3 per person is published, the same one class."""
    per_person = _five_table(Role.PERSON)
    hierarchies = _five_hierarchies()
    for limit in (0.0, 0.5):
        with pytest.raises(InputError, match="3 persons"):
            pipeline.run(RunSpec.build(per_person, hierarchies, algorithm, k=5, suppression_limit=limit))
    pub = pipeline.run(RunSpec.build(per_person, hierarchies, algorithm, k=3))
    assert pub.result.transformation == {"age": 1, "zip": 1}
    assert pub.result.persons["persons"] == 3 and pub.result.persons["suppressed"] == 0
    assert "patient" not in pub.table.columns


def test_publishing_the_node_as_a_chosen_transformation_is_refused():
    """The lattice view's "publish this node" (pipeline.publish_levels: the full-domain algorithm at levels 1,1)
    never publishes the node as 5-anonymous per person: refused by name (it does not count persons) or as
    unsatisfiable per person."""
    spec = RunSpec.build(_five_table(Role.PERSON), _five_hierarchies(), "flash", k=5)
    with pytest.raises((InputError, UnsatisfiableError, VerificationError)):
        pipeline.publish_levels(spec, "1,1")


def test_a_5_anonymity_claim_with_every_person_suppressible_publishes_no_record():
    """With a limit that may suppress all 3 persons the run is not refused up front; 5 persons per class cannot
    hold on this table, so every person is suppressed with all their records and no row leaves."""
    pub = pipeline.run(RunSpec.build(_five_table(Role.PERSON), _five_hierarchies(), "flash", k=5,
                                     suppression_limit=1.0))
    assert len(pub.table) == 0
    assert pub.result.persons["suppressed"] == 3 and pub.result.persons["published"] == 0


# ---- the all-records adversary: A and B in c1 and c2, C only in c1, D only in c2 ---------------------------------
FOUR = pd.DataFrame({"person": ["A", "A", "B", "B", "C", "D"],
                     "ward": ["c1", "c2", "c1", "c2", "c1", "c2"]})
WARD = [["c1", "*"], ["c2", "*"]]


def _four(spec_adversary: str, k: int, algorithm: str = "flash") -> RunSpec:
    table = Table(FOUR, {"person": Role.PERSON, "ward": Role.QUASI_IDENTIFYING})
    spec = RunSpec.build(table, {"ward": Hierarchy.from_rows(WARD, "ward")}, algorithm, k=k)
    return replace(spec, person_adversary=spec_adversary)


def _shared(frame: pd.DataFrame) -> dict[str, int]:
    """Per person p: |{q : S(p) ⊆ S(q)}| with S the set of classes holding a record of the person."""
    signature: dict[str, set] = {}
    for person, ward in zip(frame["person"], frame["ward"]):
        signature.setdefault(person, set()).add(ward)
    return {p: sum(1 for theirs in signature.values() if mine <= theirs) for p, mine in signature.items()}


def test_the_all_records_example_counted_by_hand():
    classes = _classes(FOUR, ["ward"], "person")
    assert classes[("c1",)][1] == {"A", "B", "C"} and classes[("c2",)][1] == {"A", "B", "D"}
    assert min(len(p) for _, p in classes.values()) == 3  # 3-anonymity per class holds
    shared = _shared(FOUR)
    assert shared == {"A": 2, "B": 2, "C": 3, "D": 3}  # S(A) = {c1, c2}: A and B only
    assert min(shared.values()) == 2  # against all-records k = 3 fails, k = 2 holds


@pytest.mark.parametrize("algorithm", ["flash", "exhaustive", "incognito", "samarati", "datafly"])
def test_the_all_records_adversary_in_the_product(algorithm):
    # per class k = 3 holds on the wards as they are
    assert pipeline.run(_four("class", 3, algorithm)).result.transformation == {"ward": 0}
    # against all of a person's records k = 3 does not: the wards are generalized to one class of 4 persons
    pub = pipeline.run(_four("all-records", 3, algorithm))
    assert pub.result.transformation == {"ward": 1}
    assert set(pub.table["ward"]) == {"*"} and len(pub.table) == 6
    # k = 2 holds against all records: the wards stay
    assert pipeline.run(_four("all-records", 2, algorithm)).result.transformation == {"ward": 0}


def test_the_gate_refuses_the_per_class_release_against_the_all_records_adversary():
    class_level = pipeline.run(_four("class", 3)).result
    spec = _four("all-records", 3)
    # a result searched against another adversary is refused as it is
    with pytest.raises(VerificationError, match="adversary"):
        publish(class_level, spec, spec.table, class_level.hierarchies)
    # and its rows, rechecked against the all-records adversary, fail for A and B (2 persons share their classes)
    with pytest.raises(VerificationError, match="all of a person's records") as refused:
        verify_output(spec.table, class_level.hierarchies, class_level.output, class_level.suppressed,
                      [KAnonymity(3)], 0.0, None, class_level.transformation, adversary="all-records")
    assert "2 person(s)" in str(refused.value) and "fewest: 2" in str(refused.value)
    verify_output(spec.table, class_level.hierarchies, class_level.output, class_level.suppressed,
                  [KAnonymity(2)], 0.0, None, class_level.transformation, adversary="all-records")
