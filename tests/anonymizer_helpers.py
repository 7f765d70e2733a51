"""Small tables and shortcuts shared by the tests of the anonymizer pages (test_<view>.py)."""

from __future__ import annotations

from pathlib import Path

from anonymizer_app import demo
from anonymizer_app.engine import Role
from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import datasets, jobs
from hierarchy_editor.models import Hierarchy

DEMO_DIR = Path(demo.__file__).resolve().parent / "demo_data"
PEOPLE_CSV = DEMO_DIR / "people" / "db_100.csv"

# 8 people: name is unique (identifying), age/zip/sex are the QIs, note holds formula-like text.
SMALL_CSV = """name,age,zip,sex,note,disease
Ann,34,10115,F,ok,flu
Bob,36,10117,M,=cmd,cold
Cid,35,10119,M,ok,flu
Dee,52,20095,F,+1,asthma
Eve,55,20097,F,ok,flu
Fay,58,20099,F,-2,cold
Gus,71,30001,M,@x,flu
Hal,23,40000,M,ok,flu
"""
SMALL_ROLES = {"name": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
               "sex": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}


def make_dataset(owner, text: str = SMALL_CSV, filename: str = "small.csv", roles: dict | None = None,
                 name: str | None = None) -> Dataset:
    dataset = datasets.create_dataset(owner, text.encode("utf-8"), filename, name=name)
    set_roles(dataset, SMALL_ROLES if roles is None else roles)
    return dataset


def set_roles(dataset: Dataset, roles: dict) -> None:
    for column in dataset.columns.all():
        column.role = Role(roles.get(column.name, Role.INSENSITIVE)).value
        column.save()


def people_dataset(owner, hierarchies: bool = True) -> Dataset:
    """The demo people table (100 rows) with its roles and (parsing takes ~1 s) the demo's hierarchy files."""
    dataset = datasets.create_dataset(owner, PEOPLE_CSV.read_bytes(), PEOPLE_CSV.name, name="People")
    roles = {"id": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "city_birth": Role.QUASI_IDENTIFYING,
             "zip_code": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}
    files = {"age": ("age_generalization.csv", "first"), "city_birth": ("city_birth_generalization.csv", "lift"),
             "zip_code": ("zip_code_generalization.csv", "error")}
    for column in dataset.columns.all():
        column.role = roles.get(column.name, Role.INSENSITIVE).value
        if hierarchies and column.name in files:
            fname, policy = files[column.name]
            path = DEMO_DIR / "people" / fname
            h = Hierarchy.from_text(owner, f"{column.name} hierarchy", path.read_text(encoding="utf-8"), path.name,
                                    on_conflict=policy)
            h.save()
            column.hierarchy = h
        column.save()
    return dataset


def finished_job(dataset: Dataset, k: int = 2, suppression_limit: float = 0.0, sensitive: str = "") -> Job:
    """A job created and run synchronously (no Celery)."""
    job = jobs.create_job(dataset, "datafly", k, suppression_limit, sensitive)
    return jobs.run_job(job)


def run_jobs_synchronously(monkeypatch) -> list:
    """Make the views' submit_job run the job at once instead of queueing it; returns the submitted jobs."""
    submitted = []

    def submit(job):
        submitted.append(job.pk)
        return jobs.run_job(job)

    monkeypatch.setattr(jobs, "submit_job", submit)
    return submitted


def finished_submitted_job(wait, submitted: list):
    """The first job a browser click submitted, once it has ended. With run_jobs_synchronously the job runs
    inside the request (the live server's thread): ``submitted`` is filled when it starts, not when it ends."""
    from anonymizer_app.models import Job

    wait.until(lambda b: submitted and Job.objects.get(pk=submitted[0]).status in Job.FINISHED)
    return Job.objects.get(pk=submitted[0])


def queue_without_running(monkeypatch) -> list:
    """Make submit_job a no-op that records the job (it stays queued)."""
    submitted = []
    monkeypatch.setattr(jobs, "submit_job", lambda job: submitted.append(job.pk) or job)
    return submitted
