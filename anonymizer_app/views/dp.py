"""The differential privacy page of a dataset: a noisy histogram (OpenDP's Laplace or geometric mechanism)
or randomized response on one column, with the true figures beside for the owner, the budget spent, the
error against the truth, and a CSV of the release. Owner-only: another user's dataset is a 404.

Every POST is a new release (new noise, its ε spent again); nothing is stored, so "Download CSV" releases
anew rather than re-sending the figures shown. The page says so.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_http_methods

from accounts.throttling import throttle

from ..dp_forms import DPForm
from ..engine import InputError
from ..plotly_text import plotly_escape
from ..services import datasets as dataset_service
from ..services import dp as dp_service
from ..services import exports
from .common import owned_dataset


def comparison_chart(labels: list[str], series: list[tuple[str, list[float]]], title: str) -> dict:
    """Grouped bars: the true figures beside the released (and estimated) ones; labels escaped for plotly."""
    x = [plotly_escape(label) for label in labels]
    colors = ["#1f4e79", "#c05621", "#2f855a"]
    data = [{"type": "bar", "name": plotly_escape(name), "x": x, "y": y, "marker": {"color": colors[i % 3]},
             "hovertemplate": "%{x}: %{y:,.2f}<extra></extra>"} for i, (name, y) in enumerate(series)]
    layout = {"title": {"text": plotly_escape(title)}, "barmode": "group", "height": 360,
              "margin": {"l": 60, "r": 20, "t": 40, "b": 100},
              "xaxis": {"type": "category", "automargin": True}, "yaxis": {"title": {"text": "records"}}}
    return {"data": data, "layout": layout}


def _csv_response(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


@login_required
@require_http_methods(["GET", "POST"])
@throttle("run")
def dataset_dp(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    columns = dataset_service.dataset_columns(ds)
    form = DPForm(request.POST or None, columns=columns)
    counts = rr = None
    chart = None
    status = 200
    if form.is_bound:
        if form.is_valid():
            d = form.cleaned_data
            try:
                released = dp_service.release(ds, d)
                if request.POST.get("action") == "csv":
                    return _csv_response(exports.export_csv(dp_service.release_frame(released)),
                                         dp_service.release_filename(ds, d))
                if d["mode"] == "counts":
                    counts = released
                    chart = comparison_chart(counts.cells, [("true (not released)", counts.true_counts),
                                                            ("released (noisy)", counts.noisy_counts)],
                                             "Histogram: true and released counts")
                else:
                    rr = released
                    chart = comparison_chart(rr.categories, [("true (not released)", rr.true_counts),
                                                             ("released (perturbed)", rr.perturbed_counts),
                                                             ("estimated from the release", rr.estimated_counts)],
                                             f"{rr.column}: true, perturbed and estimated counts")
            except InputError as exc:
                form.add_error(None, str(exc))
                status = 400
        else:
            status = 400
    rows = []
    if counts:
        rows = [{"cell": c, "true": t, "noisy": n} for c, t, n in
                zip(counts.cells, counts.true_counts, counts.noisy_counts)]
    if rr:
        rows = [{"cell": c, "true": t, "noisy": p, "estimate": e} for c, t, p, e in
                zip(rr.categories, rr.true_counts, rr.perturbed_counts, rr.estimated_counts)]
    return render(request, "anonymizer/dp.html", {
        "dataset": ds, "tab": "dp", "form": form, "counts": counts, "rr": rr, "rows": rows,
        "chart": chart, "numeric": sorted(dp_service.numeric_columns(ds)),
    }, status=status)
