"""What every page of the anonymizer app shares: owner-scoped lookups (another user's dataset or job is a
404), the labels and formats of jobs, and queueing a job with a message saying how it went."""

from __future__ import annotations

import logging

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone

from ..engine import Role
from ..engine.model.builders import BUILDERS
from ..engine.model.defaults import default_builder
from ..models import Dataset, Job, Result
from ..services import jobs as job_service
from ..services.labels import KIND_LABELS, algorithm_label, format_value, job_label  # noqa: F401  (re-exported)
from ..services.rerun import models_text
from ..services.results import RESULT_PAGES, job_result  # noqa: F401  (re-exported)

log = logging.getLogger(__name__)

QI = Role.QUASI_IDENTIFYING.value


def result_url(job: Job) -> str:
    """Where a finished job's outcome is shown: its result page, its comparison or experiment page, or, for
    a lattice evaluation, the lattice page of the run it evaluated."""
    if job.kind == Job.LATTICE:
        return reverse("anonymizer:lattice", args=[(job.options or {}).get("source_job")])
    if job.kind == Job.SQL_EXPORT:  # its outcome is a table elsewhere: back to the run whose rows it wrote
        return reverse("anonymizer:result", args=[(job.options or {}).get("source_job")])
    if job.kind == Job.REPOSITORY_DEPOSIT:  # the run's deposit page lists its drafts with their links
        return reverse("anonymizer:deposit_remote", args=[(job.options or {}).get("source_job")])
    return reverse(RESULT_PAGES.get(job.kind, "anonymizer:result"), args=[job.pk])


def owned_dataset(request, dataset_id: int) -> Dataset:
    return get_object_or_404(Dataset, pk=dataset_id, owner=request.user)


def owned_job(request, job_id) -> Job:
    return get_object_or_404(Job.objects.select_related("dataset"), pk=job_id, owner=request.user)


def table_result(request, job_id: int) -> tuple[Job, Result]:
    """The owner's finished job with a table of anonymized rows and its result (what an export to a database
    or a deposit takes); 404 for a comparison, a lattice, a set-valued run or someone else's job."""
    j = owned_job(request, job_id)
    if (j.kind in RESULT_PAGES and j.kind != Job.SYNTHESIS) or j.kind == Job.LATTICE or j.dataset.is_transactions:
        raise Http404("this job has no table of anonymized rows")
    return j, job_result(j)


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} min {rest} s"


def job_title(job: Job) -> str:
    """What a job is called on its page and in the lists: "Flash, k=5", "Comparison, k = 2, 5, 10"."""
    ks = (job.options or {}).get("k") if job.kind in (Job.COMPARISON, Job.EXPERIMENT) else None
    if isinstance(ks, list) and ks:
        return f"{job_label(job)}, k = {', '.join(str(k) for k in ks)}"
    if job.kind == Job.RUN:
        return f"{job_label(job)}, k={job.k}"
    return job_label(job)


def default_hierarchy_label(column_type: str, distinct=None) -> str:
    """What the column's default hierarchy is (engine.model.defaults): intervals for numbers (equal-width or, when
    skewed, quantile); for other columns the default builder of their ``distinct`` values (a pandas Series:
    dates, ordered grouping in a natural order, or value -> *)."""
    if column_type in ("integer", "decimal"):
        return "default (intervals)"
    if distinct is None:
        return "default (dates)" if column_type == "date" else "default (value → *)"

    return f"default ({BUILDERS[default_builder(distinct, column_type)[0]].label.lower()})"


def _outcomes(jobs: list[Job]) -> dict:
    """job id -> the few figures a list shows of its result (k reached, NCP, suppressed, verified), read
    from the stored reports by the database (KT: not the whole report of every job)."""
    from django.db.models.fields.json import KT

    ids = [j.pk for j in jobs if j.status == Job.SUCCEEDED]
    if not ids:
        return {}
    rows = Result.objects.filter(job_id__in=ids).annotate(
        k_reached=KT("report__k_achieved"), ncp=KT("report__metrics__ncp"), suppressed=KT("report__suppressed"),
        verified=KT("report__verified")).values("job_id", "k_reached", "ncp", "suppressed", "verified")
    return {r["job_id"]: r for r in rows}


def _number(value, kind=float):
    try:
        return kind(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def job_rows(jobs) -> list[dict]:
    """What the lists of jobs show: the job's name (algorithm, k), its models, and for a finished run the k
    reached, the NCP and the suppressed records; for a failed one, why."""
    jobs = list(jobs)
    outcomes = _outcomes(jobs)
    rows = []
    for j in jobs:
        out = outcomes.get(j.pk, {})
        ncp = _number(out.get("ncp"))
        rows.append({"job": j, "algorithm": job_label(j), "duration": format_duration(j.duration),
                     "suppression_percent": f"{j.suppression_limit * 100:g}",
                     "name": job_title(j), "settings": job_settings(j),
                     "models": models_text(j.models),
                     "k_reached": _number(out.get("k_reached"), int),
                     "ncp": None if ncp is None else f"{ncp:.3f}",
                     "suppressed": _number(out.get("suppressed"), int)})
    return rows


def job_settings(job: Job) -> str:
    """What sets a job apart from others of the same algorithm and k, in one line for the lists: its suppression
    limit, models beside k, sensitive column and number of quasi-identifiers ("suppression 5% · distinct
    l-diversity (l=2) on disease · sensitive: disease · 4 QIs"); a comparison also names its algorithms."""
    parts = []
    if job.kind == Job.COMPARISON:
        parts.append(", ".join(algorithm_label(a) for a in (job.options or {}).get("algorithms", [])))
    if job.kind in (Job.RUN, Job.COMPARISON, Job.EXPERIMENT):
        parts.append(f"suppression {job.suppression_limit * 100:g}%")
    models = models_text(job.models)
    if models:
        parts.append(models)
    if job.sensitive:
        parts.append(f"sensitive: {job.sensitive}")
    qis = sum(1 for c in (job.config or {}).get("columns", []) if c.get("role") == QI)
    if qis:
        parts.append(f"{qis} QI{'' if qis == 1 else 's'}")
    return " · ".join(parts)


def queue_job(request, job: Job) -> None:
    try:
        job_service.submit_job(job)
    except Exception as exc:  # broker unreachable: the job would wait forever, so end it and say why
        log.exception("could not queue job %s", job.pk)
        Job.objects.filter(pk=job.pk, status=Job.QUEUED).update(
            status=Job.FAILED, finished=timezone.now(), message=f"could not queue the job: {exc}")
        messages.error(request, "The job could not be queued; is a Celery worker and broker running?")
    else:
        # k only where the job has one: not "with k=0" for a synthesis, SUDA2 or model job
        what = f"{job_label(job)} with k={job.k}" if job.kind == Job.RUN else job_title(job)
        messages.success(request, f"Queued {what} on {job.dataset.name}.")
