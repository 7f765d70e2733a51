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
from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.html import escape
from django.views.decorators.http import require_http_methods

from accounts.throttling import throttle

from ..engine import Cancelled, InputError
from ..services import exports, sql
from ..services.vault import VaultError
from ..sql_forms import SqlExportForm, SqlImportForm
from .common import owned_dataset, table_result


class Beside:
    """Work on an external database run in a thread beside the request (no app database there): its events
    (("total", n | None), ("rows", n), ("done", outcome), ("error", exc)) and the flag that stops it when
    the page is left; ``discard`` removes an outcome nobody will take."""

    def __init__(self, work: Callable[[Beside], object], name: str,
                 discard: Callable[[object], None] | None = None, label: str = ""):
        self.work, self.name, self.discard, self.label = work, name, discard, label
        self.events: queue.Queue = queue.Queue()
        self.closed = False
        self.lock = threading.Lock()

    def start(self) -> Beside:
        threading.Thread(target=self._run, name=self.name, daemon=True).start()
        return self

    def total(self, n: int | None) -> None:
        self.events.put(("total", n))

    def progress(self, rows: int) -> None:
        if self.closed:
            raise Cancelled("the page was left")
        self.events.put(("rows", rows))

    def _run(self) -> None:
        try:
            outcome = self.work(self)
        except BaseException as exc:  # handed to the request, which names it
            self.events.put(("error", exc))
            return
        with self.lock:  # a page left meanwhile takes nothing: the outcome goes here
            if self.closed:
                if self.discard is not None:
                    self.discard(outcome)
            else:
                self.events.put(("done", outcome))

    def close(self) -> None:
        """Stop the work; an outcome nobody will take is discarded."""
        with self.lock:
            self.closed = True
        while True:
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return
            if event[0] == "done" and self.discard is not None:
                self.discard(event[1])

    def first(self, more: Callable[[int, int | None], bool]) -> tuple:
        """Wait for the outcome when it comes with the first progress: ("error", exc), ("done", outcome), or
        ("stream", total, rows) when ``more(rows, total)`` says more follows."""
        total = None
        while True:
            event = self.events.get()
            if event[0] == "total":
                total = event[1]
            elif event[0] == "rows" and more(event[1], total):
                return ("stream", total, event[1])
            elif event[0] in ("done", "error"):
                return event


def reading(url: str, table: str, query: str, password: str | None) -> Beside:
    """An import's rows read into staged files (sql.stage_import), the table counted first."""
    def work(beside: Beside):
        beside.total(sql.count_rows(url, table, web=True, password=password))
        return sql.stage_import(url, table, query, web=True, password=password, progress=beside.progress)

    return Beside(work, "sql-import", discard=lambda staged: staged.discard(), label=table or "the query")


def _error_text(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, (InputError, VaultError)) else f"{type(exc).__name__}: {exc}"


def _line(verb: str, rows: int, total: int | None) -> str:
    if total:
        return f"<li>[{min(100, round(rows * 100 / total)):3d}%] {verb} {rows:,} of {total:,} rows</li>\n"
    return f"<li>{verb} {rows:,} rows</li>\n"


def _streamed(beside: Beside, total: int | None, rows: int, finish: Callable[[object], str], back: str,
              title: str, intro: str, verb: str) -> StreamingHttpResponse:
    """The page of long work: a line per chunk, then ``finish(outcome)`` (the dataset stored: HTML saying so,
    a meta refresh onwards: no inline script under the CSP)."""

    def events_html():
        yield _line(verb, rows, total)
        while True:
            event = beside.events.get()
            if event[0] == "total":
                continue
            if event[0] == "rows":
                yield _line(verb, event[1], total)
                continue
            try:
                if event[0] == "error":
                    raise event[1]
                yield "</ol>" + finish(event[1])
            except (InputError, VaultError) as exc:
                yield (f'</ol><div class="message message-error" role="alert" id="sql-error">'
                       f'{escape(title)} failed: {escape(_error_text(exc))}</div>'
                       f'<p><a class="btn" href="{back}">Back</a></p>')
            return

    def page():
        yield (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)} · '
               f'Anonymizer</title><link rel="stylesheet" href="{static("css/app.css")}"></head><body>'
               f'<main class="container"><h1>{escape(title)}</h1>'
               f'<p class="muted">{intro} <a href="{back}" id="sql-cancel">Cancel</a> (leaving this page stops it; '
               f'nothing is kept).</p><ol id="sql-progress-lines">\n')
        try:
            yield from events_html()
        finally:
            beside.close()
        yield "</main></body></html>"

    return StreamingHttpResponse(_Body(page(), beside), content_type="text/html; charset=utf-8")


class _Body:
    """The streamed page; closing it (the server does, also when the client went away before the first
    line) stops the work, even if the page never started."""

    def __init__(self, lines, beside: Beside):
        self.lines, self.beside = lines, beside

    def __iter__(self):
        return self.lines

    def close(self) -> None:
        self.lines.close()
        self.beside.close()


