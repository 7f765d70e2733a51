"""Hierarchy pages: the library, one hierarchy, and the hierarchy of a dataset column.

Everything is owner-scoped (another user's object is a 404) and pages only render samples: a city
hierarchy has ~18,000 leaves, so levels show counts and a few labels, never every leaf.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import itertools
import json
import re
import threading
from collections import OrderedDict

import pandas as pd
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.db.models import Prefetch
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from anonymizer_app.engine import HierarchyError, InputError, Role, default_hierarchy
from anonymizer_app.engine.io import json_limits
from anonymizer_app.engine.model.default_description import describe_default
from anonymizer_app.engine.model.defaults import default_builder
from anonymizer_app.engine.model.hierarchy import with_missing, without_missing
from anonymizer_app.engine.model.missing import MISSING, normalize_missing
from anonymizer_app.engine.model.table import NUMERIC_TYPES
from anonymizer_app.engine.model.tree import HierarchyTree
from anonymizer_app.models import Column, Dataset
from anonymizer_app.services import erasure
from anonymizer_app.services.datasets import load_frame
from anonymizer_app.views.erasure import confirm_page

from . import drafts
from .forms import (
    FORMAT_LABELS,
    BuilderForm,
    HierarchyUploadForm,
    ResolutionForm,
    SelectHierarchyForm,
    discard_pending,
    label_of,
    save_pending,
)
from .models import NAME_MAX, Hierarchy, fit_name

LABEL_SAMPLE = 8  # labels shown per level
VALUE_SAMPLE = 10  # most frequent data values shown with their labels at every level
LISTED = 20  # uncovered or ambiguous values listed before "and N more"
LEAF_ROWS = 15  # leaves shown with their full path on the detail page
PARSED_CACHE_SIZE = 4  # parsed hierarchies kept per process (a city file takes ~0.3 s to parse)

_parsed_cache: OrderedDict[tuple, object] = OrderedDict()
_parsed_lock = threading.Lock()


# ---- helpers -------------------------------------------------------------------------------------
def parsed_hierarchy(h: Hierarchy):
    """``h.to_engine()``, reused across requests while the stored text and settings are unchanged."""
    digest = hashlib.blake2b(h.content.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    key = (h.pk, h.name, h.source_name, h.delimiter, h.on_conflict, digest)
    with _parsed_lock:
        parsed = _parsed_cache.get(key)
        if parsed is not None:
            _parsed_cache.move_to_end(key)
            return parsed
    parsed = h.to_engine()  # raises HierarchyError; errors are not cached
    parsed.leaf_index  # noqa: B018 - build the lookup once, outside the lock, before sharing
    with _parsed_lock:
        _parsed_cache[key] = parsed
        while len(_parsed_cache) > PARSED_CACHE_SIZE:
            _parsed_cache.popitem(last=False)
    return parsed


def _levels(parsed) -> list[dict]:
    """Per level: number of labels and a sample of them, with the number of leaves under each."""
    out = []
    for item in parsed.level_summary(LABEL_SAMPLE):
        level = item["level"]
        if level == 0:
            sample = [(label, None) for label in item["sample"]]
        else:
            counts = parsed.leaf_counts(level)
            sample = [(str(parsed.labels[level][i]), int(counts[i])) for i in range(min(LABEL_SAMPLE, item["count"]))]
        out.append({"level": level, "count": item["count"], "sample": sample,
                    "more": max(0, item["count"] - LABEL_SAMPLE),
                    "name": "original values" if level == 0 else ("root" if level == parsed.height else "")})
    return out


def _conflicts(parsed_or_error_conflicts, data_values: set | None = None) -> dict:
    conflicts = list(parsed_or_error_conflicts or [])
    in_data = [c.value for c in conflicts if data_values is not None and c.value in data_values]
    return {
        "count": len(conflicts),
        "shown": [{"value": c.value, "lines": ", ".join(map(str, c.lines[:6])) + (
                       f" … ({len(c.lines)} lines)" if len(c.lines) > 6 else ""),
                   "paths": [" → ".join(p) for p in c.paths[:4]], "more_paths": max(0, len(c.paths) - 4)}
                  for c in conflicts[:LISTED]],
        "more": max(0, len(conflicts) - LISTED),
        "in_data": in_data[:LISTED],
        "in_data_count": len(in_data),
        "in_data_more": max(0, len(in_data) - LISTED),
    }


def _leaf_set(h: Hierarchy) -> set[str]:
    """The leaves of a stored hierarchy from its first column only: much cheaper than a full parse."""
    try:
        rows = csv.reader(io.StringIO(h.content.lstrip("\ufeff")), delimiter=h.delimiter)
        return {row[0] for row in rows if row and any(c.strip() for c in row)}
    except csv.Error:
        return set()


def _covering_hierarchies(user, distinct: set[str], current_id: int | None) -> tuple[list[Hierarchy], int]:
    """The user's hierarchies whose leaves include every distinct value; and how many do not."""
    library = Hierarchy.objects.filter(owner=user)
    others = library.filter(leaves__lt=len(distinct)).count()
    probe = list(itertools.islice(distinct, 50))
    covering = []
    for h in library.filter(leaves__gte=len(distinct)).order_by("name", "pk"):
        # Cheap test first (a few values somewhere in the text), then the full leaf set.
        if all(v in h.content for v in probe) and distinct <= _leaf_set(h):
            covering.append(h)
        else:
            others += 1
    # The bound one first, it is the natural "keep this" choice.
    covering.sort(key=lambda h: h.pk != current_id)
    return covering, others


def _column_for(request, dataset_id: int, column_id: int) -> tuple[Dataset, Column]:
    dataset = get_object_or_404(Dataset, pk=dataset_id, owner=request.user)
    column = get_object_or_404(Column.objects.select_related("hierarchy"), pk=column_id, dataset=dataset)
    return dataset, column


def _default_name(dataset: Dataset, column: Column) -> str:
    return fit_name(f"{column.name} ({dataset.name})")


