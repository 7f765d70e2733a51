"""Dataset pages: the list with the upload zone, the demo data, a dataset's preview and read format,
and its columns (types and roles)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Count, Q
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.throttling import throttle

from .. import demo
from ..engine import EngineError, Format, InputError, Role
from ..engine.io.reader import DELIMITER_NAMES
from ..engine.model.missing import is_marker
from ..forms import ROLE_HELP, ColumnsForm, FormatForm, UploadForm, delimiter_name
from ..models import Dataset
from ..services import datasets as dataset_service
from ..services import identifier_suggestions, sas_uploads
from ..services.setvalued import delimiter_label
from ..setvalued_forms import SetColumnForm, SetUploadForm
from .common import QI, default_hierarchy_label, owned_dataset

PREVIEW_ROWS = 20
SAMPLE_VALUES = 5


def render_index(request, form: UploadForm | None, status: int = 200, set_form=None):
    datasets = Dataset.objects.filter(owner=request.user).annotate(
        qi_count=Count("columns", filter=Q(columns__role=QI), distinct=True),
        job_count=Count("jobs", distinct=True),
    )
    return render(request, "anonymizer/index.html", {
        "datasets": datasets, "form": form or UploadForm(), "set_form": set_form or SetUploadForm(),
        "max_upload_mb": settings.ANONYMIZER_MAX_UPLOAD_MB}, status=status)


def _distinct_for_label(ds, column):
    """The distinct values that decide a text or date QI's default hierarchy (engine.model.defaults), for its label;
    None for other columns and for columns with many values (no natural order has more than a few dozen
    rungs, and dates are recognised from the type)."""
    if column.role != QI or column.type in ("integer", "decimal", "date") or column.distinct_count > 100:
        return None
    return dataset_service.distinct_values(ds, column.name)


@login_required
@require_GET
def index(request):
    return render_index(request, UploadForm())


@login_required
@require_http_methods(["GET", "POST"])
@throttle("upload")
def upload(request):
    if request.method == "GET":
        return redirect("anonymizer:index")
    form = UploadForm(request.POST, request.FILES)
    refused = getattr(request, "upload_refused", "")  # cut off on its declared length (uploads.py)
    if refused:
        form.is_valid()  # the file field is empty: its error becomes the reason
        form.errors["file"] = form.error_class([refused])
        return render_index(request, form, status=413)
    if form.is_valid():
        f = form.cleaned_data["file"]
        try:
            # the upload is on disk (TemporaryFileUploadHandler above FILE_UPLOAD_MAX_MEMORY_SIZE): moved, not read
            stored = sas_uploads.prepare(f, f.name, form.cleaned_data["catalog"])  # a SAS file with its catalog
            dataset = dataset_service.create_dataset(request.user, stored, f.name, name=form.cleaned_data["name"] or None,
                                                     header=form.cleaned_data["header"])
        except InputError as exc:
            form.add_error("file", str(exc))
        else:
            messages.success(request, f"Uploaded {dataset.name}: {dataset.n_rows:,} rows, "
                                      f"{dataset.n_columns} columns. Check the preview, then set the column roles.")
            notice = sas_uploads.label_notice(dataset)
            if notice:
                messages.info(request, notice)
            return redirect("anonymizer:dataset", dataset_id=dataset.pk)
    return render_index(request, form)


@login_required
@require_POST
def load_demo(request):
    try:
        datasets = demo.load_demo(request.user)
    except EngineError as exc:
        messages.error(request, f"The demo data could not be loaded: {exc}")
    else:
        messages.success(request, "Loaded the demo datasets: " + ", ".join(d.name for d in datasets) + ".")
    return redirect("anonymizer:index")


@login_required
@require_http_methods(["GET", "POST"])
def dataset(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    if ds.is_transactions:  # records of items: the items page shows and re-reads them
        return redirect("anonymizer:items", dataset_id=ds.pk)
    initial = {"delimiter": delimiter_name(ds.delimiter), "encoding": ds.encoding, "header": ds.has_header}
    if request.method == "POST":
        form = FormatForm(request.POST, kind=ds.kind, initial=initial)
        if form.is_valid():
            d = form.cleaned_data
            fmt = Format(ds.kind, d.get("delimiter", ds.delimiter), d.get("encoding", ds.encoding), d["header"])
            try:
                dataset_service.reformat_dataset(ds, fmt)
            except InputError as exc:
                form.add_error(None, str(exc))
                ds.refresh_from_db()
            else:
                messages.success(request, f"Re-read {ds.original_name}: {ds.n_rows:,} rows, {ds.n_columns} columns. "
                                          "Column types and roles were detected anew.")
                return redirect("anonymizer:dataset", dataset_id=ds.pk)
    else:
        form = FormatForm(kind=ds.kind, initial=initial)
    head = dataset_service.dataset_rows(ds, 0, PREVIEW_ROWS)  # the first row group only
    columns = list(ds.columns.all())
    detected = dataset_service.detected_format(ds)
    return render(request, "anonymizer/dataset.html", {
        "dataset": ds,
        "tab": "data",
        "form": form,
        "columns": columns,
        "preview_rows": [list(row) for row in head.itertuples(index=False)],
        "preview_count": len(head),
        "delimiter_label": DELIMITER_NAMES.get(ds.delimiter, ds.delimiter),
        "detected": detected,
        "detected_delimiter": DELIMITER_NAMES.get(detected.delimiter, detected.delimiter) if detected else "",
        "sas_catalog": sas_uploads.catalog_name(ds),  # None: not SAS; "": a .sas7bdat without its catalog
    })


@login_required
@require_http_methods(["GET", "POST"])
def columns(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    if ds.is_transactions:  # a transaction dataset has no columns
        return redirect("anonymizer:items", dataset_id=ds.pk)
    cols = list(ds.columns.select_related("hierarchy"))
    stored = set(dataset_service.dataset_columns(ds))
    if request.method == "POST":
        # a type change is checked on the column's distinct values, read alone
        form = ColumnsForm(request.POST, columns=cols,
                           values=lambda name: dataset_service.distinct_values(ds, name) if name in stored else None,
                           rows=lambda name: dataset_service.load_frame(ds, [name])[name] if name in stored else None)
        if form.is_valid():
            changes = form.changes()
            with transaction.atomic():
                for c in cols:
                    c.type, c.role = changes[c.name]
                    c.save(update_fields=["type", "role"])
            n_qi = sum(1 for t, r in changes.values() if r == QI)
            messages.success(request, f"Saved the column settings ({n_qi} quasi-identifier"
                                      f"{'' if n_qi == 1 else 's'}).")
            if request.POST.get("next") == "run":  # "Save and run" of the unsaved-changes warning
                return redirect("anonymizer:run", dataset_id=ds.pk)
            return redirect("anonymizer:columns", dataset_id=ds.pk)
    else:
        form = ColumnsForm(columns=cols)
    rows = []
    samples = dataset_service.columns_samples(ds, [c.name for c in cols if c.name in stored], SAMPLE_VALUES)
    missing = dataset_service.missing_counts(ds, [c.name for c in cols if c.name in stored])
    # names, patient ids, e-mails, ...: why a column looks identifying (pre-selected at upload when high)
    detection = identifier_suggestions.for_dataset(ds, dataset_service.stored_table(ds))
    for c in cols:
        # NA markers are the missing value, named once after the values (never a chip "NA" beside "(missing)")
        sample = [v for v in samples.get(c.name, []) if not is_marker(v)]
        rows.append({
            "column": c,
            "type_field": form[f"type:{c.name}"],
            "role_field": form[f"role:{c.name}"],
            "unique": ds.n_rows > 1 and c.distinct_count == ds.n_rows,
            "sample": sample,
            "missing": missing.get(c.name, 0),
            "suggestion": detection.for_column(c.name),
            "free_text": detection.free_text_for(c.name),
            "hierarchy_url": f"/hierarchies/dataset/{ds.pk}/column/{c.pk}/",
            "hierarchy_label": c.hierarchy.name if c.hierarchy is not None else default_hierarchy_label(
                c.type, _distinct_for_label(ds, c)),
        })

    marked = next((c for c in cols if c.item_delimiter), None)  # the set-valued column, if any
    column_form = SetColumnForm(columns=[c.name for c in cols], initial={
        "column": marked.name if marked else "", "item_delimiter": delimiter_label(marked.item_delimiter if marked else "|")})
    return render(request, "anonymizer/columns.html", {
        "column_form": column_form, "set_column": marked,
        "dataset": ds, "tab": "columns", "form": form, "rows": rows, "role_help": ROLE_HELP,
        "qi_count": sum(1 for c in cols if c.role == QI),
        "person_column": next((c.name for c in cols if c.role == Role.PERSON.value), None),
    })
