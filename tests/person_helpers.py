"""What the person-id tests of the entry points share (web, API, CLI, policies): a small longitudinal table (a patient
id that repeats across a patient's tests) and an independent count of persons per published class, in plain Python
over the published rows, their dataset row numbers and the person column of the input."""

from __future__ import annotations

import csv
import io
import random
from collections import defaultdict

FIRST = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal", "Ida", "Jon", "Kim", "Lea", "Max", "Ned"]
LAST = ["Stark", "Lannister", "Tully", "Arryn", "Tyrell", "Martell", "Greyjoy", "Baratheon", "Frey", "Bolton"]


def patients_csv(persons: int = 60, seed: int = 3, names: bool = False) -> str:
    """Lab tests of ``persons`` patients, 1 to 4 each: patient_id repeats across a patient's tests; age, sex and
    zip are the patient's own (the same on every test); result varies per test. ``names``: first and last name
    columns too (fake, from two short lists)."""
    rng = random.Random(seed)
    header = ["patient_id", *(["first_name", "last_name"] if names else []), "age", "sex", "zip", "result"]
    lines = [",".join(header)]
    for p in range(persons):
        age, sex, zip_code = rng.randint(20, 79), rng.choice(["f", "m"]), rng.choice(["13053", "13068", "14850"])
        first, last = rng.choice(FIRST), rng.choice(LAST)
        for _ in range(rng.randint(1, 4)):
            cells = [f"P{p:04d}", *([first, last] if names else []), str(age), sex, zip_code,
                     rng.choice(["negative", "positive"])]
            lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def input_column(text: str, column: str) -> list[str]:
    """A column of a CSV text, one value per data row."""
    return [row[column] for row in csv.DictReader(io.StringIO(text))]


def persons_per_class(published: list[tuple], rows: list[int], person: list[str]) -> dict[tuple, set[str]]:
    """Published QI tuple -> the distinct persons among its rows (``rows``: the dataset row of each published
    row; ``person``: the person id of each dataset row)."""
    out: dict[tuple, set[str]] = defaultdict(set)
    for values, row in zip(published, rows):
        out[values].add(person[row])
    return out
