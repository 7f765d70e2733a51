"""Hierarchy files in and out of the library: the upload page (with the resolution of contradictory rows),
the download as stored and the export in each file format (engine.model.formats)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods

from accounts.throttling import throttle
from anonymizer_app.engine import HierarchyError
from anonymizer_app.engine.model.formats import FORMATS, write_hierarchy

from ..forms import FORMAT_LABELS, HierarchyUploadForm, ResolutionForm, discard_pending, save_pending
from ..models import Hierarchy
from ..services import parsed_hierarchy
from .common import conflicts

EXPORT_FILES = {  # format -> (file name suffix, content type)
    "arx": (".csv", "text/csv"), "datafly": ("-datafly.csv", "text/csv"),
    "amnesia-text": ("-amnesia.txt", "text/plain"), "amnesia-json": ("-amnesia.json", "application/json"),
}


def handle_upload(request, form: HierarchyUploadForm, data_values: set | None = None):
    """Parse and save a valid upload form: (hierarchy, "", None), or (None, error, pending) on failure, where
    pending (for contradictory rows) offers the resolutions without uploading the file again."""
    try:
        h = form.build()
    except HierarchyError as exc:
        found = getattr(exc, "conflicts", None)
        return None, str(exc), (_pending(request, form, found, data_values) if found else None)
    h.save()
    discard_pending(request.user, form.cleaned_data.get("pending") or "")
    return h, "", None


def _pending(request, form: HierarchyUploadForm, found, data_values: set | None) -> dict:
    data = form.cleaned_data
    token = data.get("pending") or save_pending(request.user, data["text"], data["source_name"], data["name"])
    initial = {"pending": token, "name": data["name"], "on_conflict": "lift",
               "format": data.get("format") or "auto"}
    return {"conflicts": conflicts(found, data_values), "form": ResolutionForm(initial=initial),
            "source_name": data["source_name"]}


@login_required
@require_http_methods(["GET", "POST"])
@throttle("upload")
def upload(request):
    if request.method == "GET":
        return render(request, "hierarchy_editor/upload.html", {"form": HierarchyUploadForm(user=request.user),
                                                                "upload_error": "", "pending": None})
    form = HierarchyUploadForm(request.POST, request.FILES, user=request.user)
    error, pending = "", None
    if form.is_valid():
        h, error, pending = handle_upload(request, form)
        if h is not None:
            messages.success(request, f"Hierarchy {h.name!r} added to your library ({h.leaves} leaves, "
                                      f"height {h.height}).")
            return redirect("hierarchies:detail", pk=h.pk)
    return render(request, "hierarchy_editor/upload.html",
                  {"form": form, "upload_error": error, "pending": pending}, status=400)


def _attachment(text: str, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    return response


@login_required
@require_GET
def download(request, pk: int):
    h = get_object_or_404(Hierarchy, pk=pk, owner=request.user)
    try:
        text = parsed_hierarchy(h).to_csv(";")
    except HierarchyError as exc:
        messages.error(request, str(exc))
        return redirect("hierarchies:detail", pk=h.pk)
    return _attachment(text, "text/csv", f"{slugify(h.name) or 'hierarchy'}.csv")


@login_required
@require_GET
def export(request, pk: int, fmt: str):
    """The hierarchy in one of the file formats; a format that cannot hold a value says so."""
    h = get_object_or_404(Hierarchy, pk=pk, owner=request.user)
    if fmt not in FORMATS:
        raise Http404(f"no format {fmt!r}")
    try:
        text = write_hierarchy(parsed_hierarchy(h), fmt)
    except HierarchyError as exc:
        messages.error(request, f"Cannot export {h.name!r} as {FORMAT_LABELS.get(fmt, fmt)}: {exc}")
        return redirect("hierarchies:detail", pk=h.pk)
    suffix, content_type = EXPORT_FILES.get(fmt, (f".{fmt}.txt", "text/plain"))
    return _attachment(text, content_type, f"{slugify(h.name) or 'hierarchy'}{suffix}")
