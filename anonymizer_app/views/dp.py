"""The differential privacy page of a dataset: a noisy histogram (OpenDP's Laplace or geometric mechanism)
or randomized response on one column, with the true figures beside for the owner, the budget spent, the
error against the truth, and a CSV of the release. Owner-only: another user's dataset is a 404.

Every POST is a new release (new noise, its ε spent again), recorded in the dataset's ε ledger (shown on the
page with the budget spent and remaining; a POST with action=budget sets the budget instead); "Download CSV"
releases anew rather than re-sending the figures shown. The page says so. ?release=<ledger entry> shows the
published figures of an earlier release of this dataset.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_http_methods

from accounts.throttling import throttle

from ..dp_forms import BudgetForm, DPForm
from ..engine import InputError
from ..engine.dp import CountsRelease, RandomizedResponseRelease
from ..plotly_text import plotly_escape
from ..services import datasets as dataset_service
from ..services import dp as dp_service
from ..services import exports, privacy_ledger
from .common import owned_dataset


def comparison_chart(labels: list[str], series: Sequence[tuple[str, Sequence[float]]], title: str) -> dict:
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
    budget_form = BudgetForm(initial={"budget": privacy_ledger.budget_of(ds)})
    if request.method == "POST" and request.POST.get("action") == "budget":
        budget_form = BudgetForm(request.POST)
        if budget_form.is_valid():
            privacy_ledger.set_budget(ds, budget_form.cleaned_data["budget"])
            return redirect("anonymizer:dp", ds.pk)
        return _page(request, ds, DPForm(columns=columns), budget_form, status=400)
    form = DPForm(request.POST or None, columns=columns)
    counts: CountsRelease | None = None
    rr: RandomizedResponseRelease | None = None
    chart = None
    status = 200
    if form.is_bound:
        if form.is_valid():
            d = form.cleaned_data
            try:
                released = dp_service.release(ds, d, request.user)
                if request.POST.get("action") == "csv":
                    return _csv_response(exports.export_csv(dp_service.release_frame(released)),
                                         dp_service.release_filename(ds, d))
                if isinstance(released, CountsRelease):  # mode "counts"
                    counts = released
                    chart = comparison_chart(counts.cells, [("true (not released)", counts.true_counts),
                                                            ("released (noisy, post-processed)",
                                                             counts.released_counts)],
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
        rows = [{"cell": c, "true": t, "raw": n, "noisy": r} for c, t, n, r in
                zip(counts.cells, counts.true_counts, counts.noisy_counts, counts.released_counts)]
    if rr:
        rows = [{"cell": c, "true": t, "noisy": p, "estimate": e} for c, t, p, e in
                zip(rr.categories, rr.true_counts, rr.perturbed_counts, rr.estimated_counts)]
    return _page(request, ds, form, budget_form, status, {"counts": counts, "rr": rr, "rows": rows, "chart": chart})


def _page(request, ds, form, budget_form, status: int = 200, extra: dict | None = None):
    shown = None
    if request.GET.get("release"):
        try:
            shown = privacy_ledger.entries(ds).get(pk=int(request.GET["release"]))
        except (ValueError, privacy_ledger.PrivacyLedgerEntry.DoesNotExist):
            raise Http404("no such release of this dataset") from None
    return render(request, "anonymizer/dp.html", {
        "dataset": ds, "tab": "dp", "form": form, "budget_form": budget_form,
        "numeric": sorted(dp_service.numeric_columns(ds)), "ledger": privacy_ledger.state(ds),
        "ledger_entries": privacy_ledger.entries(ds)[:LEDGER_SHOWN], "shown_release": shown,
        "ledger_accounting": privacy_ledger.ACCOUNTING, **(extra or {}),
    }, status=status)


LEDGER_SHOWN = 200  # the newest entries listed on the page; the totals count every one
