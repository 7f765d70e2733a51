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
    """The table's persons (its person-id column), None without one."""
    column = table.person
    return None if column is None else Persons.of(table.frame[column], column)


def class_persons(row_class: np.ndarray, persons: Persons, n_classes: int) -> np.ndarray:
    """Distinct persons per class, from (class, person) pairs of the released rows."""
    kept = np.asarray(row_class) >= 0
    pairs = pd.DataFrame({"c": np.asarray(row_class)[kept], "p": persons.codes[kept]}).drop_duplicates()
    return pairs["c"].value_counts().reindex(range(n_classes), fill_value=0).to_numpy(dtype=np.int64)


def person_domain(dom, persons: Persons):
    """The domain with its table distribution over (person, value) pairs, each counted once."""
    pairs = pd.DataFrame({"p": persons.codes, "v": np.asarray(dom.codes)}).drop_duplicates()
    return replace(dom, table_counts=np.bincount(pairs["v"].to_numpy(), minlength=dom.m).astype(np.int64))


def value_persons(row_class: np.ndarray, persons: Persons, dom, n_classes: int) -> np.ndarray:
    """classes x values: the distinct persons of each class with a record of each value."""
    kept = np.asarray(row_class) >= 0
    triples = pd.DataFrame({"c": np.asarray(row_class)[kept], "p": persons.codes[kept],
                            "v": np.asarray(dom.codes)[kept]}).drop_duplicates()
    counts = np.zeros((n_classes, dom.m), dtype=np.int64)
    np.add.at(counts, (triples["c"].to_numpy(), triples["v"].to_numpy()), 1)
    return counts


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
    for person, classes in classes_of.items():
        if len(classes) < 2:
            continue
        shared = set.intersection(*(members[c] for c in classes))
        if len(shared) < k:
            short.append((int(person), len(shared)))
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
