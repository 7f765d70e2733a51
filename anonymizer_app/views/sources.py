"""The generic import page of a source that declares its parameters (services/sources: ``Source.fetch``):
``/datasets/import/<name>/``, its form built from the parameters; the table it fetches goes through the
upload's ingestion. Sources with pages of their own (SQL, Zenodo, Dataverse, DICOM) are linked from the
datasets page by the same registry."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts.throttling import throttle

from ..engine.errors import EngineError
from ..services import sources
from ..source_forms import SourceForm


@login_required
@require_http_methods(["GET", "POST"])
@throttle("upload")
def import_source(request, name: str):
    source = sources.SOURCES.get(name)
    if source is None or not source.generic:
        raise Http404("no such source")
    form = SourceForm(source, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            dataset = sources.import_dataset(request.user, name, form.values(), form.cleaned_data["name"])
        except EngineError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Imported {dataset.n_rows:,} rows from {source.label} as {dataset.name}.")
            return redirect("anonymizer:dataset", dataset.pk)
    return render(request, "anonymizer/import_source.html", {"form": form, "source": source},
                  status=400 if form.errors else 200)
