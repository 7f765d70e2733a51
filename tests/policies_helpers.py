"""Adult split in two halves and a run on half 1, shared by the policy tests (test_policies_*.py)."""

from __future__ import annotations

from pathlib import Path

from anonymizer_app.engine import Role
from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import datasets, jobs
from hierarchy_editor.models import Hierarchy

ADULT_QI = ("sex", "age", "race", "marital-status", "education")


def adult_halves(folder: Path) -> tuple[bytes, bytes]:
    """The Adult table's rows split at the middle, each half with the header (the file's ';' layout)."""
    lines = (folder / "adult" / "adult.csv").read_text(encoding="utf-8").splitlines()
    head, body = lines[0], lines[1:]
    n = len(body) // 2
    return (("\n".join([head, *body[:n]]) + "\n").encode(), ("\n".join([head, *body[n:]]) + "\n").encode())


def adult_dataset(owner, data: bytes, folder: Path, name: str, configure: bool = True) -> Dataset:
    """Half of Adult uploaded; with ``configure`` the QIs get the ARX hierarchies and occupation is sensitive."""
    dataset = datasets.create_dataset(owner, data, f"{name}.csv", name=name)
    if not configure:
        return dataset
    for column in dataset.columns.all():
        if column.name in ADULT_QI:
            column.role = Role.QUASI_IDENTIFYING.value
            path = folder / "adult" / f"adult_hierarchy_{column.name}.csv"
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


# ---- a small table with hierarchies (the view tests) ------------------------------------------------
SEX_HIERARCHY = "F;*\nM;*\n"
ZIP_HIERARCHY = "10115;101**;*\n10117;101**;*\n10119;101**;*\n20095;200**;*\n20097;200**;*\n20099;200**;*\n" \
                "30001;300**;*\n40000;400**;*\n"


def small_configured(owner, text: str | None = None, name: str = "small") -> Dataset:
    """anonymizer_helpers.SMALL_CSV with its roles, hierarchies bound to sex and zip (age: the default)."""
    from anonymizer_helpers import SMALL_CSV, make_dataset

    dataset = make_dataset(owner, SMALL_CSV if text is None else text, f"{name}.csv", name=name)
    for column in dataset.columns.filter(name__in=["sex", "zip"]):
        content = SEX_HIERARCHY if column.name == "sex" else ZIP_HIERARCHY
        h = Hierarchy.from_text(owner, f"{column.name} h", content, f"{column.name}.csv")
        h.save()
        column.hierarchy = h
        column.save()
    return dataset


def small_job(owner) -> Job:
    """Datafly k=2 with distinct 2-diversity on disease, 25% suppression, on small_configured: run at once."""
    job = jobs.create_job(small_configured(owner), "datafly", 2, 0.25, "disease", {},
                          [{"model": "distinct-l-diversity", "l": 2, "column": "disease"}])
    return jobs.run_job(job)
