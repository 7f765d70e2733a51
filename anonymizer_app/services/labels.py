"""How jobs, algorithms and figures are named and formatted wherever people read them: the pages (views),
the release report (services.release_report) and the API. Plain functions over the models and the engine's
registries, below the views and the services that show them."""

from __future__ import annotations

from ..engine import ALGORITHMS
from ..engine.measure.figure_catalogue import FIGURES, RUN_METRICS, format_kind
from ..engine.setvalued import SET_ALGORITHMS  # a transaction dataset's k^m run
from ..models import Job

KIND_LABELS = {Job.COMPARISON: "Comparison", Job.EXPERIMENT: "Homogeneity experiment",
               Job.LATTICE: "Solution lattice evaluation", Job.SQL_EXPORT: "Export to a database table",
               Job.REPOSITORY_DEPOSIT: "Deposit to a repository (draft)",
               Job.MODEL_UTILITY: "Models trained on the release", Job.SYNTHESIS: "Synthetic data",
               Job.SDC_RISK: "SUDA2 and risk with sampling weights"}

# the figures of a run's report that the result page and the release report show: key -> (label, kind), from
# the engine's one catalogue of figures (engine.measure.figure_catalogue), in the order of the metrics table
METRICS = {key: (FIGURES[key].label, FIGURES[key].kind) for key in RUN_METRICS}

# the kinds this module named before the catalogue, for callers that still pass them
_OLD_KINDS = {"int": "count", "percent": "share", "float": "amount"}


def format_value(value, kind: str) -> str:
    """``value`` as a figure of this kind reads (engine.measure.figure_catalogue.format_kind)."""
    return format_kind(_OLD_KINDS.get(kind, kind), value)


def algorithm_label(name: str) -> str:
    info = ALGORITHMS.get(name)
    if info:
        return info.label
    return SET_ALGORITHMS[name].label if name in SET_ALGORITHMS else name


def job_label(job: Job) -> str:
    """What the job is: its algorithm, or a comparison / an experiment."""
    return KIND_LABELS.get(job.kind) or algorithm_label(job.algorithm)


CELL_CHARS = 100  # characters shown of a table cell on a page (templatetags/cells.py; the lattice's node table)


def cut(value, limit: int = CELL_CHARS) -> tuple[str, int | None]:
    """The text shown of a cell and, when it was cut, the full length (a 30 MB cell must not make a 30 MB page)."""
    text = "" if value is None else str(value)
    if len(text) <= limit:
        return text, None
    return text[:limit] + "…", len(text)
