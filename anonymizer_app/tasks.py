"""Celery tasks: thin wrappers that hand a job to services.jobs.run_job."""

import logging

from celery import shared_task
from celery.worker.request import Request

from . import celery  # the app, loaded before the task so that @shared_task binds to it
from .models import Job, SourceImport
from .services import source_imports
from .services.jobs import run_job, stop_for_time_limit


class JobRequest(Request):
    """A job's request in the worker's main process. When the hard time limit kills the process running the
    job (it did not stop at its soft limit: stuck in C code, or the exception was swallowed), nothing in that
    process can settle the job: this does, failed with the limit named and its partial outputs discarded
    (services.jobs.stop_for_time_limit). Celery acknowledges the message itself, so it is not delivered again."""

    def on_timeout(self, soft: bool, timeout: float) -> None:
        super().on_timeout(soft, timeout)
        if soft:
            return  # the task's own process stops the job (services.jobs.run_job)
        from django.db import connection

        with celery.FORK_GUARD:  # a pool thread of the main process: no fork meanwhile (celery.py)
            try:
                stop_for_time_limit(self.args[0], hard=True)
            except Exception:  # the worker must survive; the sweep fails the job later (services.jobs._over_time_limit)
                logging.getLogger(__name__).exception("settling job %s after its hard time limit failed", self.args)
            finally:
                connection.close()  # this runs in a thread of the pool's, not in a task: no one else closes it


@shared_task(name="anonymizer.run_job", Request=JobRequest)
def run_job_task(job_id: str) -> str:
    try:
        return run_job(Job.objects.get(pk=job_id)).status
    except Job.DoesNotExist:  # deleted by its owner before or while it ran (services.erasure): nothing to store
        return "deleted"


class SourceImportRequest(Request):
    """An import's request in the worker's main process: when the hard time limit kills the process reading,
    this ends the import failed with the limit named and its staged file removed
    (services.source_imports.stop_for_time_limit)."""

    def on_timeout(self, soft: bool, timeout: float) -> None:
        super().on_timeout(soft, timeout)
        if soft:
            return  # the task's own process stops the import (services.source_imports.run)
        from django.db import connection

        with celery.FORK_GUARD:  # a pool thread of the main process: no fork meanwhile (celery.py)
            try:
                source_imports.stop_for_time_limit(self.args[0], hard=True)
            except Exception:  # the worker must survive; the sweep ends the import later
                logging.getLogger(__name__).exception("settling import %s after its hard time limit failed", self.args)
            finally:
                connection.close()


@shared_task(name="anonymizer.run_source_import", Request=SourceImportRequest)
def run_source_import_task(import_id: str) -> str:
    try:
        return source_imports.run(SourceImport.objects.get(pk=import_id)).status
    except SourceImport.DoesNotExist:  # its owner was erased meanwhile: nothing to store
        return "deleted"
