"""Erasure: a dataset, a job (a run, a comparison, an experiment, a lattice evaluation), a hierarchy or a whole
account deleted with every file behind it; results purged after the retention period; files that no object
owns any more swept away.

Files follow their rows whichever way the rows go (these functions, the Django admin, a bulk queryset delete,
a cascade): a post_delete receiver per kind collects the object's file names (services.storage ``*_files``)
and removes them once the transaction commits, so a deletion that is rolled back keeps its files. A job that
is queued or running is stopped first: its row is locked and marked cancelled, and its worker, finding the
row gone, stops at its next progress report and stores nothing (results.store).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models, router, transaction
from django.db.models import Q
from django.db.models.deletion import Collector
from django.db.models.functions import Cast
from django.db.models.signals import post_delete, pre_delete
from django.utils import timezone

from hierarchy_editor.models import Hierarchy

from ..models import Dataset, Job, Result
from . import datasets, storage

ACTIVE = (Job.QUEUED, Job.RUNNING)
# What a summary counts, in this order, with its singular and plural names.
COUNTED = (("user", "account", "accounts"), ("dataset", "dataset", "datasets"), ("job", "job", "jobs"),
           ("result", "result", "results"), ("hierarchy", "hierarchy", "hierarchies"))


def _hierarchy_model():
    return Hierarchy


def files_of(instance) -> list[str]:
    """The media names (files or folders) behind one object of a kind that has files; [] otherwise."""
    kinds = {Dataset: storage.dataset_files, Job: storage.job_files, Result: storage.result_files,
             _hierarchy_model(): storage.hierarchy_files, get_user_model(): storage.user_files}
    function = kinds.get(instance._meta.concrete_model)  # not type(): request.user is a lazy wrapper
    return function(instance) if function else []


@dataclass
class Erasure:
    """What a deletion removed (or, dry run, would remove): objects by kind, files, and what the user should know."""

    what: str
    counts: Counter = field(default_factory=Counter)
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """e.g. "1 dataset, 3 jobs, 2 results and 4 files"."""
        parts = [f"{self.counts[key]} {one if self.counts[key] == 1 else many}"
                 for key, one, many in COUNTED if self.counts[key]]
        parts.append(f"{len(self.files)} file{'' if len(self.files) == 1 else 's'}")
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]

    def add(self, other: Erasure) -> None:
        self.counts.update(other.counts)
        self.files = sorted(set(self.files) | set(other.files))
        self.notes += other.notes


def _collect(what: str, objects) -> Erasure:
    """Every object a deletion of ``objects`` removes (Django's cascade, as the admin lists it) and their files."""
    erasure = Erasure(what)
    objects = list(objects)
    if not objects:
        return erasure
    collector = Collector(using=router.db_for_write(type(objects[0])))
    collector.collect(objects)
    names = []
    for model, instances in collector.data.items():
        erasure.counts[model._meta.model_name] += len(instances)
        for instance in instances:
            names += files_of(instance)
    for queryset in collector.fast_deletes:
        erasure.counts[queryset.model._meta.model_name] += queryset.count()
    erasure.files = storage.existing_files(names)
    return erasure


def _stop_jobs(jobs, dry_run: bool) -> list[str]:
    """Lock the jobs about to be deleted (a worker storing a result waits for the deletion, then finds its job
    gone) and cancel those that are queued or running; returns the note saying so."""
    if dry_run:
        n = jobs.filter(status__in=ACTIVE).count()
        return [f"{n} queued or running job{'' if n == 1 else 's'} will be cancelled first"] if n else []
    locked = list(jobs.select_for_update().values_list("pk", "status"))
    active = [pk for pk, status in locked if status in ACTIVE]
    Job.objects.filter(pk__in=active).update(cancel_requested=True, status=Job.CANCELLED, finished=timezone.now(),
                                             message="cancelled: deleted by its owner")
    n = len(active)
    return [f"{n} queued or running job{' was' if n == 1 else 's were'} cancelled first"] if n else []


def _delete(erasure: Erasure, queryset, dry_run: bool) -> Erasure:
    if not dry_run:
        queryset.delete()
    return erasure


# ---- one object, or an account ---------------------------------------------------------------------------
def erase_dataset(dataset: Dataset, dry_run: bool = False) -> Erasure:
    """The dataset, its columns, its jobs of every kind and their results, and all their files."""
    with transaction.atomic():
        stopped = _stop_jobs(Job.objects.filter(dataset=dataset), dry_run)
        erasure = _collect(f"dataset {dataset.name!r} (id {dataset.pk})", [dataset])
        erasure.notes += stopped
        return _delete(erasure, Dataset.objects.filter(pk=dataset.pk), dry_run)


def job_and_evaluations(job: Job):
    """A job and the lattice evaluations of it (bookkeeping of its lattice cache, which goes with it)."""
    return Job.objects.filter(Q(pk=job.pk) | Q(owner=job.owner_id, kind=Job.LATTICE,
                                               options__source_job=str(job.pk)))


def erase_job(job: Job, dry_run: bool = False) -> Erasure:
    """A job of any kind and state (stopped first), its result, its lattice cache and its lattice evaluations."""
    with transaction.atomic():
        targets = job_and_evaluations(job)
        stopped = _stop_jobs(targets, dry_run)
        erasure = _collect(f"{job.kind} job {job.pk} on dataset {job.dataset.name!r}", targets)
        erasure.notes += stopped
        return _delete(erasure, targets, dry_run)


def columns_using(hierarchy) -> list[str]:
    """ "dataset / column" of every column bound to the hierarchy."""
    return [f"{c.dataset.name} / {c.name}" for c in hierarchy.columns.select_related("dataset").order_by("pk")]


def jobs_using(hierarchy):
    """The owner's jobs whose configuration snapshot binds the hierarchy (a text prefilter, then exact)."""
    probe = f'"hierarchy": {hierarchy.pk}'
    candidates = (Job.objects.filter(owner=hierarchy.owner_id)
                  .annotate(config_text=Cast("config", models.TextField()))
                  .filter(config_text__contains=probe).only("pk", "config"))
    return [job for job in candidates
            if any(c.get("hierarchy") == hierarchy.pk for c in job.config.get("columns", []))]


def keep_hierarchy_in_jobs(hierarchy) -> int:
    """Jobs keep what they ran with: the hierarchy's text goes into their configuration (see
    datasets.hierarchies_from_config); returns how many jobs used it."""
    jobs = jobs_using(hierarchy)
    for job in jobs:
        if datasets.snapshot_hierarchy(job.config, hierarchy):
            Job.objects.filter(pk=job.pk).update(config=job.config)
    return len(jobs)


def erase_hierarchy(hierarchy, dry_run: bool = False) -> Erasure:
    """The hierarchy and its editing sessions; columns bound to it fall back to the default hierarchy, jobs
    keep a copy of it in their configuration."""
    Hierarchy = _hierarchy_model()
    with transaction.atomic():
        erasure = _collect(f"hierarchy {hierarchy.name!r} (id {hierarchy.pk})", [hierarchy])
        used = columns_using(hierarchy)
        if used:
            erasure.notes.append(f"{len(used)} column(s) now use the default hierarchy: {', '.join(used)}")
        kept = len(jobs_using(hierarchy)) if dry_run else keep_hierarchy_in_jobs(hierarchy)
        if kept:
            erasure.notes.append(f"{kept} job(s) keep a copy of it with their configuration")
        return _delete(erasure, Hierarchy.objects.filter(pk=hierarchy.pk), dry_run)


def erase_user(user, dry_run: bool = False) -> Erasure:
    """The account and everything it owns: datasets, jobs, results, hierarchies, editing sessions, pending
    uploads, sign-in records, and every file of them."""
    with transaction.atomic():
        stopped = _stop_jobs(Job.objects.filter(owner=user), dry_run)
        erasure = _collect(f"user {user.get_username()!r}", [user])
        erasure.notes += stopped
        return _delete(erasure, get_user_model().objects.filter(pk=user.pk), dry_run)


# ---- retention -----------------------------------------------------------------------------------------------
def expired_jobs(days: int, now=None):
    """Finished jobs (every kind) that ended more than ``days`` days ago."""
    cutoff = (now or timezone.now()) - timedelta(days=days)
    return Job.objects.filter(status__in=Job.FINISHED).filter(
        Q(finished__lt=cutoff) | Q(finished__isnull=True, created__lt=cutoff))


def purge_expired_results(days: int | None = None, now=None, dry_run: bool = False) -> Erasure | None:
    """Delete the results (jobs, stored rows, lattice caches) older than ``days`` or
    ANONYMIZER_RESULT_RETENTION_DAYS; None when retention is off (0 or unset)."""
    days = settings.ANONYMIZER_RESULT_RETENTION_DAYS if days is None else days
    if not days:
        return None
    with transaction.atomic():
        expired = expired_jobs(days, now)
        pks = list(expired.values_list("pk", flat=True))
        targets = Job.objects.filter(Q(pk__in=pks) | Q(kind=Job.LATTICE, options__source_job__in=[str(p) for p in pks]))
        erasure = _collect(f"results older than {days} day{'' if days == 1 else 's'}", targets)
        return _delete(erasure, targets, dry_run)


# ---- files no object owns ---------------------------------------------------------------------------------------
def orphan_files(grace_seconds: float) -> list[str]:
    """Media files that belong to no existing object and are older than ``grace_seconds`` (younger ones may
    be an upload or a result being stored right now): left by a crash, a changed SECRET_KEY (table names),
    a deletion made outside Django (SQL), expired editor sessions."""
    Hierarchy = _hierarchy_model()
    claimed: set[str] = set()
    for dataset in Dataset.objects.only("pk", "original"):
        claimed.update(name for name in (storage.table_name(dataset), dataset.original.name,
                                         storage.dicom_name(dataset)) if name)
    claimed.update(name for name in Result.objects.values_list("output", flat=True) if name)
    jobs = {str(pk) for pk in Job.objects.values_list("pk", flat=True)}
    hierarchies = {(str(owner), str(pk)) for pk, owner in Hierarchy.objects.values_list("pk", "owner_id")}
    users = {str(pk) for pk in get_user_model().objects.values_list("pk", flat=True)}

    def owned(name: str) -> bool:
        if name in claimed:
            return True
        folder, _, rest = name.partition("/")
        entry = rest.split("/", 1)[0]
        match = storage.JOB_FILE_RE.match(name)
        if match:
            return match.group("job") in jobs
        if folder == storage.DICOM:  # a DICOM dataset's folder: owned while its dataset is
            return f"{folder}/{entry}" in claimed
        if folder == storage.DRAFTS and (draft := storage.DRAFT_RE.match(entry)):
            return (draft.group("user"), draft.group("hierarchy")) in hierarchies
        if folder == storage.PENDING and (pending := storage.PENDING_RE.match(entry)):
            return pending.group("user") in users
        return False

    cutoff = time.time() - grace_seconds
    return [name for name, mtime in storage.media_files() if mtime <= cutoff and not owned(name)]


def sweep_orphans(grace_seconds: float | None = None, dry_run: bool = False) -> list[str]:
    """Remove the orphan files (see orphan_files) and the empty folders they leave; returns their names."""
    grace = settings.ANONYMIZER_ORPHAN_GRACE_SECONDS if grace_seconds is None else grace_seconds
    names = orphan_files(grace)
    if not dry_run:
        storage.delete_names(names)
        storage.remove_empty_parents(names)
        storage.prune_empty_folders(grace)
    return names


# ---- files follow their rows -------------------------------------------------------------------------------------
def _remove_files_after_commit(sender, instance, using, **kwargs) -> None:
    names = files_of(instance)
    if names:
        transaction.on_commit(lambda: storage.delete_names(names), using=using)


def _hierarchy_pre_delete(sender, instance, **kwargs) -> None:
    keep_hierarchy_in_jobs(instance)  # however it is deleted (the admin, a cascade): jobs keep their copy


def _user_post_delete(sender, instance, using, **kwargs) -> None:
    """Sign-in records (username, address, browser) go with the account."""
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog

    for model in (AccessAttempt, AccessFailureLog, AccessLog):
        model.objects.using(using).filter(username=instance.get_username()).delete()
    _remove_files_after_commit(sender, instance, using)


def connect() -> None:
    """Called once from AnonymizerAppConfig.ready()."""
    for model in (Dataset, Job, Result, _hierarchy_model()):
        post_delete.connect(_remove_files_after_commit, sender=model, dispatch_uid=f"erasure-files-{model.__name__}")
    pre_delete.connect(_hierarchy_pre_delete, sender=_hierarchy_model(), dispatch_uid="erasure-hierarchy-snapshot")
    post_delete.connect(_user_post_delete, sender=get_user_model(), dispatch_uid="erasure-user")


def retention_check() -> tuple[Erasure | None, list[str]]:
    """What every worker runs once every ANONYMIZER_RETENTION_CHECK_SECONDS: the retention purge (when on)
    and the orphan sweep."""
    return purge_expired_results(), sweep_orphans()