def _column_values(dataset: Dataset, name: str) -> pd.Series:
    """A column's cells as a run reads them: blanks and NA markers are the missing value (engine.missing)."""
    return normalize_missing(load_frame(dataset, columns=[name])[name])


def _column_url(column: Column) -> str:
    return reverse("hierarchies:column", args=[column.dataset_id, column.pk])


# ---- column page ---------------------------------------------------------------------------------
def _column_context(request, dataset: Dataset, column: Column, values: pd.Series | None = None) -> dict:
    if values is None:
        values = _column_values(dataset, column.name)
    counts = values.value_counts(sort=True)
    distinct = {str(v) for v in counts.index}
    numeric = column.type in NUMERIC_TYPES
    bound = column.hierarchy
    ctx: dict = {
        "dataset": dataset, "column": column, "bound": bound, "numeric": numeric,
        "is_qi": column.role == Role.QUASI_IDENTIFYING.value, "distinct_count": len(distinct),
        "n_rows": int(len(values)), "error": "", "parsed": None,
    }
    try:
        parsed = parsed_hierarchy(bound) if bound else default_hierarchy(column.name, values, numeric, column.type)
        if (values == MISSING).any():  # as a run does: missing cells get their own leaf, (null) up to the root
            parsed = with_missing(parsed)
        if not bound:  # the help says what was built: its builder, options and levels (never a fixed text)
            kind, options = default_builder(values, column.type)
            ctx["default_description"] = describe_default(parsed, options if kind == parsed.kind else None, values)
    except HierarchyError as exc:
        ctx["error"] = str(exc)
        parsed = None
    if parsed is not None:
        missing = parsed.missing_values(counts.index)
        missing_rows = int(counts[counts.index.isin(missing)].sum()) if missing else 0
        index = parsed.leaf_index
        sample = []
        for value, n in counts.head(VALUE_SAMPLE).items():
            leaf = index.get(str(value))
            labels = None if leaf is None else [str(parsed.labels[lv][parsed.maps[lv][leaf]])
                                                for lv in range(parsed.level_count)]
            sample.append({"value": str(value), "count": int(n), "labels": labels})
        ctx.update(
            parsed=parsed, levels=_levels(parsed), level_numbers=list(range(parsed.level_count)),
            sample=sample, missing=missing[:LISTED * 5], missing_count=len(missing),
            missing_more=max(0, len(missing) - LISTED * 5), missing_rows=missing_rows,
            notes=parsed.notes, conflicts=_conflicts(parsed.conflicts, distinct),
        )
    covering, others = _covering_hierarchies(request.user, distinct, bound.pk if bound else None)
    ctx["library_choices"], ctx["library_others"] = covering, others
    return ctx


def _render_column(request, dataset, column, upload_form=None, select_form=None, upload_error="",
                   pending=None, status=200, values=None):
    ctx = _column_context(request, dataset, column, values)
    ctx["upload_form"] = upload_form or HierarchyUploadForm(user=request.user,
                                                            default_name=_default_name(dataset, column))
    if select_form is None:
        select_form = SelectHierarchyForm(user=request.user,
                                          initial={"hierarchy": column.hierarchy_id} if column.hierarchy_id else None)
    select_form.fields["hierarchy"].choices = [(h.pk, label_of(h)) for h in ctx["library_choices"]]
    ctx["select_form"] = select_form
    ctx["upload_error"] = upload_error
    ctx["pending"] = pending
    ctx["upload_url"] = reverse("hierarchies:column_upload", args=[dataset.pk, column.pk])
    return render(request, "hierarchy_editor/column.html", ctx, status=status)


@login_required
@require_GET
def column(request, dataset_id: int, column_id: int):
    dataset, col = _column_for(request, dataset_id, column_id)
    return _render_column(request, dataset, col)


def _handle_upload(request, form: HierarchyUploadForm, data_values: set | None = None):
    """Parse a valid upload form. Returns (hierarchy, None, None), or (None, error, pending) on failure."""
    try:
        h = form.build()
    except HierarchyError as exc:
        conflicts = getattr(exc, "conflicts", None)
        if not conflicts:
            return None, str(exc), None
        data = form.cleaned_data
        token = data.get("pending") or save_pending(request.user, data["text"], data["source_name"], data["name"])
        pending = {
            "conflicts": _conflicts(conflicts, data_values),
            "form": ResolutionForm(initial={"pending": token, "name": data["name"], "on_conflict": "lift",
                                            "format": data.get("format") or "auto"}),
            "source_name": data["source_name"],
        }
        return None, str(exc), pending
    h.save()
    discard_pending(request.user, form.cleaned_data.get("pending") or "")
    return h, None, None


@login_required
@require_POST
def column_upload(request, dataset_id: int, column_id: int):
    dataset, col = _column_for(request, dataset_id, column_id)
    form = HierarchyUploadForm(request.POST, request.FILES, user=request.user,
                               default_name=_default_name(dataset, col))
    if not form.is_valid():
        return _render_column(request, dataset, col, upload_form=form, status=400)
    values = _column_values(dataset, col.name)
    h, error, pending = _handle_upload(request, form, {str(v) for v in pd.unique(values)})
    if h is None:
        return _render_column(request, dataset, col, upload_form=form, upload_error=error, pending=pending,
                              status=400, values=values)
    col.hierarchy = h
    col.save(update_fields=["hierarchy"])
    messages.success(request, f"Hierarchy {h.name!r} ({h.leaves} leaves, height {h.height}) is now used "
                              f"for column {col.name!r}.")
    missing = parsed_hierarchy(h).missing_values(values)
    if missing:
        messages.warning(request, f"{len(missing)} value(s) of column {col.name!r} are not covered by the "
                                  f"hierarchy: a run will fail until they are. They are listed below.")
    return redirect(_column_url(col))


@login_required
@require_POST
def column_default(request, dataset_id: int, column_id: int):
    dataset, col = _column_for(request, dataset_id, column_id)
    if col.hierarchy_id:
        col.hierarchy = None
        col.save(update_fields=["hierarchy"])
        messages.success(request, f"Column {col.name!r} now uses the default hierarchy built from its data.")
    return redirect(_column_url(col))


