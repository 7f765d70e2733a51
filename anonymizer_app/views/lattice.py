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

from typing import Any

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
from ..engine.algorithms import supports
from ..engine.algorithms.fixed import parse_levels
from ..engine.measure.figure_catalogue import FIGURES
from ..engine.run import pipeline
from ..engine.search.solution_lattice import METRIC_LABELS
from ..models import Job, Result
from ..services import datasets, results
from ..services import jobs as job_service
from ..services import lattice as lattice_service
from ..templatetags.cells import cut
from . import safepub as safepub_views

PREVIEW_ROWS = 50
# the node's metrics table: its figures, worded and formatted by the catalogue of figures as on the result page
NODE_METRICS = ["equivalence_classes", "min_class_size", "suppressed", "discernibility", "generalization_height", "ncp",
                "non_uniform_entropy", "c_avg", "prosecutor_risk_highest", "prosecutor_risk_average"]


# ---- helpers -----------------------------------------------------------------------------------
def is_lattice_job(job: Job) -> bool:
    return job.kind == Job.RUN and supports(job.algorithm, "lattice")


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


_read_cache = lattice_service.read_cache
_write_cache = lattice_service.write_cache
job_metric = lattice_service.job_metric
CACHE_VERSION = lattice_service.CACHE_VERSION


def _job_table(job: Job):
    """The original frame, the engine Table of the job's snapshot and a hierarchy for every QI."""
    frame = datasets.load_frame(job.dataset)
    table = datasets.table_from_config(frame, job.config, job.dataset.name)
    try:
        given = datasets.hierarchies_from_config(job.owner, job.config)
    except Exception as exc:  # a hierarchy of the snapshot was deleted since
        raise engine.InputError(f"a hierarchy this job used is no longer available ({exc})") from None
    return frame, table, table.hierarchies(given)


# ---- the lattice -------------------------------------------------------------------------------
def pending(evaluation: Job) -> dict:
    """What the page shows while a worker evaluates the lattice."""
    return {"pending": True, "job": str(evaluation.pk), "status": evaluation.status,
            "progress": round(evaluation.progress, 4), "phase": evaluation.phase or "waiting for a worker",
            "job_url": reverse("anonymizer:job", args=[evaluation.pk]),
            "cancel_url": reverse("anonymizer:job_cancel", args=[evaluation.pk])}


def kept_nodes(job: Job) -> dict[str, str]:
    """Levels -> result URL of the nodes kept from this lattice (full-domain jobs with the same setup)."""
    out = {}
    jobs = Job.objects.filter(owner=job.owner, dataset=job.dataset, algorithm="full-domain", k=job.k,
                              suppression_limit=job.suppression_limit, status=Job.SUCCEEDED).order_by("created")
    for j in jobs:
        levels = str((j.options or {}).get("levels", "")).replace(" ", "")
        if levels and j.config == job.config:
            out[levels] = reverse("anonymizer:result", kwargs={"job_id": j.pk})
    return out


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
    })


def lattice_answer(job: Job, retry: bool) -> tuple[int, dict]:
    """(200, the lattice) when it is known; otherwise a worker evaluates it: (202, its progress) while it runs
    (one evaluation per run at a time), (422, {"error"}) when it failed or was cancelled (``retry`` starts a
    new one). The web's data.json and the API's lattice answer this."""
    try:
        data = lattice_service.stored_lattice(job)
        if data is None:
            last = lattice_service.last_evaluation(job)
            if last is not None and last.status in (Job.FAILED, Job.CANCELLED) and not retry:
                return 422, {"error": f"The lattice evaluation {last.status}: {last.message}",
                             "retry": True, "job": str(last.pk)}
            evaluation = job_service.evaluation_job(job)
            assert evaluation is not None
            evaluation.refresh_from_db()
            data = lattice_service.read_cache(job, lattice_service.LATTICE_FILE)  # an eager worker may be done
            if data is None:
                if evaluation.status in (Job.FAILED, Job.CANCELLED):
                    return 422, {"error": f"The lattice evaluation {evaluation.status}: {evaluation.message}",
                                 "retry": True, "job": str(evaluation.pk)}
                return 202, pending(evaluation)
    except engine.EngineError as exc:
        return 422, {"error": str(exc)}
    return 200, dict(data, kept=kept_nodes(job))


