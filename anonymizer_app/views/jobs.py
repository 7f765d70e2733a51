"""Job pages: the run form (queues a job), the list of jobs, a job's page with its live status, and
cancelling."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.throttling import throttle

from ..engine import ALGORITHMS, InputError, Role
from ..engine.algorithms import supporting
from ..engine.model.persons import ADVERSARIES
from ..forms import RunForm, default_sensitive
from ..models import Dataset, Job
from ..services import identifier_suggestions, preflight, pseudonyms, rerun, run_submit
from ..services import jobs as job_service
from ..services import setvalued as set_service
from ..setvalued_forms import SetRunForm, item_library
from .common import (
    QI,
    algorithm_label,
    format_duration,
    job_label,
    job_rows,
    job_title,
    owned_dataset,
    owned_job,
    queue_job,
    result_url,
)
from .results import plain_label

JOBS_PAGE_SIZE = 50


@login_required
@require_http_methods(["GET", "POST"])
@throttle("run")
def run(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    if ds.is_transactions:  # k^m on records of items: the set-valued run form
        return redirect("anonymizer:run_items", dataset_id=ds.pk)
    cols = list(ds.columns.all())
    sensitive = [c.name for c in cols if c.role == Role.SENSITIVE.value]
    # δ-presence: the research subset is marked by a 0/1 column that is neither a QI nor identifying
    subset = [c.name for c in cols if c.role in (Role.SENSITIVE.value, Role.INSENSITIVE.value)]
    # ... or this dataset is the research subset of another of the owner's datasets (the population)
    populations = list(Dataset.objects.filter(owner=request.user).exclude(pk=ds.pk).order_by("name"))
    set_column = next((c for c in cols if c.item_delimiter), None)  # mixed mode: k^m on it within every class
    # the person id (a column of role "person id"): every model counts persons; the adversary is asked for
    person = next((c.name for c in cols if c.role == Role.PERSON.value), None)
    set_form = None
    if request.method == "POST":
        form = RunForm(request.POST, sensitive_columns=sensitive, subset_columns=subset, populations=populations,
                       person_column=person)
        if set_column is not None:
            set_form = SetRunForm(request.POST, prefix="set", with_k=False, hierarchies=item_library(request.user))
        if form.is_valid() and (set_form is None or set_form.is_valid()):
            d = form.cleaned_data
            population = next((p for p in populations if p.pk == form.population()), None)
            problems = [] if population is not None else preflight.check_run(
                ds, d["algorithm"], d["k"], d["suppression_percent"] / 100.0, form.privacy_models(),
                publish_as_is=d.get("publish_as_is") or ())
            for problem in problems:
                form.add_error(problem.field if problem.field in form.fields else None, problem.message)
            try:
                if problems:
                    raise _Refused
                options = form.algorithm_options()
                if d.get("suppressed_rows") == "keep":  # a publishing option, kept with the job's options
                    options = dict(options, suppressed_rows="keep")
                set_config = None if set_form is None else set_service.set_column_config(
                    ds, d["k"], set_form.cleaned_data["m"], set_form.cleaned_data["set_algorithm"],
                    set_form.hierarchy())
                job = job_service.create_job(ds, d["algorithm"], d["k"], d["suppression_percent"] / 100.0,
                                             d["sensitive"] or "", options, form.privacy_models(),
                                             population=population, person_adversary=d["person_adversary"])
                if set_config is not None:
                    job.config["set_column"] = set_config
                    job.save(update_fields=["config"])
                pseudonyms.snapshot(job, bool(d.get("reidentification_table")))
                identifier_suggestions.remember(job, d.get("publish_as_is") or ())
            except _Refused:
                pass  # the pre-flight problems are on the form
            except InputError as exc:
                form.add_error(None, str(exc))
            else:
                queue_job(request, job)
                return redirect("anonymizer:job", job_id=job.pk)
    else:
        source = _source_job(request, ds)
        # the fields given (a comparison's "run it" link: algorithm, k, ...) over the job's settings, if any
        initial = rerun.run_form_initial(source, _form_changes(request)) if source is not None else \
            (_form_changes(request) or None)
        form = RunForm(initial=initial, sensitive_columns=sensitive, subset_columns=subset, populations=populations,
                       person_column=person, sensitive_default=default_sensitive(cols))
        if set_column is not None:
            library = item_library(request.user)
            set_initial = rerun.set_form_initial(source, library) if source is not None else None
            set_form = SetRunForm(prefix="set", with_k=False, hierarchies=library, initial=set_initial)
    return render(request, "anonymizer/run.html", {
        "dataset": ds,
        "tab": "run",
        "form": form,
        "algorithms": list(ALGORITHMS.values()),
        "qi_columns": [c for c in cols if c.role == QI],
        "identifying": [c.name for c in cols if c.role == Role.IDENTIFYING.value
                        and pseudonyms.column_rule(c) is None],
        "identifier_rows": [{"column": c.name, "description": rule.describe()} for c in cols
                            if (rule := pseudonyms.column_rule(c)) is not None],
        "recent_jobs": job_rows(ds.jobs.all()[:5]),
        # columns that look identifying but would be published as they are: a box each to confirm it
        "held_identifiers": identifier_suggestions.held(ds),
        "publish_as_is": set(form["publish_as_is"].value() or ()) if form.is_bound else set(),
        "set_column": set_column,
        "set_form": set_form,
        "person_column": person,
        "person_algorithms": supporting("person_level"),
    })


class _Refused(Exception):
    """The pre-flight checks found problems: nothing is created."""


@login_required
@require_POST
def run_check(request, dataset_id: int):
    """The pre-flight checks of the run form as it stands (the page asks while fields change): the form's
    own errors and the problems found on the data, as {"problems": [{"field", "message"}]}."""
    ds = owned_dataset(request, dataset_id)
    cols = list(ds.columns.all())
    sensitive = [c.name for c in cols if c.role == Role.SENSITIVE.value]
    subset = [c.name for c in cols if c.role in (Role.SENSITIVE.value, Role.INSENSITIVE.value)]
    populations = list(Dataset.objects.filter(owner=request.user).exclude(pk=ds.pk))
    person = next((c.name for c in cols if c.role == Role.PERSON.value), None)
    form = RunForm(request.POST, sensitive_columns=sensitive, subset_columns=subset, populations=populations,
                   person_column=person)
    set_form = None
    if any(c.item_delimiter for c in cols):  # mixed mode, as the run page
        set_form = SetRunForm(request.POST, prefix="set", with_k=False, hierarchies=item_library(request.user))
    if not form.is_valid() or (set_form is not None and not set_form.is_valid()):
        problems = [{"field": None if f == "__all__" else f, "message": str(m)}
                    for f_ in (form, set_form) if f_ is not None for f, errors in f_.errors.items() for m in errors]
    else:
        d = form.cleaned_data
        problems = [] if form.population() is not None else [p.to_dict() for p in preflight.check_run(
            ds, d["algorithm"], d["k"], d["suppression_percent"] / 100.0, form.privacy_models(),
            publish_as_is=d.get("publish_as_is") or ())]
        # then the submit's own creation, undone: the check refuses exactly what the run button would
        problems = problems or run_submit.creation_problems(form, set_form, ds, populations)
    response = JsonResponse({"problems": problems})
    response["Cache-Control"] = "no-store"
    return response


def _source_job(request, ds: Dataset) -> Job | None:
    """The run whose settings fill the form (``?from=<job id>``): the owner's run on this dataset, else 404."""
    job_id = request.GET.get("from")
    if not job_id:
        return None
    try:
        uuid.UUID(job_id)
    except ValueError:
        raise Http404("no such job") from None
    return get_object_or_404(Job, pk=job_id, owner=request.user, dataset=ds, kind=Job.RUN)