@login_required
@require_POST
def column_edit_default(request, dataset_id: int, column_id: int):
    """"Edit the tree" of a column on its default hierarchy, in one click: the default is written to the library
    as an editable copy bound to the column (it replaces the default there; "Use default hierarchy" brings the
    default back) and the visual editor opens on it. A column already bound edits its own hierarchy."""
    dataset, col = _column_for(request, dataset_id, column_id)
    if col.hierarchy_id:  # a second click, or another tab: edit what the column uses
        return redirect(f"{reverse('hierarchies:edit', args=[col.hierarchy_id])}?column={col.pk}")
    values = _column_values(dataset, col.name)
    try:
        built = default_hierarchy(col.name, values, col.type in NUMERIC_TYPES, col.type)
    except HierarchyError as exc:
        messages.error(request, f"The default hierarchy of column {col.name!r} cannot be built: {exc}")
        return redirect(_column_url(col))
    parsed = without_missing(built)  # a file's leaf cannot be empty: a run adds the missing leaf again
    if MISSING in parsed.leaf_index:
        messages.error(request, f"Column {col.name!r} has only missing cells: its default hierarchy has no "
                                f"value to edit.")
        return redirect(_column_url(col))
    nodes = sum(len(labels) for labels in parsed.labels)
    most = _editor_limit("HIERARCHY_EDITOR_MAX_NODES", EDITOR_MAX_NODES)
    if nodes > most:  # refused before anything is written or bound
        messages.error(request, f"The default hierarchy of column {col.name!r} has {nodes:,} nodes, more than the "
                                f"tree editor's limit of {most:,}; build a coarser one instead.")
        return redirect(_column_url(col))
    h = Hierarchy(owner=request.user, name=fit_name(f"{col.name} ({dataset.name}) edited default"),
                  source_name=fit_name(built.source, 255), source_format="editor", content=parsed.to_csv(";"),
                  delimiter=";", leaves=len(parsed.leaves), height=parsed.height)
    h.save()
    col.hierarchy = h
    col.save(update_fields=["hierarchy"])
    messages.info(request, f"You are editing a copy of the default hierarchy of column {col.name!r}, saved in your "
                           f"library as {h.name!r}: it now replaces the default for this column. "
                           f"\u201cUse default hierarchy\u201d on the column's page brings the default back.")
    return redirect(f"{reverse('hierarchies:edit', args=[h.pk])}?column={col.pk}")


@login_required
@require_POST
def column_select(request, dataset_id: int, column_id: int):
    dataset, col = _column_for(request, dataset_id, column_id)
    values = _column_values(dataset, col.name)
    form = SelectHierarchyForm(request.POST, user=request.user, values=values, column_name=col.name,
                               parse=parsed_hierarchy)
    if not form.is_valid():
        return _render_column(request, dataset, col, select_form=form, status=400, values=values)
    h = form.cleaned_data["hierarchy"]
    col.hierarchy = h
    col.save(update_fields=["hierarchy"])
    messages.success(request, f"Hierarchy {h.name!r} is now used for column {col.name!r}.")
    return redirect(_column_url(col))


# ---- library -------------------------------------------------------------------------------------
def _library(user):
    columns = Prefetch("columns", queryset=Column.objects.select_related("dataset").order_by("dataset__name",
                                                                                             "position"))
    return Hierarchy.objects.filter(owner=user).defer("content").prefetch_related(columns)


@login_required
@require_GET
def index(request):
    return render(request, "hierarchy_editor/index.html", {
        "hierarchies": _library(request.user),
        "form": HierarchyUploadForm(user=request.user),
    })


@login_required
@require_http_methods(["GET", "POST"])
def upload(request):
    error, pending = "", None
    if request.method == "POST":
        form = HierarchyUploadForm(request.POST, request.FILES, user=request.user)
        if form.is_valid():
            h, error, pending = _handle_upload(request, form)
            if h is not None:
                messages.success(request, f"Hierarchy {h.name!r} added to your library ({h.leaves} leaves, "
                                          f"height {h.height}).")
                return redirect("hierarchies:detail", pk=h.pk)
        status = 400
    else:
        form = HierarchyUploadForm(user=request.user)
        status = 200
    return render(request, "hierarchy_editor/upload.html",
                  {"form": form, "upload_error": error, "pending": pending}, status=status)


@login_required
@require_GET
def detail(request, pk: int):
    h = get_object_or_404(Hierarchy, pk=pk, owner=request.user)
    ctx: dict = {"h": h, "error": "", "columns": h.columns.select_related("dataset").order_by(
        "dataset__name", "position")}
    try:
        parsed = parsed_hierarchy(h)
    except HierarchyError as exc:
        ctx["error"] = str(exc)
    else:
        shown = min(LEAF_ROWS, len(parsed.leaves))
        rows = [[str(parsed.labels[lv][parsed.maps[lv][i]]) for lv in range(parsed.level_count)]
                for i in range(shown)]
        ctx.update(parsed=parsed, levels=_levels(parsed), level_numbers=list(range(parsed.level_count)),
                   rows=rows, rows_more=len(parsed.leaves) - shown, notes=parsed.notes,
                   conflicts=_conflicts(parsed.conflicts))
    return render(request, "hierarchy_editor/detail.html", ctx)


@login_required
@require_GET
def download(request, pk: int):
    h = get_object_or_404(Hierarchy, pk=pk, owner=request.user)
    try:
        text = parsed_hierarchy(h).to_csv(";")
    except HierarchyError as exc:
        messages.error(request, str(exc))
        return redirect("hierarchies:detail", pk=h.pk)
    filename = f"{slugify(h.name) or 'hierarchy'}.csv"
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    return response


EXPORT_FILES = {  # format -> (file name suffix, content type)
    "arx": (".csv", "text/csv"), "datafly": ("-datafly.csv", "text/csv"),
    "amnesia-text": ("-amnesia.txt", "text/plain"), "amnesia-json": ("-amnesia.json", "application/json"),
}