def _import_response(request, beside: Beside, store: Callable, back: str):
    """("stream", response) for a source larger than one chunk, else the outcome: ("error", exc) or
    ("done", dataset stored)."""
    outcome = beside.first(lambda rows, total: rows >= sql.CHUNK_ROWS)
    if outcome[0] == "stream":
        def finish(staged) -> str:
            dataset = store(staged)
            url = reverse("anonymizer:dataset", args=[dataset.pk])
            return (f'<p id="sql-done">Imported {escape(dataset.name)}: {dataset.n_rows:,} rows, '
                    f'{dataset.n_columns} columns.</p><meta http-equiv="refresh" content="0; url={url}">'
                    f'<p><a class="btn btn-primary" href="{url}">Continue: the dataset</a></p>')

        intro = f"Reading {escape(beside.label)} in chunks of {sql.CHUNK_ROWS:,} rows."
        return ("stream", _streamed(beside, outcome[1], outcome[2], finish, back, "Importing from a database",
                                    intro, "read"))
    if outcome[0] == "error":
        return outcome
    try:
        return ("done", store(outcome[1]))
    except (InputError, VaultError) as exc:
        return ("error", exc)


@login_required
@require_http_methods(["GET", "POST"])
@throttle("sql")
def import_sql(request):
    form = SqlImportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        by_table = d["source"] == "table"
        table, query = (d["table"].strip(), "") if by_table else ("", d["query"])
        password = d["password"] or None
        beside = reading(d["url"], table, query, password)

        def store(staged):
            return sql.store_import(request.user, staged, d["url"], table, query, name=d["name"].strip() or None,
                                    keep_password=d["keep_password"], password=password)

        kind, outcome = _import_response(request, beside.start(), store, reverse("anonymizer:import_sql"))
        if kind == "stream":
            return outcome
        if kind == "error":
            if not isinstance(outcome, InputError):
                raise outcome
            form.add_error(None, str(outcome))
        else:
            messages.success(request, f"Imported {outcome.name}: {outcome.n_rows:,} rows, {outcome.n_columns} "
                                      "columns. Check the preview, then set the column roles.")
            return redirect("anonymizer:dataset", dataset_id=outcome.pk)
    return render(request, "anonymizer/import_sql.html", {"form": form, "servers_refusal": sql.servers_refusal()},
                  status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
@throttle("sql")
def export_sql(request, job_id):
    j, res = table_result(request, job_id)
    form = SqlExportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        frame = exports.result_frame(res, d["drop_suppressed"])
        kinds = exports.column_kinds(frame, exports.job_column_types(j))
        beside = Beside(lambda b: sql.write_table(frame, d["url"], d["table"], kinds, replace=d["replace"], web=True,
                                                  password=d["password"] or None, progress=b.progress),
                        "sql-export").start()
        done_text = f"to the table {d['table']} at {sql.public_url(d['url'])}"
        result_url = reverse("anonymizer:result", args=[j.pk])
        outcome = beside.first(lambda rows, total: rows < len(frame))
        if outcome[0] == "stream":
            def finish(written) -> str:
                return (f'<p id="sql-done">Wrote {written:,} rows {escape(done_text)}.</p><meta http-equiv="refresh" '
                        f'content="2; url={result_url}"><p><a class="btn btn-primary" href="{result_url}">Back to '
                        f'the result</a></p>')

            intro = (f"Writing {len(frame):,} rows {escape(done_text)} in batches of {sql.INSERT_ROWS:,}; the table "
                     f"appears when all are written.")
            return _streamed(beside, len(frame), outcome[2], finish, reverse("anonymizer:export_sql", args=[j.pk]),
                             "Exporting to a database", intro, "wrote")
        if outcome[0] == "error":
            if not isinstance(outcome[1], InputError):
                raise outcome[1]
            form.add_error(None, str(outcome[1]))
        else:
            messages.success(request, f"Wrote {outcome[1]:,} rows {done_text}.")
            return redirect("anonymizer:result", job_id=j.pk)
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
    url, table, query = source["url"], source.get("table", ""), source.get("query", "")
    beside = reading(url, table, query, password)

    def store(staged):
        return sql.store_import(request.user, staged, url, table, query, name=ds.name,
                                keep_password=bool(source.get("password")), password=password)

    kind, outcome = _import_response(request, beside.start(), store, back)
    if kind == "stream":
        return outcome
    if kind == "error":
        if not isinstance(outcome, (InputError, VaultError)):
            raise outcome
        messages.error(request, f"The re-import failed: {outcome}")
        return redirect(back)
    messages.success(request, f"Re-imported {outcome.name} as a new dataset: {outcome.n_rows:,} rows, "
                              f"{outcome.n_columns} columns (roles detected anew).")
    return redirect("anonymizer:dataset", dataset_id=outcome.pk)
