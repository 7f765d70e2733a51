"""What the API's concerns share: owner-scoped lookups (another account's object is a 404, as on the web),
error answers, and calling a web view for a download so the API takes the very same path."""

from __future__ import annotations

import logging

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils import timezone
from rest_framework import status
from rest_framework.response import Response

from hierarchy_editor.models import Hierarchy

from ..models import Dataset, Job
from ..services import jobs as job_service

log = logging.getLogger(__name__)


ID_RANGE = range(1, 2**63)  # what a database key can be: anything else names no object (and runs no query)


def object_key(value) -> int:
    if int(value) not in ID_RANGE:
        raise Http404("no such object")
    return int(value)


def owned_dataset(request, dataset_id: int) -> Dataset:
    return get_object_or_404(Dataset, pk=object_key(dataset_id), owner=request.user)


def owned_job(request, job_id) -> Job:
    return get_object_or_404(Job.objects.select_related("dataset"), pk=job_id, owner=request.user)


def owned_hierarchy(request, hierarchy_id: int):
    return get_object_or_404(Hierarchy, pk=object_key(hierarchy_id), owner=request.user)


def refused(message: str, code: int = status.HTTP_400_BAD_REQUEST, **extra) -> Response:
    return Response({"detail": message, **extra}, status=code)


def queue(job: Job) -> Job:
    """Queue the job as the web run form does (views.common.queue_job); a broker that refuses it ends the job
    as failed with the reason, so it never waits forever."""
    try:
        job_service.submit_job(job)
    except Exception as exc:
        log.exception("could not queue job %s", job.pk)
        Job.objects.filter(pk=job.pk, status=Job.QUEUED).update(
            status=Job.FAILED, finished=timezone.now(), message=f"could not queue the job: {exc}")
    job.refresh_from_db()
    return job
