"""The visual tree editor's pages: starting an editing session on a copy of a hierarchy (hierarchy_editor.drafts)
and the editor page; and what its JSON endpoints (editor_api) share: the session of a request, the data that
checks and sizes the tree (a column's records, or the item occurrences of set-valued data), the checks."""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from anonymizer_app.engine import HierarchyError
from anonymizer_app.engine.model.tree import HierarchyTree
from anonymizer_app.models import Column, Dataset

from .. import drafts
from ..models import Hierarchy
from ..services import content_digest, item_counts, parsed_hierarchy, value_counts
from .common import LISTED

PAGE = 200  # children sent per request
MAX_NODES = 200_000  # nodes of an edited tree (a city file has ~30,000); settings HIERARCHY_EDITOR_MAX_NODES
ID_RE = re.compile(r"[0-9]{1,18}")  # an object id in a query parameter (?column=abc: none, not a 500)
DEFAULT_SOURCE = "default hierarchy of "  # how the source of an edited default hierarchy starts
ENDPOINTS = ("nodes", "search", "op", "checks", "sunburst", "save")


def editor_max_nodes() -> int:
    return int(getattr(settings, "HIERARCHY_EDITOR_MAX_NODES", MAX_NODES))


def tree_to_draft(tree: HierarchyTree) -> dict:
    """The minimal nested dict of a tree ({"label", "children"}), the stored form of a draft state."""
    def walk(node) -> dict:
        return {"label": node.label, "children": [walk(c) for c in node.children]}
    return walk(tree.root)


def _editor_column(user, h: Hierarchy, column_id) -> Column | None:
    """The dataset column whose values the checks use: the one asked for, else the first bound one."""
    columns = Column.objects.select_related("dataset").filter(dataset__owner=user)
    if ID_RE.fullmatch(str(column_id or "")):
        col = columns.filter(pk=int(column_id)).first()
        if col is not None:
            return col
    return columns.filter(hierarchy=h).order_by("dataset__name", "position").first()


def _editor_items(user, dataset_id) -> Dataset | None:
    """The owner's transaction dataset asked for by ?items=<id> (its items size an item hierarchy)."""
    if not ID_RE.fullmatch(str(dataset_id or "")):
        return None
    return Dataset.objects.filter(pk=int(dataset_id), owner=user, layout=Dataset.TRANSACTIONS).first()


class Source:
    """The data an editing session checks and sizes the tree with: a table column's values (records), or the
    items of a set-valued column or a transaction dataset (item occurrences), or nothing."""

    def __init__(self, user, h: Hierarchy, meta: dict):
        self.items_dataset = _editor_items(user, meta.get("items"))
        self.column = None if self.items_dataset else _editor_column(user, h, meta.get("column"))

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
            return item_counts(self.items_dataset)
        if self.column is not None and self.column.item_delimiter:
            return item_counts(self.column.dataset, self.column)
        return value_counts(self.column)


def load_draft(request, pk: int, token: str) -> tuple[Hierarchy, drafts.Draft]:
    """The user's hierarchy and editing session: another user's hierarchy is a 404 (Http404), an unknown or
    expired session DraftMissing."""
    h = get_object_or_404(Hierarchy.objects.defer("content"), pk=pk, owner=request.user)
    return h, drafts.Draft.load(request.user.pk, h.pk, token)


def checks(request, h: Hierarchy, draft: drafts.Draft, tree: HierarchyTree | None = None) -> dict:
    """What the editor shows under the tree: values of the data it does not cover, empty nodes, unequal leaf
    depth, a label on two nodes of one level."""
    source = Source(request.user, h, draft.meta)
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


def session_state(draft: drafts.Draft) -> dict:
    return {"can_undo": draft.can_undo, "can_redo": draft.can_redo, "edits": draft.edits}


# ---- pages -----------------------------------------------------------------------------------------
def _open_session(request, h: Hierarchy) -> drafts.Draft:
    """The user's untouched session on the same text and data, else a new one (DraftTooLarge, HierarchyError)."""
    items = _editor_items(request.user, request.GET.get("items"))  # a transaction dataset's items
    column = None if items else _editor_column(request.user, h, request.GET.get("column"))
    meta = {"column": None, "items": items.pk} if items else {"column": column.pk if column else None}
    digest = content_digest(h)
    draft = drafts.Draft.find_untouched(request.user.pk, h.pk, digest, meta)
    if draft is None:
        tree = HierarchyTree.from_hierarchy(parsed_hierarchy(h))
        draft = drafts.Draft.create(request.user.pk, h.pk, tree_to_draft(tree), meta, digest)
    return draft


@login_required
@require_GET
def edit(request, pk: int):
    """Start an editing session on a copy of the hierarchy and open the editor on it; written only on change:
    the user's untouched session on the same text and column is opened again instead of another copy."""
    h = get_object_or_404(Hierarchy, pk=pk, owner=request.user)
    try:
        draft = _open_session(request, h)
    except (HierarchyError, drafts.DraftTooLarge) as exc:
        messages.error(request, f"This hierarchy cannot be edited: {exc}")
        return redirect("hierarchies:detail", pk=h.pk)
    return redirect("hierarchies:editor", pk=h.pk, token=draft.token)


def _config(h: Hierarchy, draft: drafts.Draft, token: str, source: Source) -> dict:
    """The page script's settings (json_script): its URLs, the page size, the session's state."""
    base = reverse("hierarchies:editor", args=[h.pk, token])
    urls = {name: f"{base}{name}/" for name in ENDPOINTS}
    urls["detail"] = reverse("hierarchies:detail", args=[h.pk])
    return {"name": h.name, "root": draft.tree["label"], "page": PAGE, "urls": urls,
            "state": session_state(draft), "measure": source.measure}


@login_required
@require_GET
def editor(request, pk: int, token: str):
    h = get_object_or_404(Hierarchy.objects.defer("content"), pk=pk, owner=request.user)
    try:
        draft = drafts.Draft.load(request.user.pk, h.pk, token)
    except drafts.DraftMissing:
        messages.warning(request, "That editing session has expired; a new one was started.")
        return redirect("hierarchies:edit", pk=h.pk)
    source = Source(request.user, h, draft.meta)
    column = source.column
    replaces_default = (column is not None and column.hierarchy_id == h.pk
                        and h.source_name.startswith(DEFAULT_SOURCE))
    return render(request, "hierarchy_editor/editor.html", {
        "h": h, "token": token, "source": source, "config": _config(h, draft, token, source),
        "replaces_default": column if replaces_default else None,
        "columns": h.columns.select_related("dataset").order_by("dataset__name", "position"),
    })
