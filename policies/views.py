"""Policy pages: the list (with import), one policy (versions, releases, export, delete), saving a result's
configuration as a policy, and applying a policy to a dataset (the schema differences shown first, then the
run queued as the run form queues it). Everything is the owner's: another account's policy, job or dataset is
a 404."""

from __future__ import annotations

from types import SimpleNamespace

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from anonymizer_app.models import Job
from anonymizer_app.services import rerun
from anonymizer_app.views.common import owned_dataset, owned_job, queue_job

from . import policy_file, services, synthesis_step
from .forms import ApplyForm, ImportForm, SaveForm
from .models import Policy, PolicyVersion
from .policy_file import EXTEND, PolicyError


def owned_policy(request, policy_id: int) -> Policy:
    return get_object_or_404(Policy, pk=policy_id, owner=request.user)


def summary(config: dict) -> dict:
    """What a version does, for the pages: the columns by role, the run's settings in words."""
    by_role: dict[str, list] = {}
    for c in config["columns"]:
        by_role.setdefault(c["role"], []).append(c)
    out = {
        "qi": by_role.get("quasi-identifying", []), "sensitive": by_role.get("sensitive", []),
        "insensitive": by_role.get("insensitive", []), "identifying": by_role.get("identifying", []),
        "identifiers": config.get("identifiers", []), "algorithm": None,
        "synthesis": synthesis_step.describe(config["synthesis"]) if "synthesis" in config else "",
    }
    if policy_file.anonymizes(config):  # a synthesis-only policy has no run settings
        out.update({
            "algorithm": config["algorithm"], "k": config["k"], "options": config["options"],
            "suppression_percent": float(f"{config['suppression_limit'] * 100:.10g}"),
            "models": rerun.models_text(config["models"]), "suppressed_rows": config["publishing"]["suppressed_rows"],
        })
    return out


@login_required
@require_GET
def index(request):
    policies = Policy.objects.filter(owner=request.user).prefetch_related("versions", "releases")
    return render(request, "policies/index.html", {"policies": policies, "form": ImportForm(owner=request.user)})


@login_required
@require_POST
def import_file(request):
    form = ImportForm(request.POST, request.FILES, owner=request.user)
    if form.is_valid():
        f = form.cleaned_data["file"]
        d = form.cleaned_data
        try:
            version = services.import_policy(request.user, f.read(), f.name, d["name"], d["k"], d["dataset"])
        except PolicyError as exc:
            form.add_error("file", str(exc))
        else:
            messages.success(request, f"Imported {version.policy.name!r} as version {version.number}.")
            return redirect("policies:detail", policy_id=version.policy.pk)
    policies = Policy.objects.filter(owner=request.user)
    return render(request, "policies/index.html", {"policies": policies, "form": form}, status=400)


@login_required
@require_GET
def detail(request, policy_id: int):
    policy = owned_policy(request, policy_id)
    versions = list(policy.versions.select_related("source_job").order_by("-number"))
    releases = policy.releases.select_related("version", "job", "job__dataset").order_by("-number")
    return render(request, "policies/detail.html", {
        "policy": policy, "versions": [(v, summary(v.config)) for v in versions], "releases": releases,
    })


@login_required
@require_GET
def export(request, policy_id: int, number: int):
    policy = owned_policy(request, policy_id)
    version = get_object_or_404(PolicyVersion, policy=policy, number=number)
    response = HttpResponse(services.export_text(version), content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(True, f"{policy.name}-v{number}.policy.json")
    return response


@login_required
@require_http_methods(["GET", "POST"])
def delete(request, policy_id: int):
    policy = owned_policy(request, policy_id)
    n_versions, n_releases = policy.versions.count(), policy.releases.count()
    if request.method == "POST":
        name = policy.name
        policy.delete()
        messages.success(request, f"Deleted the policy {name!r}.")
        return redirect("policies:index")
    preview = SimpleNamespace(
        summary=f"the policy {policy.name!r}, its {n_versions} version(s) and the record of its {n_releases} "
                f"release(s)",
        notes=["The jobs released under it and their results are kept (delete them on the jobs page)."])
    return render(request, "confirm_delete.html", {
        "title": f"Delete the policy {policy.name}", "what": f"the policy {policy.name!r}", "preview": preview,
        "action": reverse("policies:delete", args=[policy.pk]),
        "back_url": reverse("policies:detail", args=[policy.pk]), "button": "Delete the policy",
    })


def _save_form(job: Job, data=None, initial=None) -> SaveForm:
    form = SaveForm(data, initial=initial)
    if job.kind != Job.SYNTHESIS:  # only a synthetic set is kept beside a policy's anonymization
        del form.fields["alongside"]
    return form


@login_required
@require_http_methods(["GET", "POST"])
def save(request, job_id):
    job = owned_job(request, job_id)
    if job.status != Job.SUCCEEDED:
        messages.error(request, "A policy is saved from a finished run.")
        return redirect("anonymizer:job", job_id=job.pk)
    if request.method == "POST":
        form = _save_form(job, request.POST)
        if form.is_valid():
            try:
                version = services.save_from_job(job, form.cleaned_data["name"], form.cleaned_data["description"],
                                                 alongside=form.cleaned_data.get("alongside", False))
            except PolicyError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"Saved as {version.policy.name!r}, version {version.number}.")
                return redirect("policies:detail", policy_id=version.policy.pk)
    elif job.kind == Job.SYNTHESIS:
        form = _save_form(job, initial={"name": f"{job.dataset.name} synthetic {job.algorithm.split(':')[-1]}"})
    else:
        form = _save_form(job, initial={"name": f"{job.dataset.name} {job.algorithm} k={job.k}"})
    return render(request, "policies/save.html", {"job": job, "form": form}, status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
def apply(request, dataset_id: int):
    """GET ?version=ID: the dataset checked against that version (differences listed); POST: the run."""
    dataset = owned_dataset(request, dataset_id)
    data = request.POST if request.method == "POST" else (request.GET if "version" in request.GET else None)
    form = ApplyForm(data, owner=request.user)
    report = chosen = None
    status = 200
    if data is not None and form.is_valid():
        version = form.cleaned_data["version"]
        if request.method == "POST":
            try:
                made = services.apply_jobs(dataset, version, form.cleaned_data["on_new_values"])
            except PolicyError as exc:
                form.add_error(None, str(exc))
                status = 400
            else:
                for job in made:  # the run and, beside it or alone, the synthesis
                    queue_job(request, job)
                return redirect("anonymizer:job", job_id=made[0].pk)
        chosen = summary(version.config)
        try:
            report = services.schema_report(dataset, version.config)
        except PolicyError as exc:
            form.add_error(None, str(exc))
            status = 400
    elif data is not None:
        status = 400
    return render(request, "policies/apply.html", {
        "dataset": dataset, "tab": "run", "form": form, "report": report, "extend": EXTEND, "chosen": chosen,
        "has_policies": form.versions.exists(),
    }, status=status)
