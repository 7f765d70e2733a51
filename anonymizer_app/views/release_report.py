"""The release report of a run, as a page and as PDF (services.release_report, which the API answers through
too): the owner's only."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.views.decorators.http import require_GET

from accounts.throttling import throttle

from ..services import release_report
from .common import owned_job


@login_required
@require_GET
def release_report_page(request, job_id):
    return release_report.page_response(owned_job(request, job_id), request)


@login_required
@require_GET
@throttle("download", methods=("GET",))
def release_report_pdf(request, job_id):
    return release_report.pdf_response(owned_job(request, job_id), request)
