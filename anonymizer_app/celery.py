"""The Celery application. Workers: `celery -A anonymizer_app worker` (see `make worker`); Celery finds
this module by itself (the `celery` submodule of the package named by -A).

Only what uses Celery loads it: the tasks module (tasks.py imports this app before its @shared_task, so
that the task binds to it and not to a default app; the web app imports tasks.py when it queues a job),
the worker (-A) and tests that configure it. Not Django's setup (apps.py): a manage.py command such as
anonymize never queues a job and does not pay for importing Celery and kombu. Not the package's
__init__ either: importing anonymizer_app.engine loads neither Django nor Celery."""

import logging
import os
import threading
import time

from celery import Celery
from celery.signals import worker_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")

app = Celery("anonymizer")
# Every CELERY_* Django setting configures Celery (CELERY_BROKER_URL -> broker_url, ...).
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The worker's own threads (the sweep and the retention check below) talk to the database. The prefork pool
# forks a new child from this process whenever one dies (killed, out of memory): a fork taken while such a
# thread is inside SQLite or a driver copies a held C-level mutex into the child, which then hangs at its first
# query, its job left queued for good. The fork waits until no such thread is between "start" and "done".
FORK_GUARD = threading.Lock()


def _release_fork_guard() -> None:
    if FORK_GUARD.locked():
        FORK_GUARD.release()


os.register_at_fork(before=FORK_GUARD.acquire, after_in_parent=_release_fork_guard,
                    after_in_child=_release_fork_guard)


@worker_init.connect
def _refuse_worker_on_public_key(**kwargs) -> None:
    """A worker does not start on the public development key with DEBUG off (checks.py)."""
    from django.core.exceptions import ImproperlyConfigured

    from anonymizer_app.checks import refuse_public_key

    # Celery logs and swallows a receiver's exception: SystemExit is the one that stops the worker.
    try:
        refuse_public_key()
    except ImproperlyConfigured as exc:
        raise SystemExit(f"ImproperlyConfigured: {exc}") from exc


@worker_ready.connect
def _sweep_while_running(sender=None, **kwargs) -> None:
    """Each worker looks for jobs whose worker died (stale heartbeat) at start and then periodically, so
    that no job stays "running" for good (services.jobs.sweep_stale_jobs)."""
    def loop() -> None:
        from django.conf import settings
        from django.db import connection

        from anonymizer_app.services.jobs import sweep_stale_jobs

        while True:
            with FORK_GUARD:  # no fork while this thread holds a database or logging lock
                try:
                    sweep_stale_jobs()
                except Exception:  # a sweep must never stop the worker; the next one tries again
                    logging.getLogger(__name__).exception("sweeping stale jobs failed")
                finally:
                    connection.close()
            time.sleep(settings.ANONYMIZER_SWEEP_SECONDS)

    threading.Thread(target=loop, name="sweep-stale-jobs", daemon=True).start()


@worker_ready.connect
def _retention_while_running(sender=None, **kwargs) -> None:
    """Each worker purges the results older than ANONYMIZER_RESULT_RETENTION_DAYS (when set) and the media
    files no object owns, at start and then every ANONYMIZER_RETENTION_CHECK_SECONDS
    (services.erasure.retention_check; `manage.py purge_results` does the same on demand or from cron)."""

    def loop() -> None:
        from django.conf import settings
        from django.db import connection

        from anonymizer_app.services.erasure import retention_check

        log = logging.getLogger(__name__)
        while True:
            with FORK_GUARD:  # no fork while this thread holds a database or logging lock
                try:
                    purged, orphans = retention_check()
                    if purged is not None and (purged.counts or purged.files):
                        log.info("retention: purged %s: %s", purged.what, purged.summary())
                    if orphans:
                        log.info("retention: removed %d orphan file(s)", len(orphans))
                except Exception:  # a purge must never stop the worker; the next one tries again
                    log.exception("the retention check failed")
                finally:
                    connection.close()
            time.sleep(settings.ANONYMIZER_RETENTION_CHECK_SECONDS)

    threading.Thread(target=loop, name="retention-check", daemon=True).start()
