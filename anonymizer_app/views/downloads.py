"""Downloads of a run: the anonymized CSV (or TSV, Parquet, Excel, JSON lines: ?format=; delimiter, shuffle, suppressed rows left out, Anatomy's sensitive
table; large results streamed a row group at a time) and the run configuration as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from accounts.throttling import throttle

from ..forms import DELIMITER_CHOICES, parse_delimiter
from ..models import Job
from ..services import exports, results
from .common import RESULT_PAGES, job_result, owned_job

STREAM_DOWNLOAD_ROWS = 100_000


@login_required
@require_GET
@throttle("download", methods=("GET",))
def download_csv(request, job_id):
    j = owned_job(request, job_id)
    if j.kind in RESULT_PAGES or j.kind == Job.LATTICE:  # figures or a lattice: no output rows
        raise Http404("this job has no anonymized output")
    res = job_result(j)
    delimiter = parse_delimiter(request.GET.get("delimiter"), j.dataset.delimiter)
    if delimiter is None:
        return HttpResponseBadRequest("delimiter must be one of: " + ", ".join(n for n, _ in DELIMITER_CHOICES),
                                      content_type="text/plain; charset=utf-8")
    drop = request.GET.get("drop_suppressed") == "1"
    fmt = request.GET.get("format", "csv")
    if fmt not in exports.EXPORT_FORMATS:
        return HttpResponseBadRequest("format must be one of: " + ", ".join(exports.EXPORT_FORMATS),
                                      content_type="text/plain; charset=utf-8")
    if fmt not in ("csv", "tsv") and request.GET.get("table") != "st":
        return _download_other(j, res, fmt, drop, request.GET.get("shuffle") == "1")
    if fmt == "tsv":
        delimiter = "\t"
    if request.GET.get("table") == "st":  # Anatomy's sensitive table (group, value, count)
        st = results.load_sensitive_table(res)
        if st is None:
            raise Http404("this result has no sensitive table")
        response = HttpResponse(exports.export_csv(st, delimiter), content_type="text/csv; charset=utf-8")
        filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-sensitive-table.csv"
        response["Content-Disposition"] = content_disposition_header(True, filename)
        return response
    if request.GET.get("shuffle") == "1":  # a permutation of all rows: the one download that loads them all
        frame, suppressed = results.load_output(res)
        if drop:
            frame = frame[~suppressed]
        response = HttpResponse(exports.export_csv(frame, delimiter, shuffle=True),
                                content_type="text/csv; charset=utf-8")
    elif res.report.get("records", 0) > STREAM_DOWNLOAD_ROWS:  # streamed a row group at a time
        response = StreamingHttpResponse(exports.iter_output_csv(res, delimiter, drop),
                                         content_type="text/csv; charset=utf-8")
    else:
        response = HttpResponse("".join(exports.iter_output_csv(res, delimiter, drop)),
                                content_type="text/csv; charset=utf-8")
    filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-anonymized.{fmt}"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


def _download_other(j: Job, res, fmt: str, drop: bool, shuffle: bool) -> HttpResponse:
    """The published rows as Parquet, Excel or JSON lines (exports.export_frame), built whole in memory."""
    frame = exports.result_frame(res, drop)
    if shuffle:
        frame = frame.sample(frac=1.0, random_state=int(np.random.default_rng().integers(2**31))).reset_index(drop=True)
    spec = exports.EXPORT_FORMATS[fmt]
    try:
        body = exports.export_frame(frame, fmt, exports.job_column_types(j))
    except exports.ExportError as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    response = HttpResponse(body, content_type=spec.content_type)
    filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-anonymized{spec.extension}"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


@login_required
@require_GET
@throttle("download", methods=("GET",))
def download_config(request, job_id):
    j = owned_job(request, job_id)
    body = json.dumps(exports.job_configuration(j), indent=2, ensure_ascii=False)
    response = HttpResponse(body + "\n", content_type="application/json; charset=utf-8")
    filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-config.json"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


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
