"""DICOM headers: upload a zip or a folder of DICOM files as a dataset (services/dicom.py), and download a
result as de-identified DICOM files (a zip built from the published rows)."""

from __future__ import annotations

import queue
import threading

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.html import escape
from django.views.decorators.http import require_GET, require_http_methods

from accounts.throttling import throttle

from ..dicom_forms import DicomUploadForm
from ..engine import InputError
from ..engine import dicom as dicom_engine
from ..models import Job
from ..services import dicom
from .common import job_result, owned_job

# An upload of more files than this is read beside the request while the page shows the progress (streamed);
# a smaller one is read in the request and answered at once.
STREAM_FILES = 200


def _streamed(request, d) -> StreamingHttpResponse:
    """The page for a long extraction: the files are checked and read in a thread (engine only, no database)
    whose progress lines the response streams; then the dataset is stored in the request and the page
    continues to its columns (meta refresh: no inline script under the CSP)."""
    staging = dicom.stage_uploads(d["uploads"])
    events: queue.Queue = queue.Queue()

    def work() -> None:
        try:
            found = dicom.read_staged(staging, d["level"], d["names"],
                                      progress=lambda fraction, phase: events.put(("progress", fraction, phase)),
                                      shown=dicom.upload_name(d["uploads"]))
            events.put(("done", found))
        except BaseException as exc:  # handed to the response, which names it
            events.put(("error", exc))

    threading.Thread(target=work, name="dicom-extraction", daemon=True).start()

    def events_html():
        shown = -1
        while True:
            event = events.get()
            if event[0] == "progress":
                percent = round(event[1] * 100)
                if percent != shown:  # one line per percent at most
                    shown = percent
                    yield f"<li>[{percent:3d}%] {escape(event[2])}</li>\n"
                continue
            if event[0] == "error":
                exc = event[1]
                text = str(exc) if isinstance(exc, InputError) else f"{type(exc).__name__}: {exc}"
                yield (f'</ol><div class="alert alert-error" role="alert" id="dicom-error">{escape(text)}</div>'
                       f'<p><a class="btn" href="{reverse("anonymizer:upload_dicom")}">Back to the upload</a></p>')
                return
            source, extraction = event[1]
            try:
                dataset = dicom.store(request.user, staging, source, extraction, dicom.upload_stem(d["uploads"]),
                                      d["name"].strip() or None)
            except InputError as exc:
                yield f'</ol><div class="alert alert-error" role="alert" id="dicom-error">{escape(str(exc))}</div>'
                return
            url = reverse("anonymizer:columns", args=[dataset.pk])
            info = dicom.describe(dataset)
            yield (f'</ol><p id="dicom-done">Read {info["files"]:,} DICOM files into {dataset.n_rows:,} rows '
                   f'({escape(info["level_label"])}).</p><meta http-equiv="refresh" content="0; url={url}">'
                   f'<p><a class="btn btn-primary" href="{url}">Continue: columns and roles</a></p>')
            return

    def body():
        yield (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Reading DICOM files · '
               f'Anonymizer</title><link rel="stylesheet" href="{static("css/app.css")}"></head><body>'
               f'<main class="container"><h1>Reading the DICOM files</h1><ol id="dicom-progress-lines">')
        try:
            yield from events_html()
        finally:
            if staging.exists():
                staging.unlink()
        yield "</main></body></html>"

    return StreamingHttpResponse(body(), content_type="text/html; charset=utf-8")


@login_required
@require_http_methods(["GET", "POST"])
@throttle("upload")
def upload(request):
    initial_level = request.GET.get("level") if request.GET.get("level") in dicom_engine.LEVELS else "file"
    form = DicomUploadForm(request.POST or None, request.FILES or None, initial={
        "level": initial_level, "attributes": [a.keyword for a in dicom_engine.default_attributes(initial_level)]})
    refused = getattr(request, "upload_refused", "") if request.method == "POST" else ""
    if refused:  # cut off on its declared length (uploads.py): the files are empty, the reason is this
        form.is_valid()
        form.errors.clear()
        form.errors[forms.forms.NON_FIELD_ERRORS] = form.error_class([refused])
    elif request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        if len(d["uploads"]) > STREAM_FILES or _zip_members(d["uploads"]) > STREAM_FILES:
            return _streamed(request, d)
        try:
            dataset = dicom.create_dicom_dataset(request.user, d["uploads"], d["level"], d["names"],
                                                 name=d["name"].strip() or None)
        except InputError as exc:
            form.add_error(None, str(exc))
        else:
            info = dicom.describe(dataset)
            messages.success(request, f"Read {info['files']:,} DICOM files into {dataset.n_rows:,} rows "
                                      f"({info['level_label']}). The roles the de-identification profile proposes "
                                      f"are set; check them, then run.")
            return redirect("anonymizer:columns", dataset_id=dataset.pk)
    level_attributes = {level: [a.keyword for a in dicom_engine.default_attributes(level)]
                        for level in dicom_engine.LEVELS}
    return render(request, "dicom/upload.html", {"form": form, "level_attributes": level_attributes},
                  status=413 if refused else 400 if form.errors else 200)


def _zip_members(uploads) -> int:
    """How many files a single uploaded zip holds (0 otherwise, or for a file that is no zip)."""
    import zipfile

    if len(uploads) != 1 or not uploads[0].name.lower().endswith(".zip"):
        return 0
    try:
        with zipfile.ZipFile(uploads[0]) as archive:
            return len(archive.infolist())
    except zipfile.BadZipFile:
        return 0
    finally:
        uploads[0].seek(0)


@login_required
@require_GET
@throttle("download", methods=("GET",))
def download(request, job_id):
    job = owned_job(request, job_id)
    if job.kind != Job.RUN or not dicom.is_dicom(job.dataset):
        raise Http404("this job's dataset is not a set of DICOM files")
    job_result(job)
    try:
        chunks = dicom.result_archive(job)
    except InputError as exc:
        messages.error(request, f"The DICOM files could not be written: {exc}")
        return redirect("anonymizer:result", job_id=job.pk)
    return dicom.zip_response(chunks, job)
