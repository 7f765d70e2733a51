"""SQL databases: importing a table or a query result as a new dataset, and exporting a result's published
rows to a new table (services/sql.py does the work; the web checks are on: the app's own database and
SQLite files outside the allowed folder are refused, and in production every server the administrator did
not list).

An import is read beside the request (sql.stage_import: the external database and files only, no app
database): a source that fails before its first rows, or fits in one chunk, is answered as a form page or a
redirect at once; a larger one gets a page that streams its progress (rows read, of how many when the table
is counted) and the request stores the dataset at the end. Leaving the page (its Cancel link, closing it)
stops the reading and nothing is stored."""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.html import escape
from django.views.decorators.http import require_http_methods

from ..engine import Cancelled, InputError
from ..models import Job
from ..services import exports, sql
from ..services.vault import VaultError
from ..sql_forms import SqlExportForm, SqlImportForm
from .common import RESULT_PAGES, job_result, owned_dataset, owned_job


@dataclass
class Reading:
    """An import read in a thread: its events (("total", n | None), ("rows", n), ("done", Staged),
    ("error", exc)) and the flag that stops it when the page is left."""

    url: str
    table: str
    query: str
    password: str | None
    events: queue.Queue = field(default_factory=queue.Queue)
    closed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> Reading:
        threading.Thread(target=self._work, name="sql-import", daemon=True).start()
        return self

    def _progress(self, rows: int) -> None:
        if self.closed:
            raise Cancelled("the import page was left")
        self.events.put(("rows", rows))

    def _work(self) -> None:
        try:
            self.events.put(("total", sql.count_rows(self.url, self.table, web=True, password=self.password)))
            staged = sql.stage_import(self.url, self.table, self.query, web=True, password=self.password,
                                      progress=self._progress)
        except BaseException as exc:  # handed to the request, which names it
            self.events.put(("error", exc))
            return
        with self.lock:  # a page left meanwhile takes nothing: the files go here
            if self.closed:
                staged.discard()
            else:
                self.events.put(("done", staged))

    def close(self) -> None:
        """Stop the reading; staged rows nobody will store are removed."""
        with self.lock:
            self.closed = True
        while True:
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return
            if event[0] == "done":
                event[1].discard()

    def first(self) -> tuple:
        """Wait for the outcome when it comes with the first chunk: ("error", exc), ("done", staged), or
        ("stream", total, rows) when more chunks follow."""
        total = None
        while True:
            event = self.events.get()
            if event[0] == "total":
                total = event[1]
            elif event[0] == "rows" and event[1] >= sql.CHUNK_ROWS:
                return ("stream", total, event[1])
            elif event[0] in ("done", "error"):
                return event


def _error_text(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, (InputError, VaultError)) else f"{type(exc).__name__}: {exc}"


def _line(rows: int, total: int | None) -> str:
    if total:
        return f"<li>[{min(100, round(rows * 100 / total)):3d}%] read {rows:,} of {total:,} rows</li>\n"
    return f"<li>read {rows:,} rows</li>\n"


def _streamed(request, reading: Reading, total: int | None, rows: int, store, back: str) -> StreamingHttpResponse:
    """The page of a long import: a line per chunk read, then the dataset stored (``store(staged)``) and
    the page continues to it (meta refresh: no inline script under the CSP)."""

    def events_html():
        yield _line(rows, total)
        while True:
            event = reading.events.get()
            if event[0] == "total":
                continue
            if event[0] == "rows":
                yield _line(event[1], total)
                continue
            if event[0] == "error":
                yield (f'</ol><div class="message message-error" role="alert" id="sql-import-error">'
                       f'The import failed: {escape(_error_text(event[1]))}</div>'
                       f'<p><a class="btn" href="{back}">Back</a></p>')
                return
            try:
                dataset = store(event[1])
            except (InputError, VaultError) as exc:
                yield (f'</ol><div class="message message-error" role="alert" id="sql-import-error">'
                       f'The import failed: {escape(_error_text(exc))}</div>')
                return
            url = reverse("anonymizer:dataset", args=[dataset.pk])
            yield (f'</ol><p id="sql-import-done">Imported {escape(dataset.name)}: {dataset.n_rows:,} rows, '
                   f'{dataset.n_columns} columns.</p><meta http-equiv="refresh" content="0; url={url}">'
                   f'<p><a class="btn btn-primary" href="{url}">Continue: the dataset</a></p>')
            return

    def page():
        yield (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Importing from a database · '
               f'Anonymizer</title><link rel="stylesheet" href="{static("css/app.css")}"></head><body>'
               f'<main class="container"><h1>Importing from a database</h1>'
               f'<p class="muted">Reading {escape(reading.table or "the query")} in chunks of {sql.CHUNK_ROWS:,} '
               f'rows. <a href="{back}" id="sql-import-cancel">Cancel</a> (leaving this page stops the import; '
               f'nothing is stored).</p><ol id="sql-progress-lines">\n')
        try:
            yield from events_html()
        finally:
            reading.close()
        yield "</main></body></html>"

    return StreamingHttpResponse(_Body(page(), reading), content_type="text/html; charset=utf-8")


class _Body:
    """The streamed page; closing it (the server does, also when the client went away before the first
    line) stops the reading, even if the page never started."""

    def __init__(self, lines, reading: Reading):
        self.lines, self.reading = lines, reading

    def __iter__(self):
        return self.lines

    def close(self) -> None:
        self.lines.close()
        self.reading.close()


@login_required
@require_http_methods(["GET", "POST"])
def import_sql(request):
    form = SqlImportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        by_table = d["source"] == "table"
        table, query = (d["table"].strip(), "") if by_table else ("", d["query"])
        password = d["password"] or None
        reading = Reading(d["url"], table, query, password).start()

        def store(staged):
            return sql.store_import(request.user, staged, d["url"], table, query, name=d["name"].strip() or None,
                                    keep_password=d["keep_password"], password=password)

        outcome = reading.first()
        if outcome[0] == "stream":
            return _streamed(request, reading, outcome[1], outcome[2], store, reverse("anonymizer:import_sql"))
        try:
            if outcome[0] == "error":
                raise outcome[1]
            dataset = store(outcome[1])
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
    back = reverse("anonymizer:dataset", args=[ds.pk])
    try:
        password = request.POST.get("password") or sql.reimport_password(ds)
    except VaultError as exc:
        messages.error(request, f"The re-import failed: {exc}")
        return redirect(back)
    url, table, query = source["url"], source.get("table", ""), source.get("query", "")
    reading = Reading(url, table, query, password).start()

    def store(staged):
        return sql.store_import(request.user, staged, url, table, query, name=ds.name,
                                keep_password=bool(source.get("password")), password=password)

    outcome = reading.first()
    if outcome[0] == "stream":
        return _streamed(request, reading, outcome[1], outcome[2], store, back)
    try:
        if outcome[0] == "error":
            raise outcome[1]
        fresh = store(outcome[1])
    except (InputError, VaultError) as exc:
        messages.error(request, f"The re-import failed: {exc}")
        return redirect(back)
    messages.success(request, f"Re-imported {fresh.name} as a new dataset: {fresh.n_rows:,} rows, "
                              f"{fresh.n_columns} columns (roles detected anew).")
    return redirect("anonymizer:dataset", dataset_id=fresh.pk)
