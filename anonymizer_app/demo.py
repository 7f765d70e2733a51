"""The demo datasets (Adult and the people table) with their hierarchies, for one user."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from hierarchy_editor.models import Hierarchy

from .engine import Role
from .models import Dataset
from .services.datasets import create_dataset

DEMO_DIR = Path(__file__).resolve().parent / "demo_data"

# name, file, roles, {column: (hierarchy file, conflict resolution)}
DEMOS = [
    (
        "Adult (UCI census, 30,162 rows)",
        "adult/adult.csv",
        {"occupation": Role.SENSITIVE, **{c: Role.QUASI_IDENTIFYING for c in (
            "sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class")}},
        {c: (f"adult/adult_hierarchy_{c}.csv", "error") for c in (
            "sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation",
            "salary-class")},
    ),
    (
        "People (Datafly exercise, 100 rows)",
        "people/db_100.csv",
        {"id": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "city_birth": Role.QUASI_IDENTIFYING,
         "zip_code": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE},
        {"age": ("people/age_generalization.csv", "first"),
         "city_birth": ("people/city_birth_generalization.csv", "lift"),
         "zip_code": ("people/zip_code_generalization.csv", "error")},
    ),
]


def load_demo(user) -> list[Dataset]:
    """Create the demo datasets for ``user`` (again, if asked twice: each load is independent)."""
    created = []
    for name, file, roles, hierarchies in DEMOS:
        with transaction.atomic():
            path = DEMO_DIR / file
            dataset = create_dataset(user, path.read_bytes(), path.name, name=name, is_demo=True)
            for column in dataset.columns.all():
                column.role = roles.get(column.name, Role.INSENSITIVE).value
                if column.name in hierarchies:
                    hfile, policy = hierarchies[column.name]
                    hpath = DEMO_DIR / hfile
                    h = Hierarchy.from_text(user, f"{column.name} ({dataset.name})",
                                            hpath.read_text(encoding="utf-8"), hpath.name, on_conflict=policy)
                    h.save()
                    column.hierarchy = h
                column.save()
            created.append(dataset)
    return created
