"""The solution lattice of a finished full-domain lattice job (Flash, Incognito, Samarati, exhaustive).

- ``lattice``: the page (a zoomable plot, levels of the lattice as rows);
- ``lattice_data``: every node's levels, tag, metric, rank, position and frontier flag as JSON. It
  comes from the job's report (``search.lattice``, when the job ran with keep_lattice=yes) or from an
  exhaustive evaluation of every node under every model, run once on a worker (a job of kind
  "lattice", services.lattice; 202 with its progress meanwhile) and cached next to the result
  (services.storage.lattice_cache_dir: MEDIA_ROOT/results/job-<id>-lattice/);
- ``lattice_node``: one node's anonymized table (first rows beside the original) and metrics,
  computed on demand with the "full-domain" algorithm and cached per node in the same folder;
- ``lattice_keep``: keeps a node as the result: a new job (kind "lattice-keep", algorithm full-domain,
  the node's levels, the same k, every privacy model, suppression limit and configuration), run on a worker.

Everything is owner-scoped like the other pages: another user's job is a 404.
"""

from __future__ import annotations

from csp.constants import UNSAFE_EVAL
from csp.decorators import csp_update
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from accounts.throttling import throttle

from .. import engine
from ..engine.search.solution_lattice import METRIC_LABELS
from ..models import Job, Result
from ..services import jobs as job_service
from ..services import lattice as lattice_service
from ..services.attribute_weights import weight_rows
from ..services.lattice_pages import (  # noqa: F401  (comparison, is_lattice_job: re-exported)
    PREVIEW_ROWS,
    checked_levels,
    comparison,
    is_lattice_job,
    kept_nodes,
    lattice_answer,
    node_detail,
)
from ..services.lattice_pages import job_table as _job_table  # noqa: F401  (re-exported)
from ..services.results import transformation_key
from . import safepub as safepub_views


# ---- helpers -----------------------------------------------------------------------------------
def _safepub_refusal(request, job_id):
    """The owner's SafePub run: the page saying why it has no lattice and no node to keep (409); else None."""
    job = Job.objects.select_related("dataset").filter(pk=job_id, owner=request.user).first()
    return safepub_views.refuse_lattice(request, job) if job is not None else None


def _lattice_job(request, job_id) -> Job:
    """The user's finished lattice job with a result, or 404."""
    job = get_object_or_404(Job.objects.select_related("dataset"), pk=job_id, owner=request.user)
    if not is_lattice_job(job) or job.status != Job.SUCCEEDED or not Result.objects.filter(job=job).exists():
        raise Http404("this job has no solution lattice")
    return job


job_metric = lattice_service.job_metric


# ---- the lattice -------------------------------------------------------------------------------
@login_required
@require_GET
# plotly's WebGL traces (scattergl, via regl) build their drawing code with Function(): this page only
# django-csp 4.0 types a view as taking the request only; this one takes the job id too
@csp_update({"script-src": [UNSAFE_EVAL]})  # type: ignore[arg-type]
def lattice(request, job_id):
    refusal = _safepub_refusal(request, job_id)
    if refusal is not None:
        return refusal
    job = _lattice_job(request, job_id)
    report = Result.objects.get(job=job).report
    qi = report.get("quasi_identifiers") or []
    # the run's attribute weights (the metric's values were computed with them), in the header and the node table
    weights = weight_rows((job.options or {}).get("weights"), list(qi))
    return render(request, "anonymizer/lattice.html", {
        "job": job,
        "dataset": job.dataset,
        "algorithm": engine.ALGORITHMS[job.algorithm].label if job.algorithm in engine.ALGORITHMS else job.algorithm,
        "metric_label": METRIC_LABELS.get(job_metric(job), job_metric(job)),
        "suppression_percent": f"{job.suppression_limit * 100:g}",
        "urls": {
            "data": reverse("anonymizer:lattice_data", kwargs={"job_id": job.pk}),
            "node": reverse("anonymizer:lattice_node", kwargs={"job_id": job.pk}),
            "keep": reverse("anonymizer:lattice_keep", kwargs={"job_id": job.pk}),
        },
        "preview_rows": PREVIEW_ROWS,
        "weights": weights,
        "result_levels": transformation_key(report),  # solution A of "compare two nodes"
        "compare_url": reverse("anonymizer:solutions_nodes", kwargs={"job_id": job.pk}),
        "weight_of": {w["qi"]: w["text"] for w in weights},
    })


@login_required
@require_GET
@throttle("lattice", methods=("GET",))
def lattice_data_view(request, job_id):
    """The lattice (200), the evaluation's progress (202, with the run's search's nodes unless ?known=0) or why it
    failed (422, ?retry=1 starts a new one)."""
    code, data = lattice_answer(_lattice_job(request, job_id), request.GET.get("retry") == "1",
                                request.GET.get("known") != "0")
    return JsonResponse(data, status=code)


@login_required
@require_GET
@throttle("lattice", methods=("GET",))
def lattice_node(request, job_id):
    job = _lattice_job(request, job_id)
    try:
        levels = checked_levels(job, request.GET.get("levels", ""))
        data = node_detail(job, levels)
    except engine.InputError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    except engine.EngineError as exc:
        return JsonResponse({"error": str(exc)}, status=422)
    data = dict(data, kept=kept_nodes(job).get(data["levels"]))
    return JsonResponse(data)


@login_required
@require_POST
@throttle("lattice")
def lattice_keep(request, job_id):
    refusal = _safepub_refusal(request, job_id)
    if refusal is not None:
        return refusal
    job = _lattice_job(request, job_id)
    page = reverse("anonymizer:lattice", kwargs={"job_id": job.pk})
    try:
        levels = checked_levels(job, request.POST.get("levels", ""))
        key = ",".join(map(str, levels))
        # the kept node carries every model of the lattice's job and runs through the same gate (on a worker)
        new = lattice_service.keep_node(job, key)
    except engine.EngineError as exc:
        messages.error(request, str(exc))
        return redirect(page)
    job_service.submit_job(new)  # on a worker, with progress on the job page
    messages.success(request, f"The transformation {key} of the lattice is being kept as a result of its own, "
                              f"checked against {len(job.models or []) + 1} privacy model(s).")
    return redirect("anonymizer:job", job_id=new.pk)
