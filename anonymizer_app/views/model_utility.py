"""Models trained on the release: the form of a finished run or synthetic set (/jobs/<id>/result/models/: target,
features, models, encoding, split (none for a synthetic set: its test rows are those held out of it), seed) queues a job of kind "model-utility" (services.model_utility; trained on a worker,
never in the request) and lists the run's earlier ones; the job's page (/jobs/<id>/models/) shows the figures of
each model trained on the input and on the release and of the baseline, as a table and a plotly bar chart.
Owner-only: another user's job is a 404. Every value is escaped by the template, and by plotly_escape in the
chart."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from accounts.throttling import throttle

from ..engine import InputError
from ..engine.measure.synthetic_utility import SPLIT_KIND
from ..model_utility_forms import ModelUtilityForm
from ..models import Job
from ..plotly_text import plotly_escape
from ..services import model_utility as utility_service
from ..services import synthetic_utility
from .common import format_duration, job_result, owned_job, queue_job

COLOURS = {"original": "#2563eb", "release": "#16a34a", "release_on_original": "#d97706", "synthetic": "#7c3aed",
           "baseline": "#8a94a6"}
WAYS = ("original", "release", "release_on_original", "synthetic", "baseline")


@login_required
@require_http_methods(["GET", "POST"])
@throttle("run")
def utility_form(request, job_id):
    source = owned_job(request, job_id)
    try:
        result = utility_service.check_source(source)
    except InputError as exc:
        raise Http404(str(exc)) from None
    info = utility_service.utility_columns(result)
    if not info["targets"]:
        raise Http404("this run publishes no column outside its quasi-identifiers to predict")
    synthetic = source.kind == Job.SYNTHESIS
    form = ModelUtilityForm(request.POST or None, columns=info["columns"], targets=info["targets"],
                            synthetic=synthetic)
    if request.method == "POST" and form.is_valid():
        try:
            job = utility_service.create_utility_job(source, form.spec_data())
        except InputError as exc:
            form.add_error(None, str(exc))
        else:
            queue_job(request, job)
            return redirect("anonymizer:job", job_id=job.pk)
    past = [{"job": j, "spec": (j.options or {}).get("utility", {})} for j in utility_service.utility_jobs(source)[:10]]
    return render(request, "anonymizer/model_utility.html", {
        "job": source, "dataset": source.dataset, "form": form, "past": past, "qi": info["qi"],
        "synthetic": synthetic, "source_url": source_url(source),
        "held_out": synthetic_utility.held_out_rows(source) if synthetic else None})


def source_url(source: Job) -> str:
    """The page of the run's result or of the synthetic set."""
    if source.kind == Job.SYNTHESIS:
        return reverse("anonymizer:synthesis_result", args=[source.pk])
    return reverse("anonymizer:result", args=[source.pk])


def figure(figures: dict) -> dict:
    """Plotly figure (a dict): per model and metric, the bars of the original, the release and the baseline."""
    import plotly.graph_objects as go

    rows = figures["rows"]
    metrics = figures["metrics"]
    labels = figures["metric_labels"]
    models = [r for r in dict.fromkeys(r["model"] for r in rows) if r != "baseline"]
    names = {r["model"]: r["model_label"].split(" (")[0] for r in rows}
    x = [[plotly_escape(names[m]) for m in models for _ in metrics], [labels[k] for _ in models for k in metrics]]
    baseline = next(r for r in rows if r["model"] == "baseline")
    traces = []
    for way in WAYS:
        mine = {r["model"]: r for r in rows if r["trained_on"] == way}
        if not mine:
            continue
        values = [(baseline if way == "baseline" else mine.get(m, {})).get(k) for m in models for k in metrics]
        label = next(iter(mine.values()))["trained_on_label"]
        traces.append(go.Bar(x=x, y=values, name=plotly_escape(label), marker_color=COLOURS[way],
                             hovertemplate="%{fullData.name}, %{x}: %{y:.4f}<extra></extra>"))
    layout = dict(template="none", paper_bgcolor="#ffffff", plot_bgcolor="#ffffff", height=420, barmode="group",
                  margin=dict(l=70, r=20, t=40, b=80),
                  title=dict(text=f"Models predicting {plotly_escape(figures['spec']['target'])}", font=dict(size=14)),
                  legend=dict(orientation="h", y=-0.25),
                  yaxis=dict(title=dict(text="score"), gridcolor="#e6ebf1", automargin=True),
                  xaxis=dict(automargin=True))
    return json.loads(go.Figure(data=traces, layout=layout).to_json())


@login_required
@require_GET
def utility_result(request, job_id):
    j = owned_job(request, job_id)
    if j.kind != Job.MODEL_UTILITY:
        raise Http404("this job does not train models on a release")
    if j.status != Job.SUCCEEDED:
        return redirect("anonymizer:job", job_id=j.pk)
    figures = job_result(j).report.get("model_utility") or {}
    spec = figures.get("spec", {})
    split = figures.get("split", {})
    source_id = (j.options or {}).get("source_job")
    source = Job.objects.filter(pk=source_id, owner=j.owner).first() if source_id else None
    return render(request, "anonymizer/model_utility_result.html", {
        "job": j, "dataset": j.dataset, "source_id": source_id if source else None, "figures": figures,
        "source_url": source_url(source) if source else "", "synthetic": split.get("kind") == SPLIT_KIND,
        "spec": spec, "split": split, "rows": utility_service.figure_rows(figures),
        "metric_labels": [figures["metric_labels"][m] for m in figures["metrics"]],
        "test_percent": (f"{split.get('test_share', 0) * 100:.3g}" if split.get("kind") == SPLIT_KIND
                         else f"{spec.get('test_share', 0) * 100:g}"), "duration": format_duration(j.duration),
        "chart": figure(figures)})
