"""The solution lattice of a finished full-domain lattice job (Flash, Incognito, Samarati, exhaustive).

- ``lattice``: the page (a zoomable plot, levels of the lattice as rows);
- ``lattice_data``: every node's levels, tag, metric, rank, position and frontier flag as JSON. It
  comes from the job's report (``search.lattice``, when the job ran with keep_lattice=yes) or is
  computed once by an exhaustive evaluation of the job's table and cached in a file next to the
  result (MEDIA_ROOT/results/job-<id>-lattice/);
- ``lattice_node``: one node's anonymized table (first rows beside the original) and metrics,
  computed on demand with the "full-domain" algorithm and cached per node in the same folder;
- ``lattice_keep``: keeps a node as the result: a new job (algorithm full-domain, the node's levels,
  the same k, suppression limit and configuration), run at once.

Everything is owner-scoped like the other pages: another user's job is a 404.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from . import engine, services
from .engine.algorithms.fixed import parse_levels
from .engine.lattice_metrics import METRIC_HELP as LATTICE_METRIC_HELP
from .engine.lattice_metrics import REPORT_KEYS
from .models import Job, Result

LATTICE_ALGORITHMS = ("flash", "incognito", "samarati", "exhaustive")
MAX_NODES = 250_000  # larger lattices are not evaluated on demand
PREVIEW_ROWS = 50
SHOWN_LABELS = 3
SYNC_ROWS = 200_000  # "keep" runs the new job at once up to this many records, queues it otherwise
CACHE_VERSION = 1
METRIC_LABELS = {"discernibility": "Discernibility", "height": "Generalization height", "ncp": "NCP",
                 "entropy": "Non-uniform entropy"}
# metric key in the report -> label; the order of the node's metrics table
NODE_METRICS = {
    "equivalence_classes": "Equivalence classes",
    "min_class_size": "Smallest EC",
    "suppressed": "Suppressed records",
    "discernibility": "Discernibility C_DM",
    "generalization_height": "Generalization height",
    "ncp": "NCP (information loss)",
    "non_uniform_entropy": "Non-uniform entropy",
    "c_avg": "C_AVG",
    "prosecutor_risk_highest": "Highest prosecutor risk",
    "prosecutor_risk_average": "Average prosecutor risk",
}


# ---- helpers -----------------------------------------------------------------------------------
def is_lattice_job(job: Job) -> bool:
    return job.algorithm in LATTICE_ALGORITHMS


def _lattice_job(request, job_id) -> Job:
    """The user's finished lattice job with a result, or 404."""
    job = get_object_or_404(Job.objects.select_related("dataset"), pk=job_id, owner=request.user)
    if not is_lattice_job(job) or job.status != Job.SUCCEEDED or not Result.objects.filter(job=job).exists():
        raise Http404("this job has no solution lattice")
    return job


def cache_dir(job: Job) -> Path:
    return Path(settings.MEDIA_ROOT) / "results" / f"job-{job.pk}-lattice"


def _read_cache(path: Path):
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("version") == CACHE_VERSION else None


def _write_cache(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, separators=(",", ":"), default=_json_default)
    os.replace(tmp, path)


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return None if math.isnan(o) else float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    raise TypeError(type(o).__name__)


def _job_table(job: Job):
    """The original frame, the engine Table of the job's snapshot and a hierarchy for every QI."""
    frame = services.load_frame(job.dataset)
    table = services.table_from_config(frame, job.config, job.dataset.name)
    try:
        given = services.hierarchies_from_config(job.owner, job.config)
    except Exception as exc:  # a hierarchy of the snapshot was deleted since
        raise engine.InputError(f"a hierarchy this job used is no longer available ({exc})") from None
    return frame, table, table.hierarchies(given)


def job_metric(job: Job) -> str:
    metric = (job.options or {}).get("metric") or "discernibility"
    return metric if metric in REPORT_KEYS else "discernibility"


def _level_labels(h, level: int) -> str:
    labels = [str(x) for x in h.labels[level]]
    if level == 0:
        return f"original values ({len(labels)})"
    sample = ", ".join(labels[:SHOWN_LABELS]) + (", …" if len(labels) > SHOWN_LABELS else "")
    return f"{len(labels)} value(s): {sample}"


def _split(levels: str, sep: str) -> list[int]:
    return [int(x) for x in (levels.split(sep) if sep else levels)]


