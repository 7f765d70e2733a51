"""SQL databases: importing a table or a query result as a new dataset, and exporting a result's published
rows to a new table (services/sql.py does the work; the web checks are on: the app's own database and
SQLite files outside the allowed folder are refused, and in production every server the administrator did
not list).

Both run on a worker, never in the request: the form's submit checks what needs no connection (the URL's
parts and parameters, the allow-list: a refusal is the form page at once), then an import becomes a
SourceImport (services/source_imports.py) whose page shows the rows read with a progress bar, a cancel
button, the dataset when it succeeded and the reason when it failed; an export becomes a job of kind
sql-export (services/sql_jobs.py) shown on the job page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.throttling import throttle

from ..engine import InputError
from ..models import SourceImport
from ..services import source_imports, sql, sql_jobs
from ..services.vault import VaultError
from ..sql_forms import SqlExportForm, SqlImportForm
from .common import owned_dataset, queue_job, table_result


def owned_import(request, import_id) -> SourceImport:
    return get_object_or_404(SourceImport, pk=import_id, owner=request.user)


@login_required
@require_http_methods(["GET", "POST"])
@throttle("sql")
def import_sql(request):
    form = SqlImportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        by_table = d["source"] == "table"
        try:
            imp = source_imports.create_sql(request.user, d["url"], table=d["table"] if by_table else "",
                                            query="" if by_table else d["query"], name=d["name"],
                                            keep_password=d["keep_password"], password=d["password"] or None)
        except InputError as exc:
            form.add_error(None, str(exc))
        else:
            source_imports.submit(imp)
            return redirect("anonymizer:source_import", import_id=imp.pk)
    return render(request, "anonymizer/import_sql.html", {"form": form, "servers_refusal": sql.servers_refusal()},
                  status=400 if form.errors else 200)


def _status_payload(imp: SourceImport) -> dict:
    succeeded = imp.status == SourceImport.SUCCEEDED and imp.dataset_id is not None
    return {
        "status": imp.status,
        "progress": source_imports.fraction(imp),
        "rows": imp.rows,
        "total": imp.total,
        "phase": imp.phase,
        "message": imp.message,
        "finished": imp.is_finished,
        "result_url": reverse("anonymizer:dataset", args=[imp.dataset_id]) if succeeded else None,
    }


@login_required
@require_GET
def source_import(request, import_id):
    """An import's page: its progress bar and phase (static/js/job.js polls the status), then the dataset."""
    imp = owned_import(request, import_id)
    payload = _status_payload(imp)
    return render(request, "anonymizer/source_import.html", {
        "imp": imp,
        "progress_percent": round(payload["progress"] * 100, 1),
        "status_json": {**payload, "status_url": reverse("anonymizer:source_import_status", args=[imp.pk])},
    })


@login_required
@require_GET
def source_import_status(request, import_id):
    response = JsonResponse(_status_payload(owned_import(request, import_id)))
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def source_import_cancel(request, import_id):
    imp = owned_import(request, import_id)
    if imp.is_finished:
        messages.info(request, f"This import has already {imp.status}.")
    elif source_imports.cancel(imp):
        messages.success(request, "Import cancelled; nothing was stored.")
    else:
        messages.info(request, "Cancelling: the worker stops at its next chunk; nothing is stored.")
    return redirect("anonymizer:source_import", import_id=imp.pk)


@login_required
@require_http_methods(["GET", "POST"])
@throttle("sql")
def export_sql(request, job_id):
    j, res = table_result(request, job_id)
    form = SqlExportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            export = sql_jobs.create_export(j, d["url"], d["table"], replace=d["replace"],
                                            drop_suppressed=d["drop_suppressed"], password=d["password"] or None)
        except InputError as exc:
            form.add_error(None, str(exc))
        else:
            queue_job(request, export)
            return redirect("anonymizer:job", job_id=export.pk)
    return render(request, "anonymizer/export_sql.html", {"form": form, "job": j, "dataset": j.dataset,
                                                          "servers_refusal": sql.servers_refusal()},
                  status=400 if form.errors else 200)


@login_required
@require_http_methods(["POST"])
@throttle("sql")
def reimport_sql(request, dataset_id: int):
    """A new dataset from the same source as an imported one (the rows as they are now), with the kept
    password or the one typed; the original dataset is left as it is."""
    ds = owned_dataset(request, dataset_id)
    source = ds.sql_source or {}
    if not source.get("url"):
        raise Http404("this dataset was not imported from a database")
    back = reverse("anonymizer:dataset", args=[ds.pk])
    try:
        password = request.POST.get("password") or sql.reimport_password(ds)
    except VaultError as exc:
        messages.error(request, f"The re-import failed: {exc}")
        return redirect(back)
    try:
        imp = source_imports.create_sql(request.user, source["url"], table=source.get("table", ""),
                                        query=source.get("query", ""), name=ds.name,
                                        keep_password=bool(source.get("password")), password=password)
    except InputError as exc:
        messages.error(request, f"The re-import failed: {exc}")
        return redirect(back)
    source_imports.submit(imp)
    return redirect("anonymizer:source_import", import_id=imp.pk)
