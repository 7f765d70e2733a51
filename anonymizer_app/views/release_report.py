"""The release report of a run, as a page and as PDF (services.release_report): the owner's only."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.template.loader import render_to_string
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from ..models import Job
from ..services import release_report
from .common import RESULT_PAGES, format_value, job_label, job_result, owned_job
from .results import METRICS


def _context(request, job_id, pdf: bool) -> tuple[Job, dict]:
    j = owned_job(request, job_id)
    if j.kind in RESULT_PAGES or j.kind == Job.LATTICE:
        raise Http404("this job has no published table")
    res = job_result(j)
    if res.report.get("kind") == "set-valued":
        raise Http404("the release report covers tables; a set-valued result has its own report (JSON)")
    ctx = release_report.context(j, res, METRICS, format_value)
    ctx.update({"job": j, "dataset": j.dataset, "report": res.report, "algorithm": job_label(j), "pdf": pdf,
                "owner": request.user.get_username()})
    return j, ctx


@login_required
@require_GET
def release_report_page(request, job_id):
    j, ctx = _context(request, job_id, pdf=False)
    return HttpResponse(render_to_string("anonymizer/release_report.html", ctx, request=request))


@login_required
@require_GET
def release_report_pdf(request, job_id):
    j, ctx = _context(request, job_id, pdf=True)
    try:
        pdf = release_report.render_pdf(render_to_string("anonymizer/release_report.html", ctx, request=request))
    except release_report.PdfUnavailable as exc:
        return HttpResponse(f"{exc}. Install Pango (Debian: apt-get install libpango-1.0-0 libpangoft2-1.0-0) or "
                            f"print the HTML report from the browser.", status=503,
                            content_type="text/plain; charset=utf-8")
    response = HttpResponse(pdf, content_type="application/pdf")
    filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-release-report.pdf"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
