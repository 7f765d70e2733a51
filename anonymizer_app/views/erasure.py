"""Deleting a dataset or a job (a run, a comparison, an experiment, a lattice evaluation): GET shows what will
be removed and asks for confirmation, POST (CSRF-checked) removes it with every file behind it. Owner-scoped:
another user's object is a 404."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from ..services import erasure
from .common import job_label, owned_dataset, owned_job


def done_message(what: str, done: erasure.Erasure) -> str:
    """e.g. "Deleted dataset 'people': 1 dataset, 2 jobs, 1 result and 3 files; <note>."."""
    return "; ".join([f"Deleted {what}: {done.summary()}", *done.notes]) + "."


def confirm_page(request, *, title: str, what: str, preview: erasure.Erasure, action: str, back_url: str,
                 form=None, button: str = "Delete", status: int = 200):
    """The confirmation page shared by every deletion (templates/confirm_delete.html)."""
    return render(request, "confirm_delete.html", {
        "title": title, "what": what, "preview": preview, "action": action, "back_url": back_url,
        "form": form, "button": button,
    }, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def delete_dataset(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    what = f"dataset {ds.name!r}"
    if request.method == "POST":
        messages.success(request, done_message(what, erasure.erase_dataset(ds)))
        return redirect("anonymizer:index")
    return confirm_page(request, title=f"Delete the dataset {ds.name}?", what=what,
                        preview=erasure.erase_dataset(ds, dry_run=True),
                        action=reverse("anonymizer:delete_dataset", args=[ds.pk]),
                        back_url=reverse("anonymizer:dataset", args=[ds.pk]))


@login_required
@require_http_methods(["GET", "POST"])
def delete_job(request, job_id):
    j = owned_job(request, job_id)
    what = f"{job_label(j)}, k={j.k} on {j.dataset.name}"
    if request.method == "POST":
        messages.success(request, done_message(what, erasure.erase_job(j)))
        return redirect("anonymizer:jobs")
    return confirm_page(request, title=f"Delete the job {what}?", what=what,
                        preview=erasure.erase_job(j, dry_run=True),
                        action=reverse("anonymizer:delete_job", args=[j.pk]),
                        back_url=reverse("anonymizer:job", args=[j.pk]))
