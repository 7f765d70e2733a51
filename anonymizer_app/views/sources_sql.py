"""SQL databases: importing a table or a query result as a new dataset, and exporting a result's published
rows to a new table (services/sql.py does the work; the web checks are on: the app's own database and
SQLite files outside the allowed folder are refused)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from ..engine import InputError
from ..models import Job
from ..services import exports, sql
from ..services.vault import VaultError
from ..sql_forms import SqlExportForm, SqlImportForm
from .common import RESULT_PAGES, job_result, owned_dataset, owned_job


@login_required
@require_http_methods(["GET", "POST"])
def import_sql(request):
    form = SqlImportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        by_table = d["source"] == "table"
        try:
            dataset = sql.import_dataset(request.user, d["url"], table=d["table"].strip() if by_table else "",
                                         query="" if by_table else d["query"], name=d["name"].strip() or None,
                                         web=True, keep_password=d["keep_password"], password=d["password"] or None)
        except InputError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Imported {dataset.name}: {dataset.n_rows:,} rows, {dataset.n_columns} "
                                      "columns. Check the preview, then set the column roles.")
            return redirect("anonymizer:dataset", dataset_id=dataset.pk)
    return render(request, "anonymizer/import_sql.html", {"form": form, "servers_refusal": sql.servers_refusal()},
                  status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def export_sql(request, job_id):
    j = owned_job(request, job_id)
    if j.kind in RESULT_PAGES or j.kind == Job.LATTICE or j.dataset.is_transactions:
        raise Http404("this job has no table of anonymized rows")
    res = job_result(j)
    form = SqlExportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        frame = exports.result_frame(res, d["drop_suppressed"])
        kinds = exports.column_kinds(frame, exports.job_column_types(j))
        try:
            written = sql.write_table(frame, d["url"], d["table"], kinds, replace=d["replace"], web=True,
                                      password=d["password"] or None)
        except InputError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Wrote {written:,} rows to the table {d['table']} at "
                                      f"{sql.public_url(d['url'])}.")
            return redirect("anonymizer:result", job_id=j.pk)
    return render(request, "anonymizer/export_sql.html", {"form": form, "job": j, "dataset": j.dataset,
                                                          "servers_refusal": sql.servers_refusal()},
                  status=400 if form.errors else 200)


@login_required
@require_http_methods(["POST"])
def reimport_sql(request, dataset_id: int):
    """A new dataset from the same source as an imported one (the rows as they are now), with the kept
    password or the one typed; the original dataset is left as it is."""
    ds = owned_dataset(request, dataset_id)
    source = ds.sql_source or {}
    if not source.get("url"):
        raise Http404("this dataset was not imported from a database")
    try:
        password = request.POST.get("password") or sql.reimport_password(ds)
        fresh = sql.import_dataset(request.user, source["url"], table=source.get("table", ""),
                                   query=source.get("query", ""), name=ds.name, web=True,
                                   keep_password=bool(source.get("password")), password=password)
    except (InputError, VaultError) as exc:
        messages.error(request, f"The re-import failed: {exc}")
        return redirect("anonymizer:dataset", dataset_id=ds.pk)
    messages.success(request, f"Re-imported {fresh.name} as a new dataset: {fresh.n_rows:,} rows, "
                              f"{fresh.n_columns} columns (roles detected anew).")
    return redirect("anonymizer:dataset", dataset_id=fresh.pk)
