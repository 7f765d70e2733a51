"""The library of a user's hierarchies: the list, one hierarchy's page and its deletion."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from anonymizer_app.engine import HierarchyError
from anonymizer_app.models import Column
from anonymizer_app.services import erasure
from anonymizer_app.views.erasure import confirm_page

from ..forms import HierarchyUploadForm
from ..models import Hierarchy
from ..services import parsed_hierarchy
from .common import LEAF_ROWS, conflicts, leaf_labels, levels


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
@require_GET
def detail(request, pk: int):
    h = get_object_or_404(Hierarchy, pk=pk, owner=request.user)
    ctx: dict = {"h": h, "error": "", "columns": h.columns.select_related("dataset").order_by(
        "dataset__name", "position")}
    try:
        parsed = parsed_hierarchy(h)
    except HierarchyError as exc:
        ctx["error"] = str(exc)
        return render(request, "hierarchy_editor/detail.html", ctx)
    shown = min(LEAF_ROWS, len(parsed.leaves))
    ctx.update(parsed=parsed, levels=levels(parsed), level_numbers=list(range(parsed.level_count)),
               rows=[leaf_labels(parsed, i) for i in range(shown)], rows_more=len(parsed.leaves) - shown,
               notes=parsed.notes, conflicts=conflicts(parsed.conflicts))
    return render(request, "hierarchy_editor/detail.html", ctx)


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
