"""The release report of a run, as a page and as PDF (services.release_report): the owner's only."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from accounts.throttling import throttle

from ..models import Job
from ..services import release_report
from .common import RESULT_PAGES, job_result, owned_job


def _reported_job(request, job_id) -> Job:
    j = owned_job(request, job_id)
    if j.kind in RESULT_PAGES or j.kind == Job.LATTICE:
        raise Http404("this job has no published table")
    if job_result(j).report.get("kind") == "set-valued":
        raise Http404("the release report covers tables; a set-valued result has its own report (JSON)")
    return j


@login_required
@require_GET
def release_report_page(request, job_id):
    j = _reported_job(request, job_id)
    return HttpResponse(release_report.report_html(j, request.user.get_username(), pdf=False, request=request))


@login_required
@require_GET
@throttle("download", methods=("GET",))
def release_report_pdf(request, job_id):
    j = _reported_job(request, job_id)
    try:
        pdf = release_report.render_pdf(release_report.report_html(j, request.user.get_username(), pdf=True, request=request))
    except release_report.PdfUnavailable as exc:
        return HttpResponse(f"{exc}. Install Pango (Debian: apt-get install libpango-1.0-0 libpangoft2-1.0-0) or "
                            f"print the HTML report from the browser.", status=503,
                            content_type="text/plain; charset=utf-8")
    response = HttpResponse(pdf, content_type="application/pdf")
    filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-release-report.pdf"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
