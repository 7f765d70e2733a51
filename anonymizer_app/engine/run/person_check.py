"""Privacy models counted per person on released classes (definitions.md, "The unit counted: the person"): what
verification and the publishing gate recheck when a table has a person id. Recounted here from the rows, the
classes and the person column with pandas, sharing nothing with the search's counting (engine/search/persons.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import numpy as np
import pandas as pd

from ..errors import VerificationError
from ..model.persons import Persons
from ..model.table import Table
from .research import Verdict


def persons_of(table: Table) -> Persons | None:
    """The table's persons (its person-id column), None without one; read once per table (the column is input)."""
    column = table.person
    if column is None:
        return None
    found = table.derived.get(("persons", column))
    if found is None:
        found = table.derived[("persons", column)] = Persons.of(table.frame[column], column)
    return found


def _distinct(*columns: np.ndarray) -> list[np.ndarray]:
    """The distinct rows of small non-negative int columns, as columns (one int64 key when it fits)."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    radices = [int(c.max()) + 1 if len(c) else 1 for c in columns]
    if float(np.prod(np.array(radices, dtype=float))) >= 2.0**62:
        frame = pd.DataFrame({i: c for i, c in enumerate(columns)}).drop_duplicates()
        return [frame[i].to_numpy(dtype=np.int64) for i in range(len(columns))]
    for c, r in zip(columns, radices):
        key = key * r + c
    key = np.sort(key)  # distinct by a sort (numpy's hash-based unique is far slower on a million keys)
    key = key[np.r_[True, key[1:] != key[:-1]]] if len(key) else key
    out = []
    for r in reversed(radices):
        out.append(key % r)
        key = key // r
    return out[::-1]


def class_persons(row_class: np.ndarray, persons: Persons, n_classes: int) -> np.ndarray:
    """Distinct persons per class, from (class, person) pairs of the released rows."""
    kept = np.asarray(row_class) >= 0
    cls, _ = _distinct(np.asarray(row_class)[kept], persons.codes[kept])
    return np.bincount(cls, minlength=n_classes).astype(np.int64)


def person_domain(dom, persons: Persons):
    """The domain with its table distribution over (person, value) pairs, each counted once."""
    _, values = _distinct(persons.codes, np.asarray(dom.codes, dtype=np.int64))
    return replace(dom, table_counts=np.bincount(values, minlength=dom.m).astype(np.int64))


def value_persons(row_class: np.ndarray, persons: Persons, dom, n_classes: int) -> np.ndarray:
    """classes x values: the distinct persons of each class with a record of each value."""
    kept = np.asarray(row_class) >= 0
    cls, _, values = _distinct(np.asarray(row_class)[kept], persons.codes[kept],
                               np.asarray(dom.codes, dtype=np.int64)[kept])
    return np.bincount(cls * dom.m + values, minlength=n_classes * dom.m).reshape(n_classes, dom.m).astype(np.int64)


def person_verdicts(models, row_class: np.ndarray, persons: Persons, n_classes: int,
                    domain_of: Callable[[object], object]) -> Iterator[Verdict]:
    """Every model on the released classes, counting persons."""
    sizes = class_persons(row_class, persons, n_classes)
    for model in models:
        if getattr(model, "needs_sensitive", False):
            dom = person_domain(domain_of(model), persons)
            counts = value_persons(row_class, persons, dom, n_classes)
            failing = model.classes_failing(sizes, counts, dom)
            yield Verdict(model, np.asarray(failing, dtype=bool), sizes, counts, dom)
        else:
            yield Verdict(model, np.asarray(model.classes_failing(sizes), dtype=bool), sizes, None, None)


def all_records_shortfall(row_class: np.ndarray, persons: Persons, k: int) -> list[tuple[int, int]]:
    """Against an adversary who knows all of a person's records: (person code, persons sharing all its classes) of
    every released person with records in several classes shared by fewer than k persons."""
    kept = np.asarray(row_class) >= 0
    pairs = pd.DataFrame({"c": np.asarray(row_class)[kept], "p": persons.codes[kept]}).drop_duplicates()
    classes_of = pairs.groupby("p")["c"].agg(frozenset)
    members = pairs.groupby("c")["p"].agg(set).to_dict()
    short: list[tuple[int, int]] = []
    for person, classes in zip(classes_of.index.to_numpy(dtype=np.int64).tolist(), classes_of.tolist()):
        if len(classes) < 2:
            continue
        shared = set.intersection(*(members[c] for c in classes))
        if len(shared) < k:
            short.append((person, len(shared)))
    return short


def check_person_models(models, row_class: np.ndarray, persons: Persons, n_classes: int,
                        domain_of: Callable[[object], object], adversary: str) -> None:
    """VerificationError naming the first model that fails when persons are counted."""
    for verdict in person_verdicts(models, row_class, persons, n_classes, domain_of):
        if verdict.failing.any():
            counted = verdict.sizes[verdict.failing]
            raise VerificationError(
                f"{verdict.model.describe()} does not hold per person (person id {persons.column!r}): "
                f"{int(verdict.failing.sum())} equivalence class(es) fail, the smallest has {int(counted.min())} "
                f"person(s)")
    if adversary == "all-records":
        k = max((int(getattr(m, "k", 1)) for m in models), default=1)
        short = all_records_shortfall(row_class, persons, k)
        if short:
            raise VerificationError(
                f"{k}-anonymity against an adversary who knows all of a person's records does not hold (person id "
                f"{persons.column!r}): {len(short)} person(s) share their classes with fewer than {k} persons "
                f"(the fewest: {min(n for _, n in short)})")


def check_person_suppression(suppressed: np.ndarray, persons: Persons, limit: float) -> None:
    """A person's records are suppressed together, and the persons suppressed are within the limit."""
    suppressed = np.asarray(suppressed, dtype=bool)
    gone = np.zeros(persons.count, dtype=bool)
    gone[persons.codes[suppressed]] = True
    split = gone[persons.codes] & ~suppressed
    if split.any():
        raise VerificationError(f"row {int(np.argmax(split)) + 1}: a record of a suppressed person is published "
                                f"(person id {persons.column!r}); a person's records are suppressed together")
    budget = int(np.floor(limit * persons.count + 1e-9))
    if int(gone.sum()) > budget:
        raise VerificationError(f"{int(gone.sum())} persons suppressed, more than the limit of {budget}")
