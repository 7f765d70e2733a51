"""Releases of one dataset side by side (/datasets/<id>/releases/?job=<id>&job=<id>...): any mix of its finished
releases (k-anonymous runs, SDC runs, SafePub samples, synthetic sets; services.releases) with the same utility
and privacy figures in columns, through the figure catalogue, and a scatter of utility (2-way TVD) against
privacy (exact copies). Owner-only: another user's dataset, or a job of another dataset, is a 404. Every value is
escaped by the template, and by plotly_escape in the chart."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ..engine.measure.figure_catalogue import FIGURES, format_kind
from ..plotly_text import plotly_escape
from ..services import releases as release_service
from .common import owned_dataset

SHOWN = ("tvd_1way_mean", "tvd_2way_mean", "exact_copy_share")


def chart(rows: list[dict]) -> dict:
    points = [r for r in rows if r["tvd_2way_mean"] is not None and r["exact_copy_share"] is not None]
    data = [{"type": "scatter", "mode": "markers+text", "x": [r["exact_copy_share"] for r in points],
             "y": [r["tvd_2way_mean"] for r in points], "text": [plotly_escape(r["label"]) for r in points],
             "textposition": "top center", "marker": {"size": 11, "color": "#2563eb"},
             "hovertemplate": "%{text}: exact copies %{x:.1%}, 2-way TVD %{y:.3f}<extra></extra>"}]
    layout = {"template": "none", "height": 420, "margin": {"l": 70, "r": 20, "t": 40, "b": 60},
              "title": {"text": "Utility against privacy (lower left is better on both)", "font": {"size": 14}},
              "xaxis": {"title": {"text": FIGURES["exact_copy_share"].label}, "tickformat": ".0%",
                        "rangemode": "tozero"},
              "yaxis": {"title": {"text": FIGURES["tvd_2way_mean"].label}, "rangemode": "tozero"}}
    return {"data": data, "layout": layout}


@login_required
@require_GET
def releases(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    available = list(release_service.release_jobs(ds)[:100])
    wanted = request.GET.getlist("job")[:release_service.MAX_RELEASES]
    by_id = {str(j.pk): j for j in available}
    if any(w not in by_id for w in wanted):
        raise Http404("no such release of this dataset")
    chosen = [by_id[w] for w in dict.fromkeys(wanted)]
    compared = release_service.compare(ds, chosen) if chosen else {"columns": [], "rows": []}
    figure_rows = [{"key": k, "label": FIGURES[k].label, "help": FIGURES[k].help,
                    "values": [format_kind(FIGURES[k].kind, r[k]) if r[k] is not None else "—"
                               for r in compared["rows"]]} for k in SHOWN]
    return render(request, "anonymizer/releases.html", {
        "dataset": ds, "tab": "releases", "available": available, "chosen": {str(j.pk) for j in chosen},
        "compared": compared, "figure_rows": figure_rows, "chart": chart(compared["rows"]) if chosen else None,
        "available_labels": [(j, release_service.label(j)) for j in available]})
