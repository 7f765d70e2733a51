"""SUDA2 on a worker: above the risk pages' in-request limit the section "Risk with sampling weights (sdcMicro)"
offers a button that posts here and queues a job of kind "sdc-risk" (services.sdc_risk_jobs) of the dataset on the
key variables asked, or of a run's result before and after; the job's page shows its progress and cancels it, and
its result page is the risk page it came from, which then shows the stored figures. Owner-only: another user's
dataset or job is a 404."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from accounts.throttling import throttle

from ..engine import InputError
from ..models import Job
from ..services import datasets, sdc_risk_jobs
from .common import owned_dataset, owned_job, queue_job


def dataset_risk_url(dataset_id: int, keys: list[str]) -> str:
    """The dataset's risk page on these key variables (the page's defaults otherwise)."""
    query = urlencode([*(("qi", k) for k in keys), ("population", "none"), ("threshold", "0.2"),
                       ("combinations", "1")])
    return f"{reverse('anonymizer:risk', args=[dataset_id])}?{query}#sdc-risk"


@login_required
@require_POST
@throttle("run")
def dataset_suda_job(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    keys = request.POST.getlist("qi")
    try:
        job = sdc_risk_jobs.create_dataset_job(ds, keys)
    except InputError as exc:
        messages.error(request, str(exc))
        # the page again on the keys that are columns (an unknown one, maybe megabytes long, is only named in the
        # message: in the URL it made a redirect Django refuses past 2,048 characters, a bare 400)
        columns = set(datasets.dataset_columns(ds))
        return redirect(dataset_risk_url(ds.pk, [k for k in dict.fromkeys(keys) if k in columns][:50]))
    queue_job(request, job)
    return redirect("anonymizer:job", job_id=job.pk)


@login_required
@require_POST
@throttle("run")
def result_suda_job(request, job_id):
    source = owned_job(request, job_id)
    try:
        job = sdc_risk_jobs.create_result_job(source)
    except InputError as exc:
        raise Http404(str(exc)) from None
    queue_job(request, job)
    return redirect("anonymizer:job", job_id=job.pk)


@login_required
@require_GET
def sdc_risk_job_result(request, job_id):
    """A finished job's figures are shown on the risk page it was made from."""
    j = owned_job(request, job_id)
    if j.kind != Job.SDC_RISK:
        raise Http404("this job does not compute SUDA2")
    if j.status != Job.SUCCEEDED:
        return redirect("anonymizer:job", job_id=j.pk)
    spec = sdc_risk_jobs.spec_of(j)
    if spec.get("target") == sdc_risk_jobs.RESULT:
        return redirect(f"{reverse('anonymizer:result_risk', args=[spec['source_job']])}#sdc-risk")
    return redirect(dataset_risk_url(j.dataset_id, list(spec.get("keys") or [])))