@login_required
@require_GET
def export(request, pk: int, fmt: str):
    """The hierarchy in one of the file formats; a format that cannot hold a value says so."""
    from anonymizer_app.engine.model.formats import FORMATS, write_hierarchy

    h = get_object_or_404(Hierarchy, pk=pk, owner=request.user)
    if fmt not in FORMATS:
        raise Http404(f"no format {fmt!r}")
    try:
        text = write_hierarchy(parsed_hierarchy(h), fmt)
    except HierarchyError as exc:
        messages.error(request, f"Cannot export {h.name!r} as {FORMAT_LABELS.get(fmt, fmt)}: {exc}")
        return redirect("hierarchies:detail", pk=h.pk)
    suffix, content_type = EXPORT_FILES.get(fmt, (f".{fmt}.txt", "text/plain"))
    filename = f"{slugify(h.name) or 'hierarchy'}{suffix}"
    response = HttpResponse(text, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    return response


@login_required
@require_http_methods(["GET", "POST"])
def delete(request, pk: int):
    """GET: what deleting the hierarchy does, and a confirmation; POST: delete it. Columns bound to it fall back
    to the default hierarchy (as in ARX, where a removed hierarchy leaves the attribute without one); jobs keep
    a copy of it with their configuration, so their lattice and comparisons still work."""
    h = get_object_or_404(Hierarchy, pk=pk, owner=request.user)
    if request.method == "POST":
        name = h.name
        done = erasure.erase_hierarchy(h)
        messages.success(request, "; ".join([f"Deleted hierarchy {name!r}", *done.notes]) + ".")
        return redirect("hierarchies:index")
    return confirm_page(request, title=f"Delete the hierarchy {h.name}?", what=f"hierarchy {h.name!r}",
                        preview=erasure.erase_hierarchy(h, dry_run=True),
                        action=reverse("hierarchies:delete", args=[h.pk]),
                        back_url=reverse("hierarchies:detail", args=[h.pk]))


# ---- JSON endpoints: shared plumbing -------------------------------------------------------------
def json_error(message: str, status: int = 400, **extra) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def json_endpoint(methods: tuple[str, ...]):
    """Owner-scoped JSON view: anonymous -> 403 JSON, another user's object -> 404 JSON, wrong method -> 405."""
    def decorate(view):
        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return json_error("Log in to use the hierarchy editor.", 403)
            if request.method not in methods:
                response = json_error(f"{request.method} is not allowed here.", 405)
                response["Allow"] = ", ".join(methods)
                return response
            try:
                return view(request, *args, **kwargs)
            except Http404:
                return json_error("Not found.", 404)
            except BadRequest as exc:
                return json_error(str(exc))
            except drafts.DraftMissing:
                return json_error("This editing session has expired or does not exist; open the editor again.",
                                  404)
            except drafts.DraftTooLarge as exc:
                return json_error(f"The edit was not kept: {exc}.")
        return wrapper
    return decorate


EDITOR_MAX_BODY_BYTES = 64 * 1024  # an edit is a path and a label; settings HIERARCHY_EDITOR_MAX_BODY_BYTES
EDITOR_MAX_NODES = 200_000  # nodes of an edited tree (a city file has ~30,000); HIERARCHY_EDITOR_MAX_NODES
SEARCH_MAX_CHARS = 200


def _editor_limit(name: str, default: int) -> int:
    return int(getattr(settings, name, default))


def _json_body(request) -> dict:
    limit = _editor_limit("HIERARCHY_EDITOR_MAX_BODY_BYTES", EDITOR_MAX_BODY_BYTES)
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit:  # refused before the body is read
        raise BadRequest(f"The request body is {declared:,} bytes, more than the editor's limit of {limit:,}.")
    try:
        data = json_limits.loads(request.body.decode("utf-8") or "{}", "The request body")
    except json_limits.JsonLimitError as exc:
        raise BadRequest(f"{exc}.") from None
    except (UnicodeDecodeError, ValueError):
        raise BadRequest("The request body is not JSON.") from None
    if not isinstance(data, dict):
        raise BadRequest("The request body must be a JSON object.")
    return data


def _path_arg(value, what: str = "path") -> list[str]:
    if isinstance(value, str):
        try:
            value = json_limits.loads(value or "[]", what)
        except json_limits.JsonLimitError as exc:
            raise BadRequest(f"{exc}.") from None
        except ValueError:
            raise BadRequest(f"{what} must be a JSON list of labels.") from None
    if value is None:
        value = []
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise BadRequest(f"{what} must be a list of labels.")
    return value


def _label_arg(value) -> str:
    """A node label from an edit: text, not empty, within HIERARCHY_MAX_LABEL_CHARS."""
    from .forms import size_limits

    if not isinstance(value, str):
        raise BadRequest(f"label must be text, got {json.dumps(value)[:40]}.")
    limit = size_limits()["max_label_chars"]
    if len(value) > limit:
        raise BadRequest(f"label has {len(value):,} characters, more than the limit of {limit:,}.")
    return value


def _node_count(node: dict) -> tuple[int, int]:
    """(nodes, depth in levels below the root) of a draft tree."""
    count, depth, stack = 0, 0, [(node, 0)]
    while stack:
        n, d = stack.pop()
        count += 1
        depth = max(depth, d)
        stack.extend((c, d + 1) for c in n.get("children") or ())
    return count, depth


def _check_move_depth(tree: dict, path: list[str], to: list[str]) -> None:
    """A move that would make more levels than the limit is refused (as an add is): repeated moves could
    otherwise nest a chain of nodes deeper than anything the editor, the saved file or json can hold."""
    from .forms import size_limits

    node = tree
    for label in path:
        node = next((c for c in node.get("children") or () if c.get("label") == label), None)
        if node is None:
            return  # the move itself names the missing node
    levels = size_limits()["max_levels"]
    made = len(to) + 2 + _node_count(node)[1]  # the root, the new parent's path, the node and its levels below
    if path and made > levels:
        raise BadRequest(f"Moving {' > '.join(path)} under {' > '.join(to) or 'the root'} would make {made} levels, "
                         f"more than the limit of {levels}.")


def _int_arg(value, default: int, lo: int, hi: int) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return default
    return max(lo, min(hi, n))


# ---- visual editor -------------------------------------------------------------------------------
EDITOR_PAGE = 200  # children sent per request
SEARCH_HITS = 50
SUNBURST_DEPTH = 4  # levels below the root drawn in the sunburst
SUNBURST_MAX_NODES = 4000
SUNBURST_LABEL_CHARS = 16  # characters of a label written on its slice


def _tree_to_draft(tree: HierarchyTree) -> dict:
    """The minimal nested dict of a tree ({"label", "children"}), the stored form of a draft state."""
    def walk(node) -> dict:
        return {"label": node.label, "children": [walk(c) for c in node.children]}
    return walk(tree.root)


def _editor_column(request, h: Hierarchy, column_id) -> Column | None:
    """The dataset column whose values the checks use: the one asked for, else the first bound one."""
    columns = Column.objects.select_related("dataset").filter(dataset__owner=request.user)
    if re.fullmatch(r"[0-9]{1,18}", str(column_id or "")):  # ?column=abc: the bound one, not a 500
        col = columns.filter(pk=int(column_id)).first()
        if col is not None:
            return col
    return columns.filter(hierarchy=h).order_by("dataset__name", "position").first()


_counts_cache: OrderedDict[tuple, dict] = OrderedDict()


def _value_counts(column: Column | None) -> dict[str, int] | None:
    """Records per distinct value of the column, as strings; cached per dataset file."""
    if column is None:
        return None
    key = (column.dataset_id, column.name, column.dataset.original.name, column.dataset.n_rows)
    with _parsed_lock:
        hit = _counts_cache.get(key)
    if hit is not None:
        return hit
    values = load_frame(column.dataset, columns=[column.name])[column.name]
    counts = {str(k): int(v) for k, v in values.value_counts(sort=True).items()}
    with _parsed_lock:
        _counts_cache[key] = counts
        while len(_counts_cache) > PARSED_CACHE_SIZE:
            _counts_cache.popitem(last=False)
    return counts


def _item_counts(dataset: Dataset, column: Column | None) -> dict[str, int]:
    """Item -> records holding it, of a transaction dataset or of a table's set-valued column: an item
    hierarchy's leaves are items, so its nodes are sized by their item occurrences; cached per file."""
    from anonymizer_app.services import setvalued

    key = ("items", dataset.pk, column.name if column else None, dataset.original.name, dataset.n_rows)
    with _parsed_lock:
        hit = _counts_cache.get(key)
    if hit is not None:
        return hit
    tx = (setvalued.transactions(dataset) if column is None
          else setvalued.column_records(dataset, column.name, column.item_delimiter))
    counts = tx.item_frequencies()
    with _parsed_lock:
        _counts_cache[key] = counts
        while len(_counts_cache) > PARSED_CACHE_SIZE:
            _counts_cache.popitem(last=False)
    return counts


def _editor_items(request, dataset_id) -> Dataset | None:
    """The owner's transaction dataset asked for by ?items=<id> (its items size an item hierarchy)."""
    if not re.fullmatch(r"[0-9]{1,18}", str(dataset_id or "")):
        return None
    return Dataset.objects.filter(pk=int(dataset_id), owner=request.user, layout=Dataset.TRANSACTIONS).first()


class _Source:
    """The data an editing session checks and sizes the tree with: a table column's values (records), or the
    items of a set-valued column or a transaction dataset (item occurrences), or nothing."""

    def __init__(self, request, h: Hierarchy, meta: dict):
        self.items_dataset = _editor_items(request, meta.get("items"))
        self.column = None if self.items_dataset else _editor_column(request, h, meta.get("column"))

    @property
    def set_valued(self) -> bool:
        return self.items_dataset is not None or bool(self.column and self.column.item_delimiter)

    @property
    def measure(self) -> str:
        return "item occurrences" if self.set_valued else "records"

    @property
    def label(self) -> str:
        if self.items_dataset is not None:
            return f"{self.items_dataset.name} / items"
        return f"{self.column.dataset.name} / {self.column.name}" if self.column else ""

    def counts(self) -> dict[str, int] | None:
        if self.items_dataset is not None:
            return _item_counts(self.items_dataset, None)
        if self.column is not None and self.column.item_delimiter:
            return _item_counts(self.column.dataset, self.column)
        return _value_counts(self.column)


def _load_draft(request, pk: int, token: str) -> tuple[Hierarchy, drafts.Draft]:
    h = get_object_or_404(Hierarchy.objects.defer("content"), pk=pk, owner=request.user)
    return h, drafts.Draft.load(request.user.pk, h.pk, token)


def _checks(request, h: Hierarchy, draft: drafts.Draft, tree: HierarchyTree | None = None) -> dict:
    source = _Source(request, h, draft.meta)
    counts = source.counts()
    tree = tree or HierarchyTree.from_dict(draft.tree, h.name)
    found = tree.checks(list(counts) if counts is not None else None)
    lo, hi = tree.depth_range()
    return {
        "column": source.label,
        "uncovered": found["uncovered"][:LISTED * 5], "uncovered_count": len(found["uncovered"]),
        "empty_nodes": found["empty_nodes"][:LISTED], "empty_count": len(found["empty_nodes"]),
        "unequal_depth": found["unequal_depth"], "depth_range": [lo, hi],
        "duplicate_labels": [{"level": level, "labels": labels[:LISTED], "count": len(labels)}
                             for level, labels in found["duplicate_labels"].items()],
        "leaves": len(tree.leaves()),
    }


def _session_state(draft: drafts.Draft) -> dict:
    return {"can_undo": draft.can_undo, "can_redo": draft.can_redo, "edits": draft.edits}


def _node_json(node: dict, path: list[str], records: int | None) -> dict:
    children = node.get("children") or ()
    return {"label": node["label"], "path": path, "leaves": drafts.leaf_count(node),
            "children": len(children), "records": records}


@login_required
@require_GET
def edit(request, pk: int):
    """Start an editing session on a copy of the hierarchy and open the editor on it; written only on change:
    the user's untouched session on the same text and column is opened again instead of another copy."""
    h = get_object_or_404(Hierarchy, pk=pk, owner=request.user)
    items = _editor_items(request, request.GET.get("items"))  # a transaction dataset's items
    column = None if items else _editor_column(request, h, request.GET.get("column"))
    meta = {"column": None, "items": items.pk} if items else {"column": column.pk if column else None}
    digest = hashlib.blake2b(h.content.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    draft = drafts.Draft.find_untouched(request.user.pk, h.pk, digest, meta)
    if draft is None:
        try:
            tree = HierarchyTree.from_hierarchy(parsed_hierarchy(h))
            draft = drafts.Draft.create(request.user.pk, h.pk, _tree_to_draft(tree), meta, digest)
        except (HierarchyError, drafts.DraftTooLarge) as exc:
            messages.error(request, f"This hierarchy cannot be edited: {exc}")
            return redirect("hierarchies:detail", pk=h.pk)
    return redirect("hierarchies:editor", pk=h.pk, token=draft.token)


@login_required
@require_GET
def editor(request, pk: int, token: str):
    h = get_object_or_404(Hierarchy.objects.defer("content"), pk=pk, owner=request.user)
    try:
        draft = drafts.Draft.load(request.user.pk, h.pk, token)
    except drafts.DraftMissing:
        messages.warning(request, "That editing session has expired; a new one was started.")
        return redirect("hierarchies:edit", pk=h.pk)
    source = _Source(request, h, draft.meta)
    base = reverse("hierarchies:editor", args=[h.pk, token])
    config = {
        "name": h.name, "root": draft.tree["label"], "page": EDITOR_PAGE,
        "urls": {"nodes": base + "nodes/", "search": base + "search/", "op": base + "op/",
                 "checks": base + "checks/", "sunburst": base + "sunburst/", "save": base + "save/",
                 "detail": reverse("hierarchies:detail", args=[h.pk])},
        "state": _session_state(draft), "measure": source.measure,
    }
    column = source.column
    replaces_default = (column is not None and column.hierarchy_id == h.pk
                        and h.source_name.startswith("default hierarchy of "))
    return render(request, "hierarchy_editor/editor.html", {
        "h": h, "token": token, "source": source, "config": config,
        "replaces_default": column if replaces_default else None,
        "columns": h.columns.select_related("dataset").order_by("dataset__name", "position"),
    })


@json_endpoint(("GET",))
def editor_nodes(request, pk: int, token: str):
    """One page of a node's children: ?path=<JSON list>&offset=&limit=, or &around=<label> for the
    page(s) from the start up to that child (used to reveal a search hit)."""
    h, draft = _load_draft(request, pk, token)
    path = _path_arg(request.GET.get("path"))
    tree = draft.tree
    node = drafts.find(tree, path)
    if node is None:
        return json_error(f"No node at {' > '.join(path) or 'the root'} (it was moved, renamed or deleted).", 404)
    children = node.get("children") or []
    limit = _int_arg(request.GET.get("limit"), EDITOR_PAGE, 1, 1000)
    offset = _int_arg(request.GET.get("offset"), 0, 0, max(0, len(children)))
    around = request.GET.get("around")
    if around is not None:
        at = next((i for i, c in enumerate(children) if c["label"] == around), None)
        if at is not None:
            offset, limit = 0, (at // limit + 1) * limit
    source = _Source(request, h, draft.meta)
    counts = source.counts()
    records = drafts.record_counts(node, counts) if counts is not None else None
    page = children[offset:offset + limit]
    return JsonResponse({
        "node": _node_json(node, path, records[id(node)] if records else None),
        "offset": offset, "total": len(children),
        "children": [_node_json(c, path + [c["label"]], records[id(c)] if records else None) for c in page],
    })


@json_endpoint(("GET",))
def editor_search(request, pk: int, token: str):
    h, draft = _load_draft(request, pk, token)
    query = (request.GET.get("q") or "").strip()
    if not query:
        return JsonResponse({"query": "", "hits": [], "total": 0})
    if len(query) > SEARCH_MAX_CHARS:
        return json_error(f"The search text has {len(query):,} characters; search for at most "
                          f"{SEARCH_MAX_CHARS}.")
    hits, total = drafts.search(draft.tree, query, SEARCH_HITS)
    return JsonResponse({"query": query, "hits": hits, "total": total})


@json_endpoint(("GET",))
def editor_checks(request, pk: int, token: str):
    h, draft = _load_draft(request, pk, token)
    return JsonResponse({"checks": _checks(request, h, draft), "state": _session_state(draft)})


OPERATIONS = ("rename", "add", "delete", "move", "pad", "undo", "redo")


@json_endpoint(("POST",))
def editor_op(request, pk: int, token: str):
    """Apply one edit to the session's tree through HierarchyTree; a refused edit is a 400 with its reason.

    Body: {"op": "rename", "path": [...], "label": "..."} | {"op": "add", "path": [...], "label": "..."}
    | {"op": "delete", "path": [...], "children": "move"|"delete"} | {"op": "move", "path": [...],
    "to": [...]} | {"op": "pad"} | {"op": "undo"} | {"op": "redo"}.
    The answer names the node's new path (``moved``: {"from", "to"}) so the page can keep it open."""
    h, draft = _load_draft(request, pk, token)
    try:
        data = _json_body(request)
        op = data.get("op")
        if op not in OPERATIONS:
            return json_error(f"Unknown operation {op!r}; use one of {', '.join(OPERATIONS)}.")
        moved = None
        if op in ("undo", "redo"):
            done = draft.undo() if op == "undo" else draft.redo()
            if not done:
                return json_error(f"Nothing to {op}.")
            tree = None
        else:
            tree = HierarchyTree.from_dict(draft.tree, h.name)
            path = _path_arg(data.get("path"))
            if op == "rename":
                label = _label_arg(data.get("label"))
                tree.rename(path, label)
                if path:
                    moved = {"from": path, "to": path[:-1] + [label]}
            elif op == "add":
                label = _label_arg(data.get("label"))
                nodes, depth = _node_count(draft.tree)
                most = _editor_limit("HIERARCHY_EDITOR_MAX_NODES", EDITOR_MAX_NODES)
                if nodes >= most:
                    raise BadRequest(f"The tree has {nodes:,} nodes, the editor's limit; delete some before "
                                     f"adding more.")
                from .forms import size_limits

                levels = size_limits()["max_levels"]
                if len(path) + 2 > levels:  # the new node's level count: root, the path, the node
                    raise BadRequest(f"A node under {' > '.join(path)} would make {len(path) + 2} levels, more "
                                     f"than the limit of {levels}.")
                tree.add_child(path, label)
            elif op == "delete":
                tree.delete(path, children=str(data.get("children") or "move"))
            elif op == "move":
                to = _path_arg(data.get("to"), "to")
                _check_move_depth(draft.tree, path, to)
                tree.move(path, to)
                if path:
                    moved = {"from": path, "to": to + [path[-1]]}
            elif op == "pad":
                lo, hi = tree.depth_range()
                if lo == hi:
                    return json_error("Every leaf is already at the same depth: nothing to pad.")
                tree = HierarchyTree.from_hierarchy(tree.to_hierarchy(pad=True, source=h.name))
            draft.push(_tree_to_draft(tree))
    except (HierarchyError, BadRequest) as exc:
        return json_error(str(exc))
    return JsonResponse({"ok": True, "op": op, "moved": moved, "root": draft.tree["label"],
                         "state": _session_state(draft), "checks": _checks(request, h, draft, tree)})


@json_endpoint(("GET",))
def editor_sunburst(request, pk: int, token: str):
    """Plotly sunburst data of the top levels, each node sized by the column's records under it, by the item
    occurrences under it for an item hierarchy opened on set-valued data (by leaves when the hierarchy is not
    bound to a column)."""
    h, draft = _load_draft(request, pk, token)
    depth = _int_arg(request.GET.get("depth"), SUNBURST_DEPTH, 1, 8)
    tree = draft.tree
    source = _Source(request, h, draft.meta)
    counts = source.counts()
    if counts is not None:
        sizes = drafts.record_counts(tree, counts)
        measure = source.measure
    else:
        sizes = drafts.record_counts(tree, _LeafOnes())
        measure = "leaves"
    ids, labels, parents, values = [], [], [], []
    queue = [(tree, [], "", 0)]
    truncated = False
    while queue:
        node, path, parent_id, level = queue.pop(0)
        node_id = json.dumps(path, ensure_ascii=False)
        ids.append(node_id)
        labels.append(str(node["label"]))
        parents.append(parent_id)
        values.append(sizes[id(node)])
        if level < depth:
            for c in node.get("children") or ():
                if len(ids) + len(queue) >= SUNBURST_MAX_NODES:
                    truncated = True
                    break
                queue.append((c, path + [c["label"]], node_id, level + 1))
    # slices show at most SUNBURST_LABEL_CHARS characters ("…" marks a cut); the hover shows the whole label
    short = [label if len(label) <= SUNBURST_LABEL_CHARS else label[:SUNBURST_LABEL_CHARS - 1] + "…"
             for label in labels]
    return JsonResponse({"ids": ids, "labels": labels, "short": short, "short_chars": SUNBURST_LABEL_CHARS, "parents": parents, "values": values,
                         "measure": measure, "depth": depth, "truncated": truncated})


class _LeafOnes(dict):
    """Counts of 1 for every leaf: sizes by number of leaves."""

    def get(self, key, default=None):
        return 1


@json_endpoint(("POST",))
def editor_save(request, pk: int, token: str):
    """Write the session's tree back to the hierarchy (one row per leaf). Body {"pad": bool}: unequal
    leaf depth is refused (400 with ``can_pad``) unless pad is true."""
    h, draft = _load_draft(request, pk, token)
    try:
        data = _json_body(request)
        tree = HierarchyTree.from_dict(draft.tree, h.name)
        lo, hi = tree.depth_range()
        try:
            parsed = tree.to_hierarchy(pad=bool(data.get("pad")), source=h.name)
        except HierarchyError as exc:
            return json_error(str(exc), can_pad=lo != hi)
        text = parsed.to_csv(";")
    except (HierarchyError, BadRequest) as exc:
        return json_error(str(exc))
    h = Hierarchy.objects.get(pk=h.pk)
    h.content, h.delimiter, h.on_conflict = text, ";", "error"
    h.leaves, h.height = len(parsed.leaves), parsed.height
    h.save(update_fields=["content", "delimiter", "on_conflict", "leaves", "height"])
    if lo != hi:  # padded: the session goes on with the padded tree
        draft.push(_tree_to_draft(HierarchyTree.from_hierarchy(parsed)))
    draft.mark_saved()
    return JsonResponse({"ok": True, "leaves": h.leaves, "height": h.height, "padded": lo != hi,
                         "message": f"Saved {h.name!r}: {h.leaves} leaves, height {h.height}.",
                         "state": _session_state(draft), "checks": _checks(request, h, draft)})


# ---- automatic builders with live preview --------------------------------------------------------
PREVIEW_CHILDREN = 12  # children shown per node in the preview tree
PREVIEW_DEPTH = 2  # levels below the root shown in the preview tree


def max_builder_intervals() -> int:
    """The cap on the intervals one builder may lay (setting HIERARCHY_BUILDER_MAX_INTERVALS)."""
    from anonymizer_app.engine.model.builders import MAX_INTERVALS

    return int(getattr(settings, "HIERARCHY_BUILDER_MAX_INTERVALS", MAX_INTERVALS))


def _builders() -> dict:
    from anonymizer_app.engine.model.builders import BUILDERS

    return BUILDERS


def _builder_for(request, key: str | None, column: Column, values: pd.Series | None = None):
    builders = _builders()
    if key in builders:
        return key, builders[key]
    if key:
        raise Http404(f"no builder {key!r}")
    # The first choice is the builder of the column's default hierarchy (engine.defaults), so the first
    # preview shows the default hierarchy the column page shows.
    if values is not None:
        guess = default_builder(values, column.type)[0]
    else:
        guess = {"integer": "intervals", "decimal": "intervals", "date": "dates"}.get(column.type, "grouping")
    key = guess if guess in builders else next(iter(builders))
    return key, builders[key]


def _trim_tree(node: dict) -> dict:
    children = node.get("children") or []
    return {"label": node["label"], "leaves": node.get("leaves"),
            "children": [_trim_tree(c) for c in children[:PREVIEW_CHILDREN]],
            "more": max(0, len(children) - PREVIEW_CHILDREN)}


def builder_preview_data(parsed, values: pd.Series) -> dict:
    """What the builder page shows of a built hierarchy: levels, top of the tree, frequent values."""
    levels = [{"level": lv, "count": len(parsed.labels[lv]),
               "sample": [str(x) for x in parsed.labels[lv][:LABEL_SAMPLE]]}
              for lv in range(parsed.level_count)]
    index = parsed.leaf_index
    frequent = []
    for value, n in values.value_counts(sort=True).head(VALUE_SAMPLE).items():
        leaf = index.get(str(value))
        frequent.append({"value": str(value), "count": int(n), "labels": None if leaf is None else [
            str(parsed.labels[lv][parsed.maps[lv][leaf]]) for lv in range(parsed.level_count)]})
    # the tree of the nodes the library keeps: the missing value's leaf (an empty label) is added by a run
    tree = HierarchyTree.from_hierarchy(without_missing(parsed)).to_dict(max_depth=PREVIEW_DEPTH)
    return {"error": "", "leaves": int(len(parsed.leaves)), "height": parsed.height, "levels": levels,
            "values": frequent, "tree": _trim_tree(tree)}


def _build(builder_key: str, builder, form: BuilderForm, name: str, values: pd.Series):
    """(hierarchy, error message) for a bound builder form; a column the builder cannot use is named first."""
    refused = builder.refusal(name, values)
    if refused:
        return None, refused
    if not form.is_valid():
        errors = [f"{form.fields[k].label if k in form.fields else 'Options'}: {' '.join(v)}"
                  for k, v in form.errors.items()]
        return None, "; ".join(errors)
    try:
        return builder.run(name, values, form.cleaned_data["options"], max_builder_intervals()), ""
    except (HierarchyError, InputError) as exc:
        return None, str(exc)


def _builder_form(builder, column: Column, values: pd.Series, data=None) -> BuilderForm:
    """The builder's form with defaults from the data; none when the builder cannot use the column."""
    defaults = {} if builder.refusal(column.name, values) else builder.defaults(values)
    return BuilderForm(data, builder=builder, defaults=defaults)


def _builder_context(request, dataset, column, key, builder, form, values, error=""):
    base = reverse("hierarchies:build", args=[dataset.pk, column.pk])
    return {
        "dataset": dataset, "column": column, "builder_key": key, "builder": builder, "form": form,
        # every builder with why it cannot use this column ("" when it can): the page greys those out
        "builders": [(k, b, b.refusal(column.name, values) or "") for k, b in _builders().items()], "error": error,
        "preview_url": reverse("hierarchies:build_preview", args=[dataset.pk, column.pk]),
        "build_url": base, "name": request.POST.get("hierarchy_name") or fit_name(
            f"{column.name} ({dataset.name}) {builder.label.lower()}"),
        "distinct_count": int(values.nunique()), "n_rows": int(len(values)),
    }


@login_required
@require_http_methods(["GET", "POST"])
def build(request, dataset_id: int, column_id: int):
    """Pick a builder, set its options (defaults from the data), preview live, save to the library."""
    dataset, col = _column_for(request, dataset_id, column_id)
    values = _column_values(dataset, col.name)
    key, builder = _builder_for(request, request.POST.get("builder") or request.GET.get("builder"), col, values)
    if request.method == "GET":
        form = _builder_form(builder, col, values)
        return render(request, "hierarchy_editor/build.html",
                      _builder_context(request, dataset, col, key, builder, form, values,
                                       builder.refusal(col.name, values) or ""))
    form = _builder_form(builder, col, values, request.POST)
    name = (request.POST.get("hierarchy_name") or "").strip() or _default_name(dataset, col)
    if len(name) > NAME_MAX:
        parsed, error = None, f"Name in your library: at most {NAME_MAX} characters (it has {len(name)})"
    else:
        parsed, error = _build(key, builder, form, col.name, values)
    if parsed is None:
        return render(request, "hierarchy_editor/build.html",
                      _builder_context(request, dataset, col, key, builder, form, values, error), status=400)
    parsed = without_missing(parsed)  # a file's leaf cannot be empty: a run adds the missing leaf again
    h = Hierarchy(owner=request.user, name=name, source_name=f"{builder.label} builder", source_format="builder",
                  content=parsed.to_csv(";"), delimiter=";", leaves=len(parsed.leaves), height=parsed.height)
    h.save()
    col.hierarchy = h
    col.save(update_fields=["hierarchy"])
    messages.success(request, f"Hierarchy {h.name!r} ({h.leaves} leaves, height {h.height}) built and now used "
                              f"for column {col.name!r}.")
    return redirect(_column_url(col))


@json_endpoint(("POST",))
def build_preview(request, dataset_id: int, column_id: int):
    """The live preview: the builder form posted as form data, the built hierarchy's summary as JSON."""
    dataset, col = _column_for(request, dataset_id, column_id)
    values = _column_values(dataset, col.name)
    key, builder = _builder_for(request, request.POST.get("builder"), col)
    form = _builder_form(builder, col, values, request.POST)
    parsed, error = _build(key, builder, form, col.name, values)
    if parsed is None:
        return JsonResponse({"builder": key, "error": error,
                             "field_errors": {k: list(v) for k, v in form.errors.items()}}, status=400)
    return JsonResponse({"builder": key, **builder_preview_data(parsed, values)})
