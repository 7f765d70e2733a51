"""Adult split in two halves and a run on half 1, shared by the policy tests (test_policies_*.py)."""

from __future__ import annotations

from pathlib import Path

from anonymizer_app.engine import Role
from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import datasets, jobs
from hierarchy_editor.models import Hierarchy

ADULT_QI = ("sex", "age", "race", "marital-status", "education")


def adult_halves(shared: Path) -> tuple[bytes, bytes]:
    """The Adult table's rows split at the middle, each half with the header (the file's ';' layout)."""
    lines = (shared / "adult" / "adult.csv").read_text(encoding="utf-8").splitlines()
    head, body = lines[0], lines[1:]
    n = len(body) // 2
    return (("\n".join([head, *body[:n]]) + "\n").encode(), ("\n".join([head, *body[n:]]) + "\n").encode())


def adult_dataset(owner, data: bytes, shared: Path, name: str, configure: bool = True) -> Dataset:
    """Half of Adult uploaded; with ``configure`` the QIs get the ARX hierarchies and occupation is sensitive."""
    dataset = datasets.create_dataset(owner, data, f"{name}.csv", name=name)
    if not configure:
        return dataset
    for column in dataset.columns.all():
        if column.name in ADULT_QI:
            column.role = Role.QUASI_IDENTIFYING.value
            path = shared / "adult" / f"adult_hierarchy_{column.name}.csv"
            h = Hierarchy.from_text(owner, f"adult {column.name}", path.read_text(encoding="utf-8"), path.name)
            h.save()
            column.hierarchy = h
        elif column.name == "occupation":
            column.role = Role.SENSITIVE.value
        else:
            column.role = Role.INSENSITIVE.value
        column.save()
    return dataset


def adult_job(dataset: Dataset) -> Job:
    """Flash, k=5, distinct 2-diversity on occupation, 4% suppression: created and run as the run form does."""
    job = jobs.create_job(dataset, "flash", 5, 0.04, "occupation", {},
                          [{"model": "distinct-l-diversity", "l": 2, "column": "occupation"}])
    return jobs.run_job(job)
