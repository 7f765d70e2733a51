"""Comparison of algorithms: the form (several algorithms for several k, queued as one job of kind
"comparison") and the comparison's page (table, charts, CSV)."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods

from ..engine import InputError, Role
from ..forms import CompareForm
from ..models import Job
from ..services import comparison as comparison_service
from .common import QI, algorithm_label, format_duration, job_result, owned_dataset, owned_job, queue_job


@login_required
@require_http_methods(["GET", "POST"])
def compare(request, dataset_id: int):
    """Several algorithms for several k on this dataset: queued as one job of kind "comparison"."""
    ds = owned_dataset(request, dataset_id)
    cols = list(ds.columns.all())
    sensitive = [c.name for c in cols if c.role == Role.SENSITIVE.value]
    if request.method == "POST":
        form = CompareForm(request.POST, sensitive_columns=sensitive)
        if form.is_valid():
            d = form.cleaned_data
            try:
                job = comparison_service.create_comparison(ds, d["algorithms"], d["k_values"],
                                                           d["suppression_percent"] / 100.0, d["sensitive"] or "")
            except InputError as exc:
                form.add_error(None, str(exc))
            else:
                queue_job(request, job)
                return redirect("anonymizer:job", job_id=job.pk)
    else:
        form = CompareForm(sensitive_columns=sensitive)
    past = ds.jobs.filter(kind=Job.COMPARISON)[:10]
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
            "risk": risk_cells(r, failed),
        })
    return out


def risk_cells(r: dict, failed: bool = False) -> dict:
    """A run's (or the input's) risk figures as shown; runs stored before they were computed show —."""
    if failed or "marketer_risk" not in r:
        return {"uniques": "—", "highest": "—", "average": "—", "at_risk": "—", "marketer": "—"}
    return {"uniques": f"{r['sample_uniques']:,}", "highest": f"{r['prosecutor_risk_highest']:.2%}",
            "average": f"{r['prosecutor_risk_average']:.2%}", "at_risk": f"{r['records_at_risk']:,}",
            "marketer": f"{r['marketer_risk']:.2%}"}


@login_required
@require_GET
def comparison(request, job_id):
    j = owned_job(request, job_id)
    if j.kind != Job.COMPARISON:
        raise Http404("this job is not a comparison")
    if j.status != Job.SUCCEEDED:
        return redirect("anonymizer:job", job_id=j.pk)
    rows = job_result(j).report.get("comparison", [])
    if request.GET.get("format") == "csv":
        response = HttpResponse(comparison_service.comparison_csv(rows), content_type="text/csv; charset=utf-8")
        filename = f"{Path(j.dataset.original_name).stem}-comparison.csv"
        response["Content-Disposition"] = content_disposition_header(True, filename)
        return response
    return render(request, "anonymizer/comparison.html", {
        "job": j, "dataset": j.dataset, "rows": comparison_rows(rows),
        "risk_before": risk_cells(job_result(j).report.get("risk_before") or {}),
        "algorithms": ", ".join(algorithm_label(a) for a in j.options.get("algorithms", [])),
        "ks": ", ".join(map(str, j.options.get("k", []))),
        "suppression_percent": f"{j.suppression_limit * 100:g}",
        "duration": format_duration(j.duration),
        "charts": comparison_service.comparison_figures(rows),
    })
