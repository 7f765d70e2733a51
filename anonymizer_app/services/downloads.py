"""The downloads of a run as HTTP responses, the same bytes for the web's links and the API's endpoints
(views/downloads.py, views/setvalued.py, api/runs.py, api/items.py): the published table (CSV or TSV,
Parquet, Excel, JSON lines; delimiter, shuffle, suppressed rows left out, Anatomy's sensitive table; large
results streamed a row group at a time), the run configuration as JSON, and a set-valued result's records
and item rules. The caller finds the owner's job (404 otherwise) and parses the delimiter (forms)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
from django.http import Http404, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.http import content_disposition_header

from ..models import Job, Result
from . import exports, results
from .results import RESULT_PAGES, job_result

STREAM_DOWNLOAD_ROWS = 100_000


def attachment(body: str | bytes, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


def bad_request(text: str) -> HttpResponseBadRequest:
    return HttpResponseBadRequest(text, content_type="text/plain; charset=utf-8")


# ---- the published table and the configuration ------------------------------------------------------------
def table_result(job: Job) -> Result:
    """The result of a run with output rows (404 for figures, a lattice, or no result)."""
    if job.kind in RESULT_PAGES or job.kind == Job.LATTICE:  # figures or a lattice: no output rows
        raise Http404("this job has no anonymized output")
    return job_result(job)


def table_download(j: Job, res: Result, delimiter: str, query) -> HttpResponseBase:
    """The published table in the format ``query`` asks for (``format``, ``drop_suppressed``, ``shuffle``,
    ``table``), CSV with ``delimiter`` (already parsed by the caller)."""
    drop = query.get("drop_suppressed") == "1"
    fmt = query.get("format", "csv")
    if fmt not in exports.EXPORT_FORMATS:
        return bad_request("format must be one of: " + ", ".join(exports.EXPORT_FORMATS))
    if fmt not in ("csv", "tsv") and query.get("table") != "st":
        return _download_other(j, res, fmt, drop, query.get("shuffle") == "1")
    if fmt == "tsv":
        delimiter = "\t"
    if query.get("table") == "st":  # Anatomy's sensitive table (group, value, count)
        st = results.load_sensitive_table(res)
        if st is None:
            raise Http404("this result has no sensitive table")
        filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-sensitive-table.csv"
        return attachment(exports.export_csv(st, delimiter), "text/csv; charset=utf-8", filename)
    response: HttpResponseBase
    if query.get("shuffle") == "1":  # a permutation of all rows: the one download that loads them all
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


def _download_other(j: Job, res: Result, fmt: str, drop: bool, shuffle: bool) -> HttpResponse:
    """The published rows as Parquet, Excel, JSON lines, Stata or SPSS (exports.export_frame), built whole in
    memory."""
    frame = exports.result_frame(res, drop)
    if shuffle:
        frame = frame.sample(frac=1.0, random_state=int(np.random.default_rng().integers(2**31))).reset_index(drop=True)
    spec = exports.EXPORT_FORMATS[fmt]
    try:
        body = exports.export_frame(frame, fmt, exports.job_column_types(j),
                                    labels=exports.dataset_labels(j.dataset) if fmt in ("dta", "sav") else None)
    except exports.ExportError as exc:
        return bad_request(str(exc))
    filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-anonymized{spec.extension}"
    return attachment(body, spec.content_type, filename)


def config_download(j: Job) -> HttpResponse:
    """The run's configuration as JSON (exports.job_configuration)."""
    body = json.dumps(exports.job_configuration(j), indent=2, ensure_ascii=False)
    filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-config.json"
    return attachment(body + "\n", "application/json; charset=utf-8", filename)


# ---- a set-valued result ---------------------------------------------------------------------------------------
def set_result(job: Job) -> Result:
    """The result of a succeeded run with set-valued output (a transaction dataset, or a table's set-valued
    column); 404 otherwise."""
    res = job_result(job)
    report = res.report
    if report.get("kind") != "set-valued" and not report.get("set_column"):
        raise Http404("this result has no set-valued data")
    return res


def set_stem(job: Job) -> str:
    return f"{Path(job.dataset.original_name).stem}-{job.algorithm}-k{job.k}"


def records_download(j: Job) -> HttpResponse:
    """The published records in the input's layout (one per line, the record id first), formulas neutralized."""
    res = set_result(j)
    if res.report.get("kind") != "set-valued":
        raise Http404("a table's set-valued result downloads as CSV")
    frame, _ = results.load_output(res)
    body = "".join(exports.transaction_lines(frame, j.config["item_delimiter"]))
    return attachment(body, "text/plain; charset=utf-8", f"{set_stem(j)}-m{res.report.get('m')}-anonymized.txt")


def rules_download(j: Job) -> HttpResponse:
    """The generalization rules (item;generalized item, as a two-level hierarchy file in ARX's layout), or for
    dynamic hierarchies the hierarchy that was built (item;group;*), which the hierarchy library can load."""
    res = set_result(j)
    report = res.report if res.report.get("kind") == "set-valued" else res.report["set_column"]
    rows = report.get("hierarchy_rows") or []
    if not rows:
        rows = [[item, label] for label, items in sorted((report.get("generalization_rules") or {}).items())
                for item in items]
    out = io.StringIO()
    writer = csv.writer(out, delimiter=";", lineterminator="\n")  # a label holding ';' is quoted
    writer.writerows([[exports.neutralize(str(x)) for x in row] for row in rows])
    return attachment(out.getvalue(), "text/csv; charset=utf-8", f"{set_stem(j)}-item-rules.csv")