@login_required
@require_GET
@throttle("lattice", methods=("GET",))
def lattice_data_view(request, job_id):
    """The lattice (200), the evaluation's progress (202) or why it failed (422, ?retry=1 starts a new one)."""
    code, data = lattice_answer(_lattice_job(request, job_id), request.GET.get("retry") == "1")
    return JsonResponse(data, status=code)


# ---- one node ----------------------------------------------------------------------------------
def checked_levels(job: Job, text: str) -> list[int]:
    data_qi = [c["name"] for c in job.config.get("columns", []) if c["role"] == engine.Role.QUASI_IDENTIFYING.value]
    result = Result.objects.get(job=job)
    qi = result.report.get("quasi_identifiers") or data_qi
    heights = (result.report.get("search") or {}).get("lattice", {}).get("heights")
    if heights is None:
        cached = _read_cache(job, "lattice.json")
        heights = cached["heights"] if cached else None
    if heights is None:
        _, table, hs = _job_table(job)
        qi, heights = list(table.qi), [hs[c].height for c in table.qi]
    return parse_levels(text, list(qi), [int(h) for h in heights])


_job_spec = lattice_service.run_spec


def node_detail(job: Job, levels: list[int]) -> dict:
    """The node's published table (first rows, beside the original) and its metrics (cached): the job's
    full specification with the node's transformation, through the pipeline and its publishing gate."""
    key = ",".join(map(str, levels))
    name = f"node-{key.replace(',', '-')}.json"
    cached = _read_cache(job, name)
    if cached is not None:
        return cached
    spec = _job_spec(job)
    table = spec.table
    data = {"version": CACHE_VERSION, "levels": key, "qi": list(table.qi)}
    try:
        publication = pipeline.publish_levels(spec, key)
    except engine.UnsatisfiableError as exc:
        data.update(anonymous=False, message=str(exc))
        _write_cache(job, name, data)
        return data
    report = publication.report
    after, before = report["metrics"], report["metrics_before"]
    shown = publication.table.iloc[:PREVIEW_ROWS]
    data.update(
        anonymous=True,
        message="",
        k_achieved=report["k_achieved"],
        suppressed=report["suppressed"],
        records=report["records"],
        models=[c["describe"] for c in report["model_checks"]],
        transformation=[{"qi": qi, "level": lv, "label": report["transformation_labels"].get(qi, "")}
                        for qi, lv in results.transformation_levels(report)],
        metrics=after,
        metric_rows=[{"key": key_, "label": FIGURES[key_].label, "before": before.get(key_), "after": after.get(key_),
                      "before_text": FIGURES[key_].format(before.get(key_)),
                      "after_text": FIGURES[key_].format(after.get(key_))}
                     for key_ in NODE_METRICS if key_ in after],
        table=comparison(table.frame.iloc[publication.rows[:PREVIEW_ROWS]].reset_index(drop=True), shown,
                         publication.suppressed[:PREVIEW_ROWS], len(shown), report["identifying_removed"],
                         publication.rows[:PREVIEW_ROWS]),
    )
    _write_cache(job, name, data)
    return data


def comparison(frame, output, suppressed, rows: int, identifying: list[str], numbers=None) -> dict:
    """The first rows of the original and the published table; changed anonymized cells flagged."""
    orig = frame.iloc[:rows]
    out = output.iloc[:rows]
    orig_cols, out_cols = [str(c) for c in frame.columns], [str(c) for c in output.columns]
    shown = []
    for i in range(len(out)):
        o = orig.iloc[i] if i < len(orig) else None
        a = out.iloc[i]
        row: dict[str, Any] = {  # one table row for the template
            "number": int(numbers[i]) + 1 if numbers is not None else i + 1,
            "suppressed": bool(suppressed[i]),
            "changed": [o is None or c not in frame.columns or str(a[c]) != str(o[c]) for c in output.columns],
            "cut": {"original": {}, "anonymized": {}},  # column index -> full length of a cell cut for the page
        }
        for side, values in (("original", ["" if o is None else str(o[c]) for c in frame.columns]),
                             ("anonymized", [str(a[c]) for c in output.columns])):
            row[side] = []
            for j, value in enumerate(values):
                text, length = cut(value)
                row[side].append(text)
                if length is not None:
                    row["cut"][side][j] = length
        shown.append(row)
    return {"original_columns": orig_cols, "anonymized_columns": out_cols,
            "identifying": [str(c) for c in identifying], "rows": shown}


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
