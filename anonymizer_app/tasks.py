"""Celery tasks: thin wrappers that hand a job to services.jobs.run_job."""

from celery import shared_task

from . import celery  # noqa: F401  (the app, loaded before the task so that @shared_task binds to it)
from .models import Job
from .services.jobs import run_job


@shared_task(name="anonymizer.run_job")
def run_job_task(job_id: str) -> str:
    try:
        return run_job(Job.objects.get(pk=job_id)).status
    except Job.DoesNotExist:  # deleted by its owner before or while it ran (services.erasure): nothing to store
        return "deleted"
