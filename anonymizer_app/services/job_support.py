"""What the job kinds share with the job runner (services.jobs): the registry of handlers by kind, the
privacy models built from their stored form and checked, the progress callback, the heartbeat and the time
limits. Below the kinds' modules (runs, comparison, experiment, lattice, sql_jobs, remote_jobs) and
source_imports, which import it; services.jobs, above them, imports every kind so that JOB_HANDLERS is
complete, and re-exports these names."""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from .. import engine
from ..engine import InputError, Role
from ..engine.run import stages
from ..models import Dataset, Job

JOB_HANDLERS: dict[str, Callable[[Job], None]] = {}


def register(kind: str, handler: Callable[[Job], None]) -> None:
    """Make ``handler`` run the jobs of ``kind`` (one of Job.KIND_CHOICES)."""
    JOB_HANDLERS[kind] = handler


# ---- privacy models ------------------------------------------------------------------------------
def build_models(specs: list[dict] | None) -> list:
    """Engine privacy models from their stored form ({"model": name, param: value, ..., "column": c})."""
    out = []
    for spec in specs or []:
        params = {key: value for key, value in spec.items() if key != "model"}
        out.append(engine.privacy.make_model(spec.get("model", ""), **params))
    return out


def validate_models(dataset: Dataset, info, k: int, specs: list[dict] | None, marker: str | None = None) -> list[dict]:
    """The models built (the engine's messages on bad values), checked against the algorithm (its refusal
    names the algorithms that can) and against the columns; returns them as stored on the job. ``marker``:
    the research-subset column a population job adds (δ-presence or k-map against another dataset)."""
    models = build_models(specs)
    stages.check_supported(info, [engine.KAnonymity(k), *models])
    columns = {c.name: c for c in dataset.columns.all()}
    for m in models:
        if marker is not None and m.column == marker:
            continue
        if m.column_source is None:
            continue  # a model on the classes alone (average risk)
        if m.column is None:
            raise InputError(f"{m.describe()}: choose the column it applies to")
        col = columns.get(m.column)
        if col is None:
            raise InputError(f"{m.describe()}: unknown column {m.column!r}")
        if col.role == Role.QUASI_IDENTIFYING.value:
            raise InputError(f"{m.describe()}: {m.column!r} is a quasi-identifier, not a sensitive column")
        if col.role == Role.IDENTIFYING.value:
            raise InputError(f"{m.describe()}: {m.column!r} is identifying (removed from the output)")
        if getattr(m, "distance", None) == "hierarchical" and col.hierarchy_id is None:
            raise InputError(f"hierarchical t-closeness needs a hierarchy for the sensitive column {m.column!r}: "
                             f"bind one to it on the columns page")
        if getattr(m, "distance", None) == "ordered" and col.type not in ("integer", "decimal"):
            raise InputError(f"ordered distance needs a numeric sensitive column; {m.column!r} is {col.type}")
    return [m.to_dict() for m in models]


# ---- time limits ----------------------------------------------------------------------------------------
def time_limit(kind: str) -> tuple[float, float, str]:
    """(soft, hard, setting) of a job kind: Celery raises SoftTimeLimitExceeded in the task after ``soft``
    seconds (run_job stops the job) and kills the worker process after ``hard`` (tasks.JobRequest settles it);
    ``setting`` names the environment variable that sets ``soft`` (settings.py, docs/limits.md)."""
    per_kind = settings.ANONYMIZER_JOB_TIME_LIMITS
    if kind in per_kind:
        soft, name = float(per_kind[kind]), f"ANONYMIZER_JOB_TIME_LIMIT_{kind.upper().replace('-', '_')}_SECONDS"
    else:
        soft, name = float(settings.ANONYMIZER_JOB_TIME_LIMIT_SECONDS), "ANONYMIZER_JOB_TIME_LIMIT_SECONDS"
    return soft, soft + float(settings.ANONYMIZER_JOB_TIME_LIMIT_GRACE_SECONDS), name


def time_limit_message(kind: str, seconds: float) -> str:
    _, _, name = time_limit(kind)
    shown = int(seconds) if float(seconds).is_integer() else round(seconds, 1)
    return (f"stopped after {shown} s: the time limit for {kind} jobs (setting {name}); its partial outputs "
            f"were discarded")


# ---- queueing ------------------------------------------------------------------------------------------
TASKS_MODULE = "anonymizer_app.tasks"


def send_task(name: str, args: tuple, kind: str):
    """Put a message for the Celery task ``name`` of anonymizer_app.tasks on the broker, under the time limits
    of the job kind ``kind``; its AsyncResult. The tasks sit above the services they run (tasks.py imports
    services.jobs and services.source_imports), so they are looked up here by name when a message is sent: the
    first message loads Celery, Django's setup and the command line never do."""
    task = getattr(importlib.import_module(TASKS_MODULE), name)
    soft, hard, _ = time_limit(kind)
    return task.apply_async(args, soft_time_limit=soft, time_limit=hard)


def soft_time_limit_error() -> type[BaseException]:
    # billiard (Celery's pool) imported here, not at the top: web processes and the CLI do not load it
    from billiard.exceptions import SoftTimeLimitExceeded

    return SoftTimeLimitExceeded


def from_time_limit(exc: BaseException, error: type[BaseException]) -> bool:
    """Whether ``exc`` is the soft limit's exception, or was raised while handling it (a handler that turned
    it into an error of its own)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, error):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


class Progress:
    """Writes progress to the job row at most every 0.1 s and stops the run when cancelled or deleted."""

    def __init__(self, job: Job):
        self.job = job
        self.last = 0.0

    def __call__(self, fraction: float, phase: str) -> bool:
        now = time.monotonic()
        # throttled, except for the closing phases (the algorithm's last word, output, verification)
        if now - self.last < 0.1 and fraction < 0.95:
            return True
        self.last = now
        Job.objects.filter(pk=self.job.pk).update(progress=round(fraction, 4), phase=phase[:255])
        cancel = Job.objects.filter(pk=self.job.pk).values_list("cancel_requested", flat=True).first()
        return cancel is False  # None: the job was deleted meanwhile


# ---- liveness ------------------------------------------------------------------------------------
def stale_after() -> timedelta:
    return timedelta(seconds=settings.ANONYMIZER_JOB_STALE_SECONDS)


class Heartbeat:
    """Touches ``row.heartbeat`` (a Job, a SourceImport: any row with a status and a heartbeat) every
    ANONYMIZER_HEARTBEAT_SECONDS from a thread of the worker process while it runs, whatever the work is doing
    (a long numpy step or a slow query makes no progress calls): a row whose heartbeat stops is one whose worker
    died (the sweeps). ``also`` is called on each beat too (a job's scratch folder)."""

    def __init__(self, row, also: Callable[[], None] | None = None):
        self.model, self.pk, self.also = type(row), row.pk, also
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, name=f"heartbeat-{row.pk}", daemon=True)

    def __enter__(self) -> Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(timeout=5)

    def _beat(self) -> None:
        try:
            while not self.stop.wait(settings.ANONYMIZER_HEARTBEAT_SECONDS):
                if self.also is not None:
                    self.also()
                try:
                    self.model.objects.filter(pk=self.pk, status=self.model.RUNNING).update(heartbeat=timezone.now())
                except DatabaseError:  # a busy database (SQLite lock) misses one beat, not the work
                    continue
        finally:
            connection.close()
