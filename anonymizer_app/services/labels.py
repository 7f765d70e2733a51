"""How jobs, algorithms and figures are named and formatted wherever people read them: the pages (views),
the release report (services.release_report) and the API. Plain functions over the models and the engine's
registries, below the views and the services that show them."""

from __future__ import annotations

from ..engine import ALGORITHMS
from ..engine.setvalued import SET_ALGORITHMS  # a transaction dataset's k^m run
from ..models import Job

KIND_LABELS = {Job.COMPARISON: "Comparison", Job.EXPERIMENT: "Homogeneity experiment",
               Job.LATTICE: "Solution lattice evaluation", Job.SQL_EXPORT: "Export to a database table",
               Job.REPOSITORY_DEPOSIT: "Deposit to a repository (draft)"}

METRICS = {
    "equivalence_classes": ("Equivalence classes", "int"),
    "min_class_size": ("Smallest EC (k reached)", "int"),
    "mean_class_size": ("Mean EC size", "float"),
    "suppressed": ("Suppressed records", "int"),
    "ncp": ("NCP (information loss)", "ratio"),
    "generalization_height": ("Generalization height", "ratio"),
    "discernibility": ("Discernibility C_DM", "int"),
    "c_avg": ("C_AVG", "float"),
    "non_uniform_entropy": ("Non-uniform entropy", "float"),
    "prosecutor_risk_highest": ("Highest prosecutor risk", "percent"),
    "prosecutor_risk_average": ("Average prosecutor risk", "percent"),
    "records_at_risk": ("Records at risk", "percent"),
    "marketer_risk": ("Marketer risk", "percent"),
    "sample_uniques": ("Sample uniques", "int"),
    "homogeneous_classes": ("Homogeneous ECs", "int"),
    "homogeneous_records": ("Records in homogeneous ECs", "int"),
}


def format_value(value, kind: str) -> str:
    if value is None:
        return "—"
    if kind == "int":
        return f"{int(value):,}"
    if kind == "percent":
        return f"{value * 100:.3g}%"
    if kind == "ratio":
        return f"{value:.3f}"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def algorithm_label(name: str) -> str:
    info = ALGORITHMS.get(name)
    if info:
        return info.label
    return SET_ALGORITHMS[name].label if name in SET_ALGORITHMS else name


def job_label(job: Job) -> str:
    """What the job is: its algorithm, or a comparison / an experiment."""
    return KIND_LABELS.get(job.kind) or algorithm_label(job.algorithm)
