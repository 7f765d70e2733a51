"""The automatic builders of a column's hierarchy (hierarchy_editor.building): the builder page, with its options'
defaults from the data, and its live preview (JSON) of the hierarchy the options give."""

from __future__ import annotations

import pandas as pd
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from anonymizer_app.engine import Hierarchy as ParsedHierarchy
from anonymizer_app.engine.model.builders import BUILDERS
from anonymizer_app.engine.model.hierarchy import without_missing
from anonymizer_app.engine.model.tree import HierarchyTree

from ..building import build as run_builder
from ..building import builder_for, builder_form
from ..models import NAME_MAX, Hierarchy, fit_name
from ..services import column_values
from .common import LABEL_SAMPLE, column_for, column_url, default_name, frequent_values
from .jsonapi import JSONEndpoint

PREVIEW_CHILDREN = 12  # children shown per node in the preview tree
PREVIEW_DEPTH = 2  # levels below the root shown in the preview tree


def _trim_tree(node: dict) -> dict:
    children = node.get("children") or []
    return {"label": node["label"], "leaves": node.get("leaves"),
            "children": [_trim_tree(c) for c in children[:PREVIEW_CHILDREN]],
            "more": max(0, len(children) - PREVIEW_CHILDREN)}


def builder_preview_data(parsed: ParsedHierarchy, values: pd.Series) -> dict:
    """What the builder page shows of a built hierarchy: levels, top of the tree, frequent values."""
    levels = [{"level": lv, "count": len(parsed.labels[lv]),
               "sample": [str(x) for x in parsed.labels[lv][:LABEL_SAMPLE]]}
              for lv in range(parsed.level_count)]
    # the tree of the nodes the library keeps: the missing value's leaf (an empty label) is added by a run
    tree = HierarchyTree.from_hierarchy(without_missing(parsed)).to_dict(max_depth=PREVIEW_DEPTH)
    return {"error": "", "leaves": int(len(parsed.leaves)), "height": parsed.height, "levels": levels,
            "values": frequent_values(parsed, values.value_counts(sort=True)), "tree": _trim_tree(tree)}


def _builder_context(request, dataset, column, key, builder, form, values, error=""):
    return {
        "dataset": dataset, "column": column, "builder_key": key, "builder": builder, "form": form,
        # every builder with why it cannot use this column ("" when it can): the page greys those out
        "builders": [(k, b, b.refusal(column.name, values) or "") for k, b in BUILDERS.items()], "error": error,
        "preview_url": reverse("hierarchies:build_preview", args=[dataset.pk, column.pk]),
        "build_url": reverse("hierarchies:build", args=[dataset.pk, column.pk]),
        "name": request.POST.get("hierarchy_name") or fit_name(
            f"{column.name} ({dataset.name}) {builder.label.lower()}"),
        "distinct_count": int(values.nunique()), "n_rows": int(len(values)),
    }


def _built(request, dataset, col, builder, form, values):
    """(the built hierarchy without its missing leaf, "", name), or (None, why, name), for the posted name and
    options."""
    name = (request.POST.get("hierarchy_name") or "").strip() or default_name(dataset, col)
    if len(name) > NAME_MAX:
        return None, f"Name in your library: at most {NAME_MAX} characters (it has {len(name)})", name
    parsed, error = run_builder(builder, form, col.name, values)
    # a file's leaf cannot be empty: a run adds the missing leaf again
    return (without_missing(parsed) if parsed is not None else None), error, name


@login_required
@require_http_methods(["GET", "POST"])
def build(request, dataset_id: int, column_id: int):
    """Pick a builder, set its options (defaults from the data), preview live, save to the library."""
    dataset, col = column_for(request, dataset_id, column_id)
    values = column_values(dataset, col.name)
    key, builder = builder_for(request.POST.get("builder") or request.GET.get("builder"), col, values)
    if request.method == "GET":
        return render(request, "hierarchy_editor/build.html", _builder_context(
            request, dataset, col, key, builder, builder_form(builder, col, values), values,
            builder.refusal(col.name, values) or ""))
    form = builder_form(builder, col, values, request.POST)
    parsed, error, name = _built(request, dataset, col, builder, form, values)
    if parsed is None:
        return render(request, "hierarchy_editor/build.html",
                      _builder_context(request, dataset, col, key, builder, form, values, error), status=400)
    h = Hierarchy(owner=request.user, name=name, source_name=f"{builder.label} builder", source_format="builder",
                  content=parsed.to_csv(";"), delimiter=";", leaves=len(parsed.leaves), height=parsed.height)
    h.save()
    col.hierarchy = h
    col.save(update_fields=["hierarchy"])
    messages.success(request, f"Hierarchy {h.name!r} ({h.leaves} leaves, height {h.height}) built and now used "
                              f"for column {col.name!r}.")
    return redirect(column_url(col))


class BuildPreview(JSONEndpoint):
    """The live preview: the builder form posted as form data, the built hierarchy's summary as JSON."""

    parser_classes = [FormParser, MultiPartParser]

    def post(self, request, dataset_id: int, column_id: int):
        dataset, col = column_for(request, dataset_id, column_id)
        values = column_values(dataset, col.name)
        key, builder = builder_for(request.data.get("builder"), col)
        form = builder_form(builder, col, values, request.data)
        parsed, error = run_builder(builder, form, col.name, values)
        if parsed is None:
            return Response({"builder": key, "error": error,
                             "field_errors": {k: list(v) for k, v in form.errors.items()}}, status=400)
        return Response({"builder": key, **builder_preview_data(parsed, values)})