# ---- the lattice -------------------------------------------------------------------------------
def lattice_data(job: Job) -> dict:
    """The whole lattice of the job (cached); kept nodes are added per request by the view."""
    path = cache_dir(job) / "lattice.json"
    cached = _read_cache(path)
    if cached is not None:
        return cached
    report = Result.objects.get(job=job).report
    _, table, hs = _job_table(job)
    ordered = [hs[c] for c in table.qi]
    stored = (report.get("search") or {}).get("lattice")
    metric = (report.get("search") or {}).get("metric") or job_metric(job)
    if stored is not None:
        source = "stored with the job's result (keep_lattice)"
    else:
        size = 1
        for h in ordered:
            size *= h.height + 1
        if size > MAX_NODES:
            raise engine.InputError(f"the lattice has {size:,} nodes, more than the {MAX_NODES:,} evaluated on "
                                    "demand")
        result = engine.anonymize(table, hs, "exhaustive", k=job.k, suppression_limit=job.suppression_limit,
                                  options={"metric": metric, "keep_lattice": "yes"})
        stored = result.search["lattice"]
        source = "computed by an exhaustive evaluation of every node"
    data = build_lattice(stored, ordered, metric)
    data.update(version=CACHE_VERSION, source=source,
                result=services.transformation_key(report))
    _write_cache(path, data)
    return data


def build_lattice(stored: dict, hierarchies: list, metric: str) -> dict:
    """The exported lattice (LatticeSearch.export) as columns for the plot, with ranks, positions and
    the frontier (minimal anonymous and maximal non-anonymous nodes)."""
    heights = [int(h) for h in stored["heights"]]
    shape = tuple(h + 1 for h in heights)
    sep = "" if max(shape, default=1) <= 10 else "."
    nodes = stored["nodes"]
    size = len(nodes)
    levels = np.array([_split(n[0], sep) for n in nodes], dtype=np.int64).reshape(size, len(shape))
    letters = [n[1] for n in nodes]
    values = [n[2] for n in nodes]
    index = np.ravel_multi_index(tuple(levels.T), shape) if len(shape) else np.zeros(size, dtype=np.int64)
    anon = np.zeros(shape, dtype=bool)
    known = np.zeros(shape, dtype=bool)
    flat_anon = np.array([t in "Aa" for t in letters], dtype=bool)
    flat_known = np.array([t != "?" for t in letters], dtype=bool)
    anon.reshape(-1)[index] = flat_anon
    known.reshape(-1)[index] = flat_known
    fail = known & ~anon
    has_anon_child = np.zeros(shape, dtype=bool)
    has_fail_parent = np.zeros(shape, dtype=bool)
    for j in range(len(shape)):
        lo = [slice(None)] * len(shape)
        hi = [slice(None)] * len(shape)
        lo[j] = slice(0, -1)
        hi[j] = slice(1, None)
        has_anon_child[tuple(hi)] |= anon[tuple(lo)]
        has_fail_parent[tuple(lo)] |= fail[tuple(hi)]
    frontier = ((anon & ~has_anon_child) | (fail & ~has_fail_parent)).reshape(-1)[index]
    ranks = levels.sum(axis=1)
    # position within the level: nodes of a rank in index order, centred on 0
    order = np.lexsort((index, ranks))
    x = np.zeros(size)
    counts = np.bincount(ranks, minlength=int(ranks.max(initial=0)) + 1)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    sorted_ranks = ranks[order]
    x[order] = np.arange(size) - starts[sorted_ranks] - (counts[sorted_ranks] - 1) / 2.0
    return {
        "qi": list(stored["qi"]),
        "heights": heights,
        "labels": [[_level_labels(h, lv) for lv in range(h.height + 1)] for h in hierarchies],
        "metric": metric,
        "metric_label": METRIC_LABELS.get(metric, metric),
        "metric_help": LATTICE_METRIC_HELP,
        "optimum": ",".join(str(v) for v in _split(stored["optimum"], sep)),
        "size": size,
        "anonymous": int(flat_anon.sum()),
        "frontier_count": int(frontier.sum()),
        "nodes": {
            "levels": [",".join(str(v) for v in row) for row in levels.tolist()],
            "tag": letters,
            "value": values,
            "rank": ranks.tolist(),
            "x": [float(v) for v in x],
            "frontier": [int(v) for v in frontier],
        },
    }


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
def lattice(request, job_id):
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


@login_required
@require_GET
def lattice_data_view(request, job_id):
    job = _lattice_job(request, job_id)
    try:
        data = lattice_data(job)
    except engine.EngineError as exc:
        return JsonResponse({"error": str(exc)}, status=422)
    data = dict(data, kept=kept_nodes(job))
    return JsonResponse(data)


