"""Downloads of a run: the anonymized CSV (or TSV, Parquet, Excel, JSON lines: ?format=; delimiter, shuffle,
suppressed rows left out, Anatomy's sensitive table; large results streamed a row group at a time) and the run
configuration as JSON (services/downloads.py, which the API answers through too), and the lattice a run kept."""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from accounts.throttling import throttle

from ..forms import DELIMITER_CHOICES, parse_delimiter
from ..services import downloads
from .common import job_result, owned_job


@login_required
@require_GET
@throttle("download", methods=("GET",))
def download_csv(request, job_id):
    j = owned_job(request, job_id)
    res = downloads.table_result(j)
    delimiter = parse_delimiter(request.GET.get("delimiter"), j.dataset.delimiter)
    if delimiter is None:
        return downloads.bad_request("delimiter must be one of: " + ", ".join(n for n, _ in DELIMITER_CHOICES))
    return downloads.table_download(j, res, delimiter, request.GET)


@login_required
@require_GET
@throttle("download", methods=("GET",))
def download_config(request, job_id):
    return downloads.config_download(owned_job(request, job_id))


@login_required
@require_GET
@throttle("download", methods=("GET",))
def download_lattice(request, job_id):
    """The lattice a run kept (--keep-lattice / the option "Every lattice node kept": every node's levels, tag
    and metric) as JSON: a download, never a value on the result page."""
    j = owned_job(request, job_id)
    res = job_result(j)
    lattice = (res.report.get("search") or {}).get("lattice")
    if not lattice:
        raise Http404("this run kept no lattice")
    response = HttpResponse(json.dumps(lattice, ensure_ascii=False) + "\n", content_type="application/json; charset=utf-8")
    filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-lattice.json"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
