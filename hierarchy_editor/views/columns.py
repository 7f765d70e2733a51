"""The hierarchy of a dataset column: its page (the default hierarchy built from the data, or the bound one, with
the values it does not cover) and the page's actions: upload a file for it, pick one from the library, go back
to the default, or edit the default as a tree."""

from __future__ import annotations

import csv
import io
import itertools

import pandas as pd
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from accounts.throttling import throttle
from anonymizer_app.engine import HierarchyError, Role, default_hierarchy
from anonymizer_app.engine.model.default_description import describe_default
from anonymizer_app.engine.model.defaults import default_builder
from anonymizer_app.engine.model.hierarchy import with_missing, without_missing
from anonymizer_app.engine.model.missing import MISSING
from anonymizer_app.engine.model.table import NUMERIC_TYPES
from anonymizer_app.models import Column, Dataset

from ..forms import HierarchyUploadForm, SelectHierarchyForm, label_of
from ..models import Hierarchy, fit_name
from ..services import column_values, parsed_hierarchy
from .common import LISTED, column_for, column_url, conflicts, default_name, frequent_values, levels
from .editor import editor_max_nodes
from .files import handle_upload

COVER_PROBE = 50  # distinct values looked for in a file's text before its leaves are read


# ---- the page ------------------------------------------------------------------------------------
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
    probe = list(itertools.islice(distinct, COVER_PROBE))
    covering = []
    for h in library.filter(leaves__gte=len(distinct)).order_by("name", "pk"):
        # Cheap test first (a few values somewhere in the text), then the full leaf set.
        if all(v in h.content for v in probe) and distinct <= _leaf_set(h):
            covering.append(h)
        else:
            others += 1
    covering.sort(key=lambda h: h.pk != current_id)  # the bound one first, the natural "keep this" choice
    return covering, others


def _column_hierarchy(column: Column, values: pd.Series, ctx: dict):
    """The hierarchy a run uses for the column (with the missing value's leaf when the data has one); the
    default's description goes to ``ctx``. Raises HierarchyError."""
    bound = column.hierarchy
    if bound:
        parsed = parsed_hierarchy(bound)
    else:
        parsed = default_hierarchy(column.name, values, column.type in NUMERIC_TYPES, column.type)
    if (values == MISSING).any():  # as a run does: missing cells get their own leaf, (null) up to the root
        parsed = with_missing(parsed)
    if not bound:  # the help says what was built: its builder, options and levels (never a fixed text)
        kind, options = default_builder(values, column.type)
        ctx["default_description"] = describe_default(parsed, options if kind == parsed.kind else None, values)
    return parsed


def _hierarchy_context(parsed, counts: pd.Series, distinct: set[str]) -> dict:
    missing = parsed.missing_values(counts.index)
    return dict(
        parsed=parsed, levels=levels(parsed), level_numbers=list(range(parsed.level_count)),
        sample=frequent_values(parsed, counts),
        missing=missing[:LISTED * 5], missing_count=len(missing), missing_more=max(0, len(missing) - LISTED * 5),
        missing_rows=int(counts[counts.index.isin(missing)].sum()) if missing else 0,
        notes=parsed.notes, conflicts=conflicts(parsed.conflicts, distinct),
    )


def _column_context(request, dataset: Dataset, column: Column, values: pd.Series | None = None) -> dict:
    if values is None:
        values = column_values(dataset, column.name)
    counts = values.value_counts(sort=True)
    distinct = {str(v) for v in counts.index}
    bound = column.hierarchy
    ctx: dict = {
        "dataset": dataset, "column": column, "bound": bound, "numeric": column.type in NUMERIC_TYPES,
        "is_qi": column.role == Role.QUASI_IDENTIFYING.value, "distinct_count": len(distinct),
        "n_rows": int(len(values)), "error": "", "parsed": None,
    }
    try:
        ctx.update(_hierarchy_context(_column_hierarchy(column, values, ctx), counts, distinct))
    except HierarchyError as exc:
        ctx["error"] = str(exc)
    ctx["library_choices"], ctx["library_others"] = _covering_hierarchies(request.user, distinct,
                                                                          bound.pk if bound else None)
    return ctx


def _render_column(request, dataset, column, upload_form=None, select_form=None, upload_error="",
                   pending=None, status=200, values=None):
    ctx = _column_context(request, dataset, column, values)
    ctx["upload_form"] = upload_form or HierarchyUploadForm(user=request.user,
                                                            default_name=default_name(dataset, column))
    if select_form is None:
        initial = {"hierarchy": column.hierarchy_id} if column.hierarchy_id else None
        select_form = SelectHierarchyForm(user=request.user, initial=initial)
    select_form.fields["hierarchy"].choices = [(h.pk, label_of(h)) for h in ctx["library_choices"]]
    ctx.update(select_form=select_form, upload_error=upload_error, pending=pending,
               upload_url=reverse("hierarchies:column_upload", args=[dataset.pk, column.pk]))
    return render(request, "hierarchy_editor/column.html", ctx, status=status)