# ---- one node ----------------------------------------------------------------------------------
def _checked_levels(job: Job, text: str) -> list[int]:
    data_qi = [c["name"] for c in job.config.get("columns", []) if c["role"] == engine.Role.QUASI_IDENTIFYING.value]
    result = Result.objects.get(job=job)
    qi = result.report.get("quasi_identifiers") or data_qi
    heights = (result.report.get("search") or {}).get("lattice", {}).get("heights")
    if heights is None:
        cached = _read_cache(cache_dir(job) / "lattice.json")
        heights = cached["heights"] if cached else None
    if heights is None:
        _, table, hs = _job_table(job)
        qi, heights = list(table.qi), [hs[c].height for c in table.qi]
    return parse_levels(text, list(qi), [int(h) for h in heights])


def node_detail(job: Job, levels: list[int]) -> dict:
    """The node's anonymized table (first rows, beside the original) and its metrics (cached)."""
    key = ",".join(map(str, levels))
    path = cache_dir(job) / f"node-{key.replace(',', '-')}.json"
    cached = _read_cache(path)
    if cached is not None:
        return cached
    frame, table, hs = _job_table(job)
    data = {"version": CACHE_VERSION, "levels": key, "qi": list(table.qi)}
    try:
        result = engine.anonymize(table, hs, "full-domain", k=job.k, suppression_limit=job.suppression_limit,
                                  sensitive=job.sensitive or None, options={"levels": key})
    except engine.UnsatisfiableError as exc:
        data.update(anonymous=False, message=str(exc))
        _write_cache(path, data)
        return data
    report = json.loads(json.dumps(result.report(), default=_json_default))
    after, before = report["metrics"], report["metrics_before"]
    data.update(
        anonymous=True,
        message="",
        k_achieved=report["k_achieved"],
        suppressed=report["suppressed"],
        records=report["records"],
        transformation=[{"qi": qi, "level": lv, "label": report["transformation_labels"].get(qi, "")}
                        for qi, lv in services.transformation_levels(report)],
        metrics=after,
        metric_rows=[{"key": key_, "label": label, "before": before.get(key_), "after": after.get(key_)}
                     for key_, label in NODE_METRICS.items() if key_ in after],
        table=comparison(frame, result.output, result.suppressed, PREVIEW_ROWS, report["identifying_removed"]),
    )
    _write_cache(path, data)
    return data


def comparison(frame, output, suppressed, rows: int, identifying: list[str]) -> dict:
    """The first rows of the original and the anonymized table; changed anonymized cells flagged."""
    orig = frame.iloc[:rows]
    out = output.iloc[:rows]
    orig_cols, out_cols = [str(c) for c in frame.columns], [str(c) for c in output.columns]
    shown = []
    for i in range(len(out)):
        o = orig.iloc[i] if i < len(orig) else None
        a = out.iloc[i]
        shown.append({
            "number": i + 1,
            "suppressed": bool(suppressed[i]),
            "original": ["" if o is None else str(o[c]) for c in frame.columns],
            "anonymized": [str(a[c]) for c in output.columns],
            "changed": [o is None or c not in frame.columns or str(a[c]) != str(o[c]) for c in output.columns],
        })
    return {"original_columns": orig_cols, "anonymized_columns": out_cols,
            "identifying": [str(c) for c in identifying], "rows": shown}


@login_required
@require_GET
def lattice_node(request, job_id):
    job = _lattice_job(request, job_id)
    try:
        levels = _checked_levels(job, request.GET.get("levels", ""))
        data = node_detail(job, levels)
    except engine.InputError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    except engine.EngineError as exc:
        return JsonResponse({"error": str(exc)}, status=422)
    data = dict(data, kept=kept_nodes(job).get(data["levels"]))
    return JsonResponse(data)


@login_required
@require_POST
def lattice_keep(request, job_id):
    job = _lattice_job(request, job_id)
    page = reverse("anonymizer:lattice", kwargs={"job_id": job.pk})
    try:
        levels = _checked_levels(job, request.POST.get("levels", ""))
        key = ",".join(map(str, levels))
        new = services.create_job(job.dataset, "full-domain", job.k, job.suppression_limit, job.sensitive,
                                  options={"levels": key})
    except engine.EngineError as exc:
        messages.error(request, str(exc))
        return redirect(page)
    new.config = job.config  # the lattice's setup, even if the dataset's roles changed since
    new.save(update_fields=["config"])
    if job.dataset.n_rows > SYNC_ROWS:
        services.submit_job(new)
        messages.success(request, f"The transformation {key} is being applied as a new job.")
        return redirect("anonymizer:job", job_id=new.pk)
    new = services.run_job(new)
    if new.status != Job.SUCCEEDED:
        messages.error(request, f"The transformation {key} could not be kept: {new.message}")
        return redirect("anonymizer:job", job_id=new.pk)
    messages.success(request, f"The transformation {key} of the lattice is now a result of its own.")
    return redirect("anonymizer:result", job_id=new.pk)