def _form_changes(request) -> dict[str, str]:
    """The run form's fields given beside ``from`` (an advice link's change: another algorithm, a metric,
    a suppression limit); the form checks them as any submitted value when the run is started."""
    return {key: value for key, value in request.GET.items() if key != "from" and key != "page"}


@login_required
@require_GET
def jobs(request):
    qs = Job.objects.filter(owner=request.user).select_related("dataset")
    page = Paginator(qs, JOBS_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "anonymizer/jobs.html", {"page": page, "rows": job_rows(page.object_list)})


def _status_payload(job: Job) -> dict:
    succeeded = job.status == Job.SUCCEEDED
    return {
        "status": job.status,
        "progress": round(job.progress, 4),
        "phase": job.phase,
        "message": job.message,
        "finished": job.is_finished,
        "result_url": result_url(job) if succeeded else None,
    }


@login_required
@require_GET
def job(request, job_id):
    j = owned_job(request, job_id)
    columns = j.config.get("columns", [])
    identifier_rows = [r for r in pseudonyms.describe(j) if r["treatment"] != "remove"]
    options = j.options or {}
    # a comparison or an experiment holds several k (and a comparison several algorithms) in its options; its
    # job.k is only the smallest, so "k = 2" would misstate what was asked (issue 29)
    k_values = (", ".join(str(k) for k in options.get("k", [])) if j.kind != Job.RUN else "") or str(j.k)
    algorithm = job_label(j)
    # the person id of the job's snapshotted roles: every model of the job counts persons, against its adversary
    person = next((c["name"] for c in columns if c["role"] == Role.PERSON.value), None)
    treated = {r["column"]: r["description"] for r in identifier_rows}
    if j.kind == Job.COMPARISON and options.get("algorithms"):
        algorithm = f"{algorithm} of {', '.join(algorithm_label(a) for a in options['algorithms'])}"
    elif j.kind == Job.EXPERIMENT and options.get("algorithm"):
        algorithm = f"{algorithm} with {algorithm_label(options['algorithm'])}"
    return render(request, "anonymizer/job.html", {
        "job": j,
        "algorithm": algorithm,
        "title": job_title(j),
        "k_values": k_values,
        "duration": format_duration(j.duration),
        "suppression_percent": f"{j.suppression_limit * 100:g}",
        "qis": [c["name"] for c in columns if c["role"] == QI],
        "identifying": [c["name"] for c in columns if c["role"] == Role.IDENTIFYING.value
                        and c["name"] not in {r["column"] for r in identifier_rows}],
        "identifier_rows": identifier_rows,
        "person": None if person is None else {
            "column": person, "adversary": j.person_adversary,
            "adversary_text": ADVERSARIES.get(j.person_adversary, ""),
            "published": treated.get(person, "")},  # "" : removed
        "progress_percent": round(j.progress * 100, 1),
        "model_rows": rerun.model_rows(j.models, (j.config.get("population") or {}).get("name")),
        "option_rows": [{"name": plain_label(key), "value": value} for key, value in options.items()
                        if j.kind == Job.RUN],
        "can_rerun": j.kind == Job.RUN and not j.dataset.is_transactions,
        "status_json": {**_status_payload(j), "status_url": reverse("anonymizer:job_status", args=[j.pk])},
    })


@login_required
@require_GET
def job_status(request, job_id):
    response = JsonResponse(_status_payload(owned_job(request, job_id)))
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def job_cancel(request, job_id):
    j = owned_job(request, job_id)
    if j.is_finished:
        messages.info(request, f"This job has already {j.status}.")
        return redirect("anonymizer:job", job_id=j.pk)
    Job.objects.filter(pk=j.pk).update(cancel_requested=True)
    # Still waiting for a worker: end it now (the worker skips jobs that are no longer queued).
    stopped = Job.objects.filter(pk=j.pk, status=Job.QUEUED).update(
        status=Job.CANCELLED, finished=timezone.now(), phase="cancelled", message="cancelled before it started")
    if not stopped:  # running, but on a worker that died (stale heartbeat): nobody will stop it
        stopped = job_service.cancel_if_stale(j)
    if stopped:
        messages.success(request, "Job cancelled.")
    else:
        messages.info(request, "Cancelling: the worker stops at its next progress report.")
    return redirect("anonymizer:job", job_id=j.pk)