@login_required
@require_GET
def column(request, dataset_id: int, column_id: int):
    dataset, col = column_for(request, dataset_id, column_id)
    return _render_column(request, dataset, col)


# ---- its actions ---------------------------------------------------------------------------------
def _bind(col: Column, h: Hierarchy | None) -> None:
    col.hierarchy = h
    col.save(update_fields=["hierarchy"])


@login_required
@require_POST
@throttle("upload")
def column_upload(request, dataset_id: int, column_id: int):
    dataset, col = column_for(request, dataset_id, column_id)
    form = HierarchyUploadForm(request.POST, request.FILES, user=request.user,
                               default_name=default_name(dataset, col))
    if not form.is_valid():
        return _render_column(request, dataset, col, upload_form=form, status=400)
    values = column_values(dataset, col.name)
    h, error, pending = handle_upload(request, form, {str(v) for v in pd.unique(values)})
    if h is None:
        return _render_column(request, dataset, col, upload_form=form, upload_error=error, pending=pending,
                              status=400, values=values)
    _bind(col, h)
    messages.success(request, f"Hierarchy {h.name!r} ({h.leaves} leaves, height {h.height}) is now used "
                              f"for column {col.name!r}.")
    missing = parsed_hierarchy(h).missing_values(values)
    if missing:
        messages.warning(request, f"{len(missing)} value(s) of column {col.name!r} are not covered by the "
                                  f"hierarchy: a run will fail until they are. They are listed below.")
    return redirect(column_url(col))


@login_required
@require_POST
def column_default(request, dataset_id: int, column_id: int):
    dataset, col = column_for(request, dataset_id, column_id)
    if col.hierarchy_id:
        _bind(col, None)
        messages.success(request, f"Column {col.name!r} now uses the default hierarchy built from its data.")
    return redirect(column_url(col))


@login_required
@require_POST
def column_select(request, dataset_id: int, column_id: int):
    dataset, col = column_for(request, dataset_id, column_id)
    values = column_values(dataset, col.name)
    form = SelectHierarchyForm(request.POST, user=request.user, values=values, column_name=col.name,
                               parse=parsed_hierarchy)
    if not form.is_valid():
        return _render_column(request, dataset, col, select_form=form, status=400, values=values)
    h = form.cleaned_data["hierarchy"]
    _bind(col, h)
    messages.success(request, f"Hierarchy {h.name!r} is now used for column {col.name!r}.")
    return redirect(column_url(col))


def _editable_default(col: Column, values: pd.Series):
    """(built default, its tree without the missing leaf), or (None, why it cannot be edited)."""
    try:
        built = default_hierarchy(col.name, values, col.type in NUMERIC_TYPES, col.type)
    except HierarchyError as exc:
        return None, f"The default hierarchy of column {col.name!r} cannot be built: {exc}"
    parsed = without_missing(built)  # a file's leaf cannot be empty: a run adds the missing leaf again
    if MISSING in parsed.leaf_index:
        return None, f"Column {col.name!r} has only missing cells: its default hierarchy has no value to edit."
    nodes, most = sum(len(labels) for labels in parsed.labels), editor_max_nodes()
    if nodes > most:  # refused before anything is written or bound
        return None, (f"The default hierarchy of column {col.name!r} has {nodes:,} nodes, more than the tree "
                      f"editor's limit of {most:,}; build a coarser one instead.")
    return (built, parsed), ""


@login_required
@require_POST
def column_edit_default(request, dataset_id: int, column_id: int):
    """"Edit the tree" of a column on its default hierarchy, in one click: the default is written to the library
    as an editable copy bound to the column (it replaces the default there; "Use default hierarchy" brings the
    default back) and the visual editor opens on it. A column already bound edits its own hierarchy."""
    dataset, col = column_for(request, dataset_id, column_id)
    if col.hierarchy_id:  # a second click, or another tab: edit what the column uses
        return redirect(f"{reverse('hierarchies:edit', args=[col.hierarchy_id])}?column={col.pk}")
    editable, refusal = _editable_default(col, column_values(dataset, col.name))
    if editable is None:
        messages.error(request, refusal)
        return redirect(column_url(col))
    built, parsed = editable
    h = Hierarchy(owner=request.user, name=fit_name(f"{col.name} ({dataset.name}) edited default"),
                  source_name=fit_name(built.source, 255), source_format="editor", content=parsed.to_csv(";"),
                  delimiter=";", leaves=len(parsed.leaves), height=parsed.height)
    h.save()
    _bind(col, h)
    messages.info(request, f"You are editing a copy of the default hierarchy of column {col.name!r}, saved in "
                           f"your library as {h.name!r}: it now replaces the default for this column. "
                           f"\u201cUse default hierarchy\u201d on the column's page brings the default back.")
    return redirect(f"{reverse('hierarchies:edit', args=[h.pk])}?column={col.pk}")
