"""Pages of the anonymizer app: datasets, columns, runs, jobs and results.

Everything is owner-scoped: a dataset or job of another user is a 404 on every URL, and every
view requires a login. The work itself happens in ``services`` (shared with Celery and the CLI).
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Count, Q
from django.http import Http404, HttpResponse, HttpResponseBadRequest, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from . import demo, services
from .engine import ALGORITHMS, METRIC_HELP, EngineError, Format, InputError, Role, sniff
from .engine.reader import DELIMITER_NAMES
from .forms import (
    DELIMITER_CHOICES,
    ROLE_HELP,
    ColumnsForm,
    CompareForm,
    ExperimentForm,
    FormatForm,
    RunForm,
    UploadForm,
    delimiter_name,
    parse_delimiter,
)
from .models import Dataset, Job, Result

log = logging.getLogger(__name__)

PREVIEW_ROWS = 20
SAMPLE_VALUES = 5
RESULT_PAGE_SIZE = 50
JOBS_PAGE_SIZE = 50
TOP_VALUES = 30
STREAM_DOWNLOAD_ROWS = 100_000
QI = Role.QUASI_IDENTIFYING.value

# metric key -> (label, how to show it); the order is the order of the metrics table.
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
SUMMARY_CARDS = ["equivalence_classes", "suppressed", "ncp", "discernibility", "prosecutor_risk_highest",
                 "prosecutor_risk_average", "records_at_risk"]
SENSITIVE_CARDS = ["homogeneous_classes", "homogeneous_records"]


# ---- helpers -----------------------------------------------------------------------------------
def _dataset(request, dataset_id: int) -> Dataset:
    return get_object_or_404(Dataset, pk=dataset_id, owner=request.user)


def _job(request, job_id) -> Job:
    return get_object_or_404(Job.objects.select_related("dataset"), pk=job_id, owner=request.user)


def _result(job: Job) -> Result:
    result = Result.objects.filter(job=job).first()
    if result is None or job.status != Job.SUCCEEDED:
        raise Http404("this job has no result")
    return result


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


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} min {rest} s"


def algorithm_label(name: str) -> str:
    if name == services.COMPARE:
        return "Comparison"
    if name == services.EXPERIMENT:
        return "Homogeneity experiment"
    info = ALGORITHMS.get(name)
    return info.label if info else name


def default_hierarchy_label(column_type: str) -> str:
    return "default (intervals)" if column_type in ("integer", "decimal") else "default (value → *)"


def _job_rows(jobs) -> list[dict]:
    return [{"job": j, "algorithm": algorithm_label(j.algorithm), "duration": format_duration(j.duration),
             "suppression_percent": f"{j.suppression_limit * 100:g}"} for j in jobs]


# ---- datasets ----------------------------------------------------------------------------------
def _render_index(request, form: UploadForm, status: int = 200):
    datasets = Dataset.objects.filter(owner=request.user).annotate(
        qi_count=Count("columns", filter=Q(columns__role=QI), distinct=True),
        job_count=Count("jobs", distinct=True),
    )
    return render(request, "anonymizer/index.html", {
        "datasets": datasets, "form": form, "max_upload_mb": settings.ANONYMIZER_MAX_UPLOAD_MB}, status=status)


@login_required
@require_GET
def index(request):
    return _render_index(request, UploadForm())


@login_required
@require_http_methods(["GET", "POST"])
def upload(request):
    if request.method == "GET":
        return redirect("anonymizer:index")
    form = UploadForm(request.POST, request.FILES)
    refused = getattr(request, "upload_refused", "")  # cut off on its declared length (uploads.py)
    if refused:
        form.is_valid()  # the file field is empty: its error becomes the reason
        form.errors["file"] = form.error_class([refused])
        return _render_index(request, form, status=413)
    if form.is_valid():
        f = form.cleaned_data["file"]
        try:
            # the upload is on disk (TemporaryFileUploadHandler above FILE_UPLOAD_MAX_MEMORY_SIZE): moved, not read
            dataset = services.create_dataset(request.user, f, f.name, name=form.cleaned_data["name"] or None)
        except InputError as exc:
            form.add_error("file", str(exc))
        else:
            messages.success(request, f"Uploaded {dataset.name}: {dataset.n_rows:,} rows, "
                                      f"{dataset.n_columns} columns. Check the preview, then set the column roles.")
            return redirect("anonymizer:dataset", dataset_id=dataset.pk)
    return _render_index(request, form)


@login_required
@require_POST
def load_demo(request):
    try:
        datasets = demo.load_demo(request.user)
    except EngineError as exc:
        messages.error(request, f"The demo data could not be loaded: {exc}")
    else:
        messages.success(request, "Loaded the demo datasets: " + ", ".join(d.name for d in datasets) + ".")
    return redirect("anonymizer:index")


def _detected_format(dataset: Dataset) -> Format | None:
    """What sniffing the original says now (shown beside the format in use)."""
    try:
        with dataset.original.open("rb") as fh:
            head = fh.read(65537)
        return sniff(head, dataset.original_name)
    except (OSError, EngineError):
        return None


@login_required
@require_http_methods(["GET", "POST"])
def dataset(request, dataset_id: int):
    ds = _dataset(request, dataset_id)
    initial = {"delimiter": delimiter_name(ds.delimiter), "encoding": ds.encoding, "header": ds.has_header}
    if request.method == "POST":
        form = FormatForm(request.POST, kind=ds.kind, initial=initial)
        if form.is_valid():
            d = form.cleaned_data
            fmt = Format(ds.kind, d.get("delimiter", ds.delimiter), d.get("encoding", ds.encoding), d["header"])
            try:
                services.reformat_dataset(ds, fmt)
            except InputError as exc:
                form.add_error(None, str(exc))
                ds.refresh_from_db()
            else:
                messages.success(request, f"Re-read {ds.original_name}: {ds.n_rows:,} rows, {ds.n_columns} columns. "
                                          "Column types and roles were detected anew.")
                return redirect("anonymizer:dataset", dataset_id=ds.pk)
    else:
        form = FormatForm(kind=ds.kind, initial=initial)
    head = services.dataset_rows(ds, 0, PREVIEW_ROWS)  # the first row group only
    columns = list(ds.columns.all())
    detected = _detected_format(ds)
    return render(request, "anonymizer/dataset.html", {
        "dataset": ds,
        "tab": "data",
        "form": form,
        "columns": columns,
        "preview_rows": [list(row) for row in head.itertuples(index=False)],
        "preview_count": len(head),
        "delimiter_label": DELIMITER_NAMES.get(ds.delimiter, ds.delimiter),
        "detected": detected,
        "detected_delimiter": DELIMITER_NAMES.get(detected.delimiter, detected.delimiter) if detected else "",
    })


@login_required
@require_http_methods(["GET", "POST"])
def columns(request, dataset_id: int):
    ds = _dataset(request, dataset_id)
    cols = list(ds.columns.select_related("hierarchy"))
    stored = set(services.dataset_columns(ds))
    if request.method == "POST":
        # a type change is checked on the column's distinct values, read alone
        form = ColumnsForm(request.POST, columns=cols,
                           values=lambda name: services.distinct_values(ds, name) if name in stored else None)
        if form.is_valid():
            changes = form.changes()
            with transaction.atomic():
                for c in cols:
                    c.type, c.role = changes[c.name]
                    c.save(update_fields=["type", "role"])
            n_qi = sum(1 for t, r in changes.values() if r == QI)
            messages.success(request, f"Saved the column settings ({n_qi} quasi-identifier"
                                      f"{'' if n_qi == 1 else 's'}).")
            return redirect("anonymizer:columns", dataset_id=ds.pk)
    else:
        form = ColumnsForm(columns=cols)
    rows = []
    for c in cols:
        sample = services.column_samples(ds, c.name, SAMPLE_VALUES) if c.name in stored else []
        rows.append({
            "column": c,
            "type_field": form[f"type:{c.name}"],
            "role_field": form[f"role:{c.name}"],
            "unique": ds.n_rows > 1 and c.distinct_count == ds.n_rows,
            "sample": sample,
            "hierarchy_url": f"/hierarchies/dataset/{ds.pk}/column/{c.pk}/",
            "hierarchy_label": c.hierarchy.name if c.hierarchy_id else default_hierarchy_label(c.type),
        })
    return render(request, "anonymizer/columns.html", {
        "dataset": ds, "tab": "columns", "form": form, "rows": rows, "role_help": ROLE_HELP,
        "qi_count": sum(1 for c in cols if c.role == QI),
    })


@login_required
@require_http_methods(["GET", "POST"])
def run(request, dataset_id: int):
    ds = _dataset(request, dataset_id)
    cols = list(ds.columns.all())
    sensitive = [c.name for c in cols if c.role == Role.SENSITIVE.value]
    # δ-presence: the research subset is marked by a 0/1 column that is neither a QI nor identifying
    subset = [c.name for c in cols if c.role in (Role.SENSITIVE.value, Role.INSENSITIVE.value)]
    # ... or this dataset is the research subset of another of the owner's datasets (the population)
    populations = list(Dataset.objects.filter(owner=request.user).exclude(pk=ds.pk).order_by("name"))
    if request.method == "POST":
        form = RunForm(request.POST, sensitive_columns=sensitive, subset_columns=subset, populations=populations)
        if form.is_valid():
            d = form.cleaned_data
            population = next((p for p in populations if p.pk == form.population()), None)
            try:
                options = form.algorithm_options()
                if d.get("suppressed_rows") == "keep":  # a publishing option, kept with the job's options
                    options = dict(options, suppressed_rows="keep")
                job = services.create_job(ds, d["algorithm"], d["k"], d["suppression_percent"] / 100.0,
                                          d["sensitive"] or "", options, form.privacy_models(),
                                          population=population)
            except InputError as exc:
                form.add_error(None, str(exc))
            else:
                _submit(request, job)
                return redirect("anonymizer:job", job_id=job.pk)
    else:
        form = RunForm(sensitive_columns=sensitive, subset_columns=subset, populations=populations)
    return render(request, "anonymizer/run.html", {
        "dataset": ds,
        "tab": "run",
        "form": form,
        "algorithms": list(ALGORITHMS.values()),
        "qi_columns": [c for c in cols if c.role == QI],
        "identifying": [c.name for c in cols if c.role == Role.IDENTIFYING.value],
        "recent_jobs": _job_rows(ds.jobs.all()[:5]),
    })


def _submit(request, job: Job) -> None:
    try:
        services.submit_job(job)
    except Exception as exc:  # broker unreachable: the job would wait forever, so end it and say why
        log.exception("could not queue job %s", job.pk)
        Job.objects.filter(pk=job.pk, status=Job.QUEUED).update(
            status=Job.FAILED, finished=timezone.now(), message=f"could not queue the job: {exc}")
        messages.error(request, "The job could not be queued; is a Celery worker and broker running?")
    else:
        messages.success(request, f"Queued {algorithm_label(job.algorithm)} with k={job.k} on {job.dataset.name}.")


# ---- jobs --------------------------------------------------------------------------------------
@login_required
@require_GET
def jobs(request):
    qs = Job.objects.filter(owner=request.user).select_related("dataset")
    page = Paginator(qs, JOBS_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "anonymizer/jobs.html", {"page": page, "rows": _job_rows(page.object_list)})


RESULT_PAGES = {services.COMPARE: "anonymizer:comparison", services.EXPERIMENT: "anonymizer:experiment_result"}


def _status_payload(job: Job) -> dict:
    succeeded = job.status == Job.SUCCEEDED
    return {
        "status": job.status,
        "progress": round(job.progress, 4),
        "phase": job.phase,
        "message": job.message,
        "finished": job.is_finished,
        "result_url": (reverse(RESULT_PAGES.get(job.algorithm, "anonymizer:result"), args=[job.pk])
                       if succeeded else None),
    }


@login_required
@require_GET
def job(request, job_id):
    j = _job(request, job_id)
    columns = j.config.get("columns", [])
    return render(request, "anonymizer/job.html", {
        "job": j,
        "algorithm": algorithm_label(j.algorithm),
        "duration": format_duration(j.duration),
        "suppression_percent": f"{j.suppression_limit * 100:g}",
        "qis": [c["name"] for c in columns if c["role"] == QI],
        "identifying": [c["name"] for c in columns if c["role"] == Role.IDENTIFYING.value],
        "progress_percent": round(j.progress * 100, 1),
        "status_json": {**_status_payload(j), "status_url": reverse("anonymizer:job_status", args=[j.pk])},
    })


@login_required
@require_GET
def job_status(request, job_id):
    response = JsonResponse(_status_payload(_job(request, job_id)))
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def job_cancel(request, job_id):
    j = _job(request, job_id)
    if j.is_finished:
        messages.info(request, f"This job has already {j.status}.")
        return redirect("anonymizer:job", job_id=j.pk)
    Job.objects.filter(pk=j.pk).update(cancel_requested=True)
    # Still waiting for a worker: end it now (the worker skips jobs that are no longer queued).
    stopped = Job.objects.filter(pk=j.pk, status=Job.QUEUED).update(
        status=Job.CANCELLED, finished=timezone.now(), phase="cancelled", message="cancelled before it started")
    if stopped:
        messages.success(request, "Job cancelled.")
    else:
        messages.info(request, "Cancelling: the worker stops at its next progress report.")
    return redirect("anonymizer:job", job_id=j.pk)


# ---- results -----------------------------------------------------------------------------------
def _figure_json(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


# Plotly's named templates cost ~100 ms per figure to validate; this light style is set directly.
AXIS_STYLE = dict(gridcolor="#e6ebf1", zerolinecolor="#dde3ea", linecolor="#dde3ea", automargin=True)
LAYOUT_STYLE = dict(template="none", paper_bgcolor="#ffffff", plot_bgcolor="#ffffff",
                    font=dict(family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif", size=12, color="#1d2733"),
                    hoverlabel=dict(bgcolor="#ffffff"), bargap=0.15, showlegend=False)


def class_size_figure(histogram: dict) -> dict:
    sizes = sorted(histogram, key=int)
    bar = go.Bar(x=sizes, y=[histogram[s] for s in sizes], marker_color="#1f4e79",
                 hovertemplate="EC size %{x}: %{y} class(es)<extra></extra>")
    layout = dict(**LAYOUT_STYLE, margin=dict(l=60, r=20, t=20, b=60), height=320,
                  xaxis=dict(title=dict(text="records in the equivalence class"), type="category", **AXIS_STYLE),
                  yaxis=dict(title=dict(text="number of equivalence classes"), **AXIS_STYLE))
    return _figure_json(go.Figure(data=[bar], layout=layout))


def _short(label: str, width: int = 24) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def distribution_figure(before: dict, after: dict) -> dict:
    """Top values of one QI in the original (left) and the anonymized table (right); each side is
    services.value_counts() output: {"values": [...], "counts": [...], ...}."""
    bars, axes, longest = [], [], 1
    for i, (side, color) in enumerate(((before, "#8aa4bf"), (after, "#2f855a"))):
        labels = [str(v) for v in side["values"][:TOP_VALUES]]
        counts = list(side["counts"][:TOP_VALUES])
        longest = max([longest, *(len(_short(v)) for v in labels)])
        bars.append(go.Bar(x=labels, y=counts, marker_color=color,
                           xaxis="x2" if i else "x", yaxis="y2" if i else "y",
                           hovertemplate="%{x}: %{y} record(s)<extra></extra>"))
        # long values are shortened on the axis only; the hover shows them whole
        axes.append(dict(domain=[0.53, 1] if i else [0, 0.47], type="category", tickangle=-45,
                         tickvals=labels, ticktext=[_short(v) for v in labels], **AXIS_STYLE))
    title = dict(xref="paper", yref="paper", y=1.0, yanchor="bottom", showarrow=False, font=dict(size=13))
    bottom = 30 + int(longest * 5.5)
    layout = dict(
        **LAYOUT_STYLE, margin=dict(l=60, r=20, t=40, b=bottom), height=300 + bottom,
        xaxis=axes[0], xaxis2=axes[1],
        yaxis=dict(title=dict(text="records"), **AXIS_STYLE),
        yaxis2=dict(anchor="x2", **AXIS_STYLE),
        annotations=[dict(text=f"Original (top {TOP_VALUES})", x=0.235, **title),
                     dict(text=f"Anonymized (top {TOP_VALUES})", x=0.765, **title)],
    )
    return _figure_json(go.Figure(data=bars, layout=layout))


CHART_SAMPLE = 200_000


def _sampled_counts(res: Result, ds: Dataset, qis: list[str], stale: bool, n: int) -> tuple[dict, int]:
    """Value counts for results stored before the counts were: on a sample of CHART_SAMPLE rows."""
    rng = np.random.default_rng(0)
    rows = np.sort(rng.choice(n, CHART_SAMPLE, replace=False)) if n > CHART_SAMPLE else None
    out_cols = [q for q in qis if q in services.output_columns(res)]
    output, _ = services.load_output(res)
    frame = None if stale else services.load_frame(ds, columns=[q for q in out_cols if q in services.dataset_columns(ds)])
    counts = {}
    for q in out_cols:
        after = output[q] if rows is None else output[q].iloc[rows]
        before = (frame[q] if rows is None else frame[q].iloc[rows]) if frame is not None and q in frame else after.iloc[:0]
        counts[q] = {"before": services.value_counts(before), "after": services.value_counts(after)}
    return counts, (n if rows is None else CHART_SAMPLE)


def _metric_rows(report: dict, keys) -> list[dict]:
    after, before = report.get("metrics", {}), report.get("metrics_before", {})
    rows = []
    for key in keys:
        if key not in after and key not in before:
            continue
        label, kind = METRICS[key]
        rows.append({"key": key, "label": label, "help": METRIC_HELP.get(key, ""),
                     "before": format_value(before.get(key), kind), "after": format_value(after.get(key), kind)})
    return rows


def _comparison(frame, output, suppressed, start: int, identifying: list[str]) -> dict:
    """One page of the original and the anonymized rows (already cut to the page), aligned by row."""
    orig_cols = list(frame.columns)
    out_cols = list(output.columns)
    rows = []
    for i in range(len(output)):
        o = frame.iloc[i] if i < len(frame) else None
        a = output.iloc[i]
        original_cells = [{"value": "" if o is None else str(o[c]), "struck": c in identifying} for c in orig_cols]
        anonymized_cells = [
            {"value": str(a[c]), "changed": o is None or c not in frame.columns or str(a[c]) != str(o[c])}
            for c in out_cols
        ]
        shown = output.attrs.get("rows")  # the dataset row it comes from (suppressed rows may be left out)
        number = int(shown[i]) + 1 if shown is not None and shown[i] >= 0 else start + i + 1
        rows.append({"number": number, "suppressed": bool(suppressed[i]),
                     "original": original_cells, "anonymized": anonymized_cells})
    return {
        "original_columns": [{"name": c, "struck": c in identifying} for c in orig_cols],
        "anonymized_columns": out_cols,
        "rows": rows,
    }


RECODING_TEXT = {
    "multidimensional": "multidimensional recoding ({label}): each equivalence class has its own ranges",
    "local": "local recoding ({label}): each cluster is generalized on its own",
}


def _recoding_rows(report: dict) -> list[dict]:
    """Per QI: how many distinct values the output has (local/multidimensional recodings)."""
    labels = report.get("transformation_labels", {})
    counts = report.get("value_counts", {})
    rows = []
    for qi in report.get("quasi_identifiers", []):
        distinct = counts.get(qi, {}).get("after", {}).get("distinct")
        if distinct is None:
            m = re.search(r"(\d+) distinct", labels.get(qi, ""))
            distinct = int(m.group(1)) if m else None
        before = counts.get(qi, {}).get("before", {}).get("distinct")
        rows.append({"qi": qi, "distinct": distinct, "before": before})
    return rows


def _plain_rows(d: dict) -> list[dict]:
    """Options or search statistics as (name, shown value) rows."""
    out = []
    for key, value in (d or {}).items():
        if isinstance(value, bool):
            shown = "yes" if value else "no"
        elif isinstance(value, int):
            shown = f"{value:,}"
        elif isinstance(value, float):
            shown = f"{value:,.4g}"
        elif isinstance(value, (dict, list)):
            shown = json.dumps(value)
        else:
            shown = str(value)
        out.append({"name": key.replace("_", " "), "key": key, "value": shown})
    return out


# ---- privacy models and the attack report ------------------------------------------------------
ATTACK_WORST = 30  # ECs in the table and the chart of the attack report
PALETTE = ["#1f4e79", "#2f855a", "#c05621", "#6b46c1", "#b83280", "#2c7a7b", "#975a16", "#4a5568", "#e53e3e",
           "#38a169", "#3182ce", "#d69e2e"]


def _model_value(check: dict) -> str:
    value = check.get("value")
    if value is None:
        return "—"
    if isinstance(value, list):
        return "[" + ", ".join(f"{v:.3g}" for v in value) + "]"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.3g}"


def model_cards(report: dict) -> list[dict]:
    """One card per privacy model of the run (k included): what was asked, the figure reached, whether it holds."""
    checks = report.get("model_checks")
    if checks is None:  # results stored before the checks were: the models only (verified results hold them)
        checks = [{"describe": m.get("model", ""), "holds": report.get("verified")} for m in report.get("models", [])]
    return [{"name": c.get("model", ""), "describe": c.get("describe", ""), "holds": c.get("holds"),
             "value": _model_value(c), "value_label": c.get("value_label", ""),
             "failing": c.get("failing_classes", 0)} for c in checks]


def _worst_classes(attack: dict, limit: int = ATTACK_WORST) -> list[dict]:
    """The ECs of the report with the lowest entropy (ties: the larger EC first), with their EMD to the table."""
    table = attack.get("table_distribution", {})
    values = list(table)
    dists = {d["class"]: d["counts"] for d in attack.get("class_distributions", [])}
    rows = []
    for e in attack.get("entropy", []):
        counts = dists.get(e["class"], {})
        size = e["size"] or 1
        emd = 0.5 * sum(abs(counts.get(v, 0) / size - table[v]) for v in values)
        top = max(counts.items(), key=lambda kv: kv[1]) if counts else ("", 0)
        rows.append({"class": e["class"], "size": e["size"], "entropy": e["entropy"], "emd": emd,
                     "distinct": len(counts), "top_value": top[0], "top_share": top[1] / size, "counts": counts})
    rows.sort(key=lambda r: (r["entropy"], -r["size"], r["class"]))
    return rows[:limit]


def _natural(value: str) -> tuple:
    """Numbers in numeric order before text in alphabetical order."""
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def attack_figure(attack: dict, worst: list[dict]) -> dict:
    """Stacked bars: the sensitive distribution of the worst ECs and, first, of the whole table."""
    # sorted here: stored reports are JSON objects whose key order PostgreSQL (jsonb) does not keep
    values = sorted(attack.get("table_distribution", {}), key=_natural)
    labels = ["table"] + [f"EC {w['class']} ({w['size']})" for w in worst]
    bars = []
    for i, v in enumerate(values):
        shares = [attack["table_distribution"][v]] + [w["counts"].get(v, 0) / (w["size"] or 1) for w in worst]
        bars.append(go.Bar(x=labels, y=shares, name=_short(str(v)), marker_color=PALETTE[i % len(PALETTE)],
                           hovertemplate=f"{v}: %{{y:.1%}} of %{{x}}<extra></extra>"))
    layout = dict(**{**LAYOUT_STYLE, "showlegend": True}, barmode="stack", height=380,
                  margin=dict(l=60, r=20, t=20, b=90), legend=dict(orientation="h", y=-0.35),
                  xaxis=dict(type="category", tickangle=-45, **AXIS_STYLE),
                  yaxis=dict(title=dict(text="share of the EC's records"), tickformat=".0%", range=[0, 1],
                             **AXIS_STYLE))
    return _figure_json(go.Figure(data=bars, layout=layout))


def attack_sections(report: dict) -> tuple[list[dict], dict]:
    """Per sensitive column of report["attack"]: the summary, posteriors, worst ECs; and their charts."""
    sections, figures = [], {}
    for column, attack in (report.get("attack") or {}).items():
        worst = _worst_classes(attack)
        posterior = [{"value": v, "prior": p["prior"], "highest": p["highest"], "class": p["class"],
                      "class_size": p["class_size"], "gain": (p["highest"] / p["prior"]) if p["prior"] else None}
                     for v, p in sorted((attack.get("posterior") or {}).items(), key=lambda vp: _natural(vp[0]))]
        sections.append({
            "column": column, "slug": re.sub(r"[^A-Za-z0-9_-]", "_", column),
            "records": attack.get("records", 0), "classes": attack.get("equivalence_classes", 0),
            "homogeneous_classes": attack.get("homogeneous_classes", 0),
            "homogeneous_records": attack.get("records_in_homogeneous_classes", 0),
            "homogeneous": attack.get("homogeneous", [])[:ATTACK_WORST],
            "worst_emd": attack.get("worst_emd_equal"), "worst_emd_ordered": attack.get("worst_emd_ordered"),
            "entropy_min": attack.get("entropy_min"), "entropy_mean": attack.get("entropy_mean"),
            "posterior": posterior, "worst": worst,
        })
        if worst:
            figures[column] = attack_figure(attack, worst)
    return sections, figures


def _st_page(res: Result, request) -> dict | None:
    """Anatomy: one page of the sensitive table (group, value, count)."""
    st = services.load_sensitive_table(res)
    if st is None:
        return None
    page = Paginator(range(len(st)), RESULT_PAGE_SIZE).get_page(request.GET.get("st_page"))
    start = page.start_index() - 1 if len(st) else 0
    rows = st.iloc[start:page.end_index()].astype(str).values.tolist() if len(st) else []
    return {"columns": [str(c) for c in st.columns], "rows": rows, "page": page}


@login_required
@require_GET
def result(request, job_id):
    j = _job(request, job_id)
    if j.status != Job.SUCCEEDED:
        return redirect("anonymizer:job", job_id=j.pk)
    if j.algorithm in RESULT_PAGES:
        return redirect(RESULT_PAGES[j.algorithm], job_id=j.pk)
    res = _result(j)
    report = res.report
    ds = j.dataset
    n = report.get("records", ds.n_rows)
    research = report.get("research_subset")  # δ-presence against a population: the research rows only
    identifying = report.get("identifying_removed", [])
    page = Paginator(range(n), RESULT_PAGE_SIZE).get_page(request.GET.get("page"))
    start = page.start_index() - 1 if n else 0
    stop = page.end_index() if n else 0
    # only the row groups of this page are read, from the output and from the stored dataset
    output, suppressed = services.output_rows(res, start, stop)
    config_names = [c["name"] for c in j.config.get("columns", [])]
    if j.config.get("population"):
        config_names = j.config["population"].get("research_columns", config_names)
    expected_rows = research["research_records"] if research else report.get("input_records", n)
    stale = ds.n_rows != expected_rows or services.dataset_columns(ds) != config_names
    rows = output.attrs.get("rows")  # the dataset row of each published row (suppressed ones may be left out)
    frame = services.dataset_rows_at(ds, rows) if rows is not None and not stale else \
        services.dataset_rows(ds, start, stop)
    qis = report.get("quasi_identifiers", [])
    sensitive = report.get("sensitive")
    k_achieved = report.get("k_achieved", 0)

    transformation = [
        {"qi": qi, "level": level, "label": report.get("transformation_labels", {}).get(qi, "")}
        for qi, level in services.transformation_levels(report)
    ]
    recoding = report.get("recoding", "full-domain")
    recoding_text = RECODING_TEXT.get(recoding, "{label}").format(label=algorithm_label(j.algorithm))
    counts = report.get("value_counts")
    if counts:
        chart_rows, sampled = n, False
        if stale:
            counts = {q: {"before": {"values": [], "counts": []}, "after": c["after"]} for q, c in counts.items()}
    else:
        counts, chart_rows = _sampled_counts(res, ds, qis, stale, n)
        sampled = chart_rows < n
    charts = {"classes": class_size_figure(report.get("class_size_histogram", {})), "distributions": {}}
    for qi in qis:
        if qi in counts:
            charts["distributions"][qi] = distribution_figure(counts[qi]["before"], counts[qi]["after"])
    attack, charts["attack"] = attack_sections(report)
    return render(request, "anonymizer/result.html", {
        "model_cards": model_cards(report),
        "attack": attack,
        "anatomy": recoding == "anatomy",
        "st": _st_page(res, request) if recoding == "anatomy" else None,
        "job": j,
        "dataset": ds,
        "report": report,
        "algorithm": algorithm_label(j.algorithm),
        "duration": format_duration(j.duration),
        "k_achieved": k_achieved,
        "k_ok": k_achieved >= j.k,
        "k_before": report.get("metrics_before", {}).get("min_class_size", "—"),
        "k_help": METRIC_HELP.get("min_class_size", ""),
        "classes_help": METRIC_HELP.get("equivalence_classes", ""),
        "suppressed_count": report.get("suppressed", 0),
        "suppression_allowed": int(j.suppression_limit * report.get("input_records", n) + 1e-9),
        "research": research,
        "suppression_percent": f"{j.suppression_limit * 100:g}",
        "cards": _metric_rows(report, SUMMARY_CARDS + (SENSITIVE_CARDS if sensitive else [])),
        "all_metrics": _metric_rows(report, METRICS),
        "transformation": transformation,
        "recoding": recoding,
        "recoding_text": recoding_text,
        "recoding_rows": _recoding_rows(report) if not transformation else [],
        "options_rows": _plain_rows(report.get("options")),
        "search_rows": _plain_rows(report.get("search")),
        "identifying": identifying,
        "page": page,
        "table": _comparison(frame, output, suppressed, start, identifying),
        "stale": stale,
        "qis": [q for q in qis if q in charts["distributions"]],
        "charts": charts,
        "chart_rows": chart_rows,
        "chart_sampled": sampled,
        "steps_json": json.dumps(report.get("steps", []), indent=1),
        "delimiter_choices": DELIMITER_CHOICES,
        "default_delimiter": delimiter_name(ds.delimiter),
    })


@login_required
@require_GET
def download_csv(request, job_id):
    j = _job(request, job_id)
    if j.algorithm in RESULT_PAGES:  # a comparison or an experiment has a table of figures, no output rows
        raise Http404("this job has no anonymized output")
    res = _result(j)
    delimiter = parse_delimiter(request.GET.get("delimiter"), j.dataset.delimiter)
    if delimiter is None:
        return HttpResponseBadRequest("delimiter must be one of: " + ", ".join(n for n, _ in DELIMITER_CHOICES),
                                      content_type="text/plain; charset=utf-8")
    drop = request.GET.get("drop_suppressed") == "1"
    if request.GET.get("table") == "st":  # Anatomy's sensitive table (group, value, count)
        st = services.load_sensitive_table(res)
        if st is None:
            raise Http404("this result has no sensitive table")
        response = HttpResponse(services.export_csv(st, delimiter), content_type="text/csv; charset=utf-8")
        filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-sensitive-table.csv"
        response["Content-Disposition"] = content_disposition_header(True, filename)
        return response
    if request.GET.get("shuffle") == "1":  # a permutation of all rows: the one download that loads them all
        frame, suppressed = services.load_output(res)
        if drop:
            frame = frame[~suppressed]
        response = HttpResponse(services.export_csv(frame, delimiter, shuffle=True),
                                content_type="text/csv; charset=utf-8")
    elif res.report.get("records", 0) > STREAM_DOWNLOAD_ROWS:  # streamed a row group at a time
        response = StreamingHttpResponse(services.iter_output_csv(res, delimiter, drop),
                                         content_type="text/csv; charset=utf-8")
    else:
        response = HttpResponse("".join(services.iter_output_csv(res, delimiter, drop)),
                                content_type="text/csv; charset=utf-8")
    filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-anonymized.csv"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


@login_required
@require_GET
def download_config(request, job_id):
    j = _job(request, job_id)
    body = json.dumps(services.job_configuration(j), indent=2, ensure_ascii=False)
    response = HttpResponse(body + "\n", content_type="application/json; charset=utf-8")
    filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-config.json"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


# ---- comparison of algorithms ------------------------------------------------------------------
@login_required
@require_http_methods(["GET", "POST"])
def compare(request, dataset_id: int):
    """Several algorithms for several k on this dataset: queued as one job (algorithm "compare")."""
    ds = _dataset(request, dataset_id)
    cols = list(ds.columns.all())
    sensitive = [c.name for c in cols if c.role == Role.SENSITIVE.value]
    if request.method == "POST":
        form = CompareForm(request.POST, sensitive_columns=sensitive)
        if form.is_valid():
            d = form.cleaned_data
            try:
                job = services.create_comparison(ds, d["algorithms"], d["k_values"], d["suppression_percent"] / 100.0,
                                                 d["sensitive"] or "")
            except InputError as exc:
                form.add_error(None, str(exc))
            else:
                _submit(request, job)
                return redirect("anonymizer:job", job_id=job.pk)
    else:
        form = CompareForm(sensitive_columns=sensitive)
    past = ds.jobs.filter(algorithm=services.COMPARE)[:10]
    return render(request, "anonymizer/compare.html", {
        "dataset": ds, "tab": "compare", "form": form,
        "qi_columns": [c for c in cols if c.role == QI],
        "past": [{"job": j, "algorithms": ", ".join(algorithm_label(a) for a in j.options.get("algorithms", [])),
                  "ks": ", ".join(map(str, j.options.get("k", [])))} for j in past],
    })


def comparison_rows(rows: list[dict]) -> list[dict]:
    """The comparison table as shown: figures formatted, failed runs with their reason."""
    out = []
    for r in rows:
        failed = bool(r.get("error"))
        out.append({
            "algorithm": algorithm_label(r["algorithm"]), "name": r["algorithm"], "k": r["k"], "error": r.get("error", ""),
            "k_achieved": "—" if failed else f"{r['k_achieved']:,}",
            "classes": "—" if failed else f"{r['equivalence_classes']:,}",
            "suppressed": "—" if failed else f"{r['suppressed']:,}",
            "ncp": "—" if failed or r.get("ncp") is None else f"{r['ncp']:.4f}",
            "discernibility": "—" if failed else f"{r['discernibility']:,}",
            "seconds": "—" if failed else format_duration(r["seconds"]),
            "verified": r.get("verified", False),
        })
    return out


@login_required
@require_GET
def comparison(request, job_id):
    j = _job(request, job_id)
    if j.algorithm != services.COMPARE:
        raise Http404("this job is not a comparison")
    if j.status != Job.SUCCEEDED:
        return redirect("anonymizer:job", job_id=j.pk)
    rows = _result(j).report.get("comparison", [])
    if request.GET.get("format") == "csv":
        response = HttpResponse(services.comparison_csv(rows), content_type="text/csv; charset=utf-8")
        filename = f"{Path(j.dataset.original_name).stem}-comparison.csv"
        response["Content-Disposition"] = content_disposition_header(True, filename)
        return response
    return render(request, "anonymizer/comparison.html", {
        "job": j, "dataset": j.dataset, "rows": comparison_rows(rows),
        "algorithms": ", ".join(algorithm_label(a) for a in j.options.get("algorithms", [])),
        "ks": ", ".join(map(str, j.options.get("k", []))),
        "suppression_percent": f"{j.suppression_limit * 100:g}",
        "duration": format_duration(j.duration),
        "charts": services.comparison_figures(rows),
    })


# ---- the seed-001 experiment: homogeneous ECs against k -------------------------------------------
@login_required
@require_http_methods(["GET", "POST"])
def experiment(request, dataset_id: int):
    """Generated people tables and/or this dataset, anonymized once per k; queued as one job
    (algorithm "homogeneity-experiment") that counts the homogeneous equivalence classes."""
    ds = _dataset(request, dataset_id)
    sensitive = [c.name for c in ds.columns.all() if c.role == Role.SENSITIVE.value]
    if request.method == "POST":
        form = ExperimentForm(request.POST, sensitive_columns=sensitive)
        if form.is_valid():
            d = form.cleaned_data
            try:
                job = services.create_experiment(ds, d["sizes"], d["seed"], d["include_dataset"], d["k_values"],
                                                 d["algorithm"], d["suppression_percent"] / 100.0, d["sensitive"] or "")
            except InputError as exc:
                form.add_error(None, str(exc))
            else:
                _submit(request, job)
                return redirect("anonymizer:job", job_id=job.pk)
    else:
        form = ExperimentForm(sensitive_columns=sensitive)
    past = ds.jobs.filter(algorithm=services.EXPERIMENT)[:10]
    return render(request, "anonymizer/experiment.html", {
        "dataset": ds, "tab": "experiment", "form": form,
        "past": [{"job": j, "tables": _experiment_tables(j), "ks": ", ".join(map(str, j.options.get("k", [])))}
                 for j in past],
    })


def _experiment_tables(job: Job) -> str:
    parts = [f"{n:,}" for n in job.options.get("sizes", [])]
    text = f"people of {', '.join(parts)} rows" if parts else ""
    if job.options.get("include_dataset"):
        text = f"{text} and {job.dataset.name}" if text else job.dataset.name
    return text


def experiment_rows(rows: list[dict]) -> list[dict]:
    return [{"table": r["table"], "rows": f"{r['rows']:,}", "k": r["k"], "classes": f"{r['equivalence_classes']:,}",
             "homogeneous": f"{r['homogeneous_classes']:,}", "records": f"{r['homogeneous_records']:,}",
             "share": f"{r['homogeneous_share'] * 100:.1f}%", "k_reached": f"{r['k_reached']:,}",
             "suppressed": f"{r['suppressed']:,}", "transformation": r.get("transformation", ""),
             "seconds": format_duration(r["seconds"])} for r in rows]


@login_required
@require_GET
def experiment_result(request, job_id):
    j = _job(request, job_id)
    if j.algorithm != services.EXPERIMENT:
        raise Http404("this job is not a homogeneity experiment")
    if j.status != Job.SUCCEEDED:
        return redirect("anonymizer:job", job_id=j.pk)
    rows = _result(j).report.get("experiment", [])
    if request.GET.get("format") == "csv":
        response = HttpResponse(services.experiment_csv(rows), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = content_disposition_header(True, "homogeneity-experiment.csv")
        return response
    return render(request, "anonymizer/experiment_result.html", {
        "job": j, "dataset": j.dataset, "rows": experiment_rows(rows), "tables": _experiment_tables(j),
        "algorithm": algorithm_label(j.options.get("algorithm", "")),
        "ks": ", ".join(map(str, j.options.get("k", []))), "seed": j.options.get("seed", 0),
        "suppression_percent": f"{j.suppression_limit * 100:g}", "duration": format_duration(j.duration),
        "chart": services.experiment_figure(rows),
    })
