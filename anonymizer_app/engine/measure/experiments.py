"""Built-in experiments: the seed-001 homogeneity analysis on generated people tables.

``generate_people(n, seed, hierarchy_dir)`` draws a people table (id, age, city_birth, zip_code,
disease) the size of the seed-001 tables: each QI value uniformly among the distinct leaves of its
generalization file (``age_generalization.csv`` etc., first column), the disease from the empirical
distribution of ``db_100.csv`` in the same folder; one numpy generator seeded with ``seed``.

``homogeneity_vs_k(table, hierarchies, k_values, ...)`` anonymizes the table once per k and counts,
per k, the equivalence classes, the homogeneous ones (a single sensitive value: the homogeneity
attack of seed 001) and the records they hold.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from ..errors import InputError
from ..model.formats import read_hierarchy
from ..model.hierarchy import Hierarchy
from ..model.persons import Persons
from ..model.table import Role, Table
from ..run.stages import anonymize

PEOPLE_QIS = ("age", "city_birth", "zip_code")
SENSITIVE = "disease"
DEMO_PEOPLE = Path(__file__).resolve().parents[2] / "demo_data" / "people"


def _leaves(path: Path) -> list[str]:
    with open(path, encoding="utf-8", newline="") as fh:
        first = [row[0].strip() for row in csv.reader(fh) if row and row[0].strip()]
    return list(dict.fromkeys(first))


def _folder(hierarchy_dir: str | Path | None) -> Path:
    folder = Path(hierarchy_dir) if hierarchy_dir is not None else DEMO_PEOPLE
    missing = [f"{q}_generalization.csv" for q in PEOPLE_QIS if not (folder / f"{q}_generalization.csv").is_file()]
    if not (folder / "db_100.csv").is_file():
        missing.append("db_100.csv")
    if missing:
        raise InputError(f"{folder}: missing {', '.join(missing)}")
    return folder


def generate_people(n: int, seed: int = 0, hierarchy_dir: str | Path | None = None) -> pd.DataFrame:
    """A people table of ``n`` rows sampled from the hierarchy leaves (see the module docstring)."""
    if int(n) < 1:
        raise InputError(f"the table needs at least one row, got {n}")
    folder = _folder(hierarchy_dir)
    rng = np.random.default_rng(int(seed))
    data: dict[str, object] = {"id": np.arange(1, int(n) + 1)}
    for q in PEOPLE_QIS:
        leaves = np.array(_leaves(folder / f"{q}_generalization.csv"), dtype=object)
        data[q] = leaves[rng.integers(0, len(leaves), int(n))]
    db = pd.read_csv(folder / "db_100.csv", dtype=str)
    freq = db[SENSITIVE].value_counts(sort=False)
    values = np.array(freq.index, dtype=object)
    data[SENSITIVE] = values[rng.choice(len(values), int(n), p=(freq / freq.sum()).to_numpy())]
    return pd.DataFrame(data)


def people_hierarchies(hierarchy_dir: str | Path | None = None) -> dict[str, Hierarchy]:
    """The three QI hierarchies (ambiguous city names keep their first path, as the exercise's files do)."""
    folder = _folder(hierarchy_dir)
    return {q: read_hierarchy(folder / f"{q}_generalization.csv", q, on_conflict="first") for q in PEOPLE_QIS}


def people_table(frame: pd.DataFrame) -> Table:
    roles = {"id": Role.IDENTIFYING, **{q: Role.QUASI_IDENTIFYING for q in PEOPLE_QIS}, SENSITIVE: Role.SENSITIVE}
    return Table(frame, roles)


def homogeneity_vs_k(
    table: Table,
    hierarchies: dict[str, Hierarchy] | None,
    k_values: Iterable[int],
    algorithm: str = "datafly",
    suppression_limit: float = 0.0,
    sensitive: str | None = None,
    scratch: str | None = None,
) -> list[dict]:
    """Per k: equivalence classes, homogeneous ECs and their records, smallest EC (k reached), seconds.
    ``scratch``: the folder for the runs' temporary files (RunSpec.scratch)."""
    if sensitive is None:
        if not table.sensitive:
            raise InputError("homogeneity needs a sensitive column")
        sensitive = table.sensitive[0]
    rows = []
    for k in k_values:
        started = time.perf_counter()
        r = anonymize(table, hierarchies, algorithm, k=int(k), suppression_limit=suppression_limit,
                      sensitive=sensitive, scratch=scratch)
        m = r.metrics
        sizes = r.class_sizes
        rows.append({
            "rows": table.n,
            "k": int(k),
            "algorithm": algorithm,
            "equivalence_classes": int(m["equivalence_classes"]),
            "homogeneous_classes": int(m["homogeneous_classes"]),
            "homogeneous_records": int(m["homogeneous_records"]),
            "homogeneous_share": float(m["homogeneous_classes"] / max(m["equivalence_classes"], 1)),
            "k_reached": int(sizes.min()) if len(sizes) else 0,
            "suppressed": int(m["suppressed"]),
            "transformation": ",".join(f"{c}={v}" for c, v in (r.transformation or {}).items()),
            "seconds": round(time.perf_counter() - started, 4),
            "counted": "records",
        })
        if table.person is not None:  # the run counted persons: k reached and the homogeneous share per person
            rows[-1].update(_person_figures(table, sensitive, np.asarray(r.class_of_row)))
    return rows


def _person_figures(table: Table, sensitive: str, class_of_row: np.ndarray) -> dict:
    """With a person id (the run counts persons against the adversary who knows one class, the default): the
    smallest number of distinct persons in a published class (k reached, per person) and the distinct persons
    with a record in a homogeneous class (one sensitive value among the class's records)."""
    column = table.person
    assert column is not None
    persons = Persons.of(table.frame[column], column)
    published = class_of_row >= 0
    frame = pd.DataFrame({"c": class_of_row[published], "p": persons.codes[published],
                          "s": table.frame[sensitive].astype(str).to_numpy()[published]})
    groups = frame.groupby("c")
    per_class, records, values = groups["p"].nunique(), groups.size(), groups["s"].nunique()
    homogeneous = values[values == 1].index
    return {"counted": "persons", "person_id": column, "persons": int(persons.count),
            "k_reached": int(per_class.min()) if len(per_class) else 0,
            "k_reached_records": int(records.min()) if len(records) else 0,
            "homogeneous_persons": int(frame.loc[frame["c"].isin(homogeneous), "p"].nunique())}
