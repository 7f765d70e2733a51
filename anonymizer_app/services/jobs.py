"""Jobs: validated and created (a snapshot of the dataset's configuration), queued on the Celery broker,
run to their end by the handler of their kind, with progress written to the job row and cancellation
honoured. The one code path of the web app, the worker and the tests.

JOB_HANDLERS maps Job.kind to the function that runs a job of that kind; each kind's module registers
its own (runs: "run" and "lattice-keep"; comparison; experiment).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from .. import engine
from ..engine import InputError
from ..engine.algorithms import check_person_level
from ..engine.algorithms.fixed import parse_levels
from ..engine.model.persons import check_adversary
from ..engine.search.lattice_metrics import check_target, parse_weights
from ..engine.search.lattice_search import METRIC
from ..models import Dataset, Job, Result

# Each kind's module registers its handler in job_support.JOB_HANDLERS when imported: all are imported here, so
# that the registry is complete whichever module is imported first (they import job_support, not this module).
from . import (  # noqa: F401  (sql_jobs: Job.SQL_EXPORT; remote_jobs: Job.REPOSITORY_DEPOSIT; model_utility)
    comparison,
    datasets,
    experiment,
    lattice,
    model_utility,
    population,
    privacy_ledger,
    remote_jobs,
    runs,
    sdc_risk_jobs,
    sdc_runs,
    source_imports,
    sql_jobs,
    storage,
    synthesis,
)
from .job_support import (  # noqa: F401  (re-exported: jobs.Progress, jobs.register, ... for the callers)
    JOB_HANDLERS,
    Heartbeat,
    Progress,
    build_models,
    from_time_limit,
    register,
    send_task,
    soft_time_limit_error,
    stale_after,
    time_limit,
    time_limit_message,
    validate_models,
)
from .pseudonyms import dataset_rules

log = logging.getLogger(__name__)


# ---- validation and creation ------------------------------------------------------------------------
def validate_job(dataset: Dataset, algorithm: str, k: int, suppression_limit: float, sensitive: str,
                 models: list[dict] | None = None, marker: str | None = None) -> list[dict]:
    """Everything that can be checked before queueing, with the engine's messages; returns the models."""
    info = engine.get_algorithm(algorithm)
    engine.KAnonymity(k)
    engine.run.stages.SUPPRESSION.validate(suppression_limit)
    if not dataset.qi_columns.exists():
        raise InputError("no quasi-identifier: mark at least one column as quasi-identifying")
    if sensitive and not dataset.columns.filter(name=sensitive).exists():
        raise InputError(f"unknown sensitive column {sensitive!r}")
    if k > dataset.n_rows:
        raise InputError(f"k={k} is larger than the dataset's {dataset.n_rows} records")
    models = validate_models(dataset, info, k, models, marker)
    check_persons(dataset, info)
    check_feasible(dataset, k, models, suppression_limit, marker)
    return models


def person_column(dataset: Dataset) -> str | None:
    """The dataset's person-id column (None: each record is its own person); more than one is refused."""
    names = list(dataset.columns.filter(role=engine.Role.PERSON.value).values_list("name", flat=True))
    if len(names) > 1:
        raise InputError(f"only one column can be the person id; {', '.join(map(repr, names))} are: give the "
                         f"others the role identifying on the columns page")
    return names[0] if names else None


def check_persons(dataset: Dataset, info) -> None:
    """With a person id every model counts persons: an algorithm that cannot is refused by name now, not on the
    worker (engine.algorithms.check_person_level's message names those that can)."""
    if person_column(dataset) is not None:
        check_person_level(info, True)


def check_levels(dataset: Dataset, algorithm: str, options: dict) -> None:
    """A fixed transformation (full-domain's ``levels``) checked against the QIs and their hierarchies'
    heights before the job is queued: a wrong count or a level above a hierarchy is named at once."""
    if not any(p.name == "levels" for p in engine.get_algorithm(algorithm).options):
        return
    table, given = datasets.dataset_table(dataset)
    hierarchies = table.hierarchies(given)
    parse_levels(options.get("levels", ""), table.qi, [hierarchies[q].height for q in table.qi])


def check_weights(dataset: Dataset, algorithm: str, options: dict) -> None:
    """Attribute weights (the lattice searches' ``weights``) checked against the dataset's QIs and the run's
    metric before the job is queued: a QI that is not one, a weight outside 0..1 or weights with discernibility
    are named at once (lattice_metrics.parse_weights's message), not by the worker."""
    if not str(options.get("weights") or "").strip():
        return
    if not any(p.name == "weights" for p in engine.get_algorithm(algorithm).options):
        return
    qi = list(dataset.qi_columns.values_list("name", flat=True))
    parse_weights(options["weights"], qi, str(options.get("metric") or METRIC.default))


def check_classification_target(dataset: Dataset, algorithm: str, options: dict) -> None:
    """The classification metric's target checked before the job is queued: missing, not a column or a QI is
    named at once (lattice_metrics.check_target's message), not by the worker."""
    if str(options.get("metric") or "") != "classification":
        return
    if not any(p.name == "target" for p in engine.get_algorithm(algorithm).options):
        return
    qi = list(dataset.qi_columns.values_list("name", flat=True))
    check_target(str(options.get("target") or "").strip(), list(dataset.columns.values_list("name", flat=True)), qi)


def check_feasible(dataset: Dataset, k: int, models: list[dict], suppression_limit: float,
                   marker: str | None = None) -> None:
    """Each model's own feasibility check on the dataset's values (engine.privacy.check_feasible): l above
    the distinct values of its column and the like are named before the job is queued, not by a search
    that fails on the worker."""
    built = build_models(models)
    names = sorted({m.column for m in built if getattr(m, "column", None) and m.column != marker})
    frame = datasets.load_frame(dataset, columns=names) if names else None
    columns = {name: frame[name] for name in names} if frame is not None else {}
    engine.privacy.check_feasible([engine.KAnonymity(k), *built], dataset.n_rows, columns, suppression_limit)


def create_job(dataset: Dataset, algorithm: str, k: int, suppression_limit: float, sensitive: str = "",
               options: dict | None = None, models: list[dict] | None = None,
               population: Dataset | None = None, person_adversary: str = "class") -> Job:
    """A queued job. With ``population`` (δ-presence or k-map against another dataset of the owner) ``dataset``
    is the research subset: its rows are matched into the population on their shared columns (as the CLI's
    --population does), the population is anonymized and the result keeps the research rows only.
    ``person_adversary``: with a person-id column, what the adversary knows of a person
    (engine/model/persons.ADVERSARIES), passed into the job's RunSpec."""
    check_adversary(person_adversary)
    # SDC steps after the recoding (services/sdc_runs.py): validated and normalized with the options
    options = sdc_runs.checked_options(dataset, options or {})
    check_weights(dataset, algorithm, sdc_runs.algorithm_options(options))
    check_classification_target(dataset, algorithm, sdc_runs.algorithm_options(options))
    if population is None:
        models = validate_job(dataset, algorithm, k, suppression_limit, sensitive, models)
        check_levels(dataset, algorithm, sdc_runs.algorithm_options(options))
        config = datasets.dataset_config(dataset)
        rules = dataset_rules(dataset)  # the identifying columns' treatments, snapshotted with the roles
        if rules:
            config["identifiers"] = rules
        with transaction.atomic():  # a SafePub run's ε charged to the dataset's ledger, or no job at all
            job = Job.objects.create(owner=dataset.owner, dataset=dataset, kind=Job.RUN, algorithm=algorithm, k=k,
                                     suppression_limit=suppression_limit, sensitive=sensitive,
                                     options=options or {}, models=models, config=config,
                                     person_adversary=person_adversary)
            privacy_ledger.charge_safepub_job(job)
        return job
    return _create_population_job(dataset, population, algorithm, k, suppression_limit, sensitive, options, models)


def _create_population_job(dataset: Dataset, source: Dataset, algorithm: str, k: int, suppression_limit: float,
                           sensitive: str, options: dict | None, models: list[dict] | None) -> Job:
    marker = population.RESEARCH_MARKER
    specs = population.population_models(dataset, source, models)
    models = validate_job(dataset, algorithm, k, suppression_limit, sensitive, specs, marker=marker)
    if k > source.n_rows:
        raise InputError(f"k={k} is larger than the population's {source.n_rows} records")
    config = population.population_config(dataset, source)
    research = datasets.load_frame(dataset)
    marked, positions = population.match_research(research, datasets.load_frame(source), marker,
                                                  f"population {source.name}")
    config["population"]["research_records"] = int(len(positions))
    # the models on the research subset against the population itself (k-map's k above the population, a
    # research share outside δ-presence's bounds with no suppression), named now rather than by a failed search
    engine.privacy.check_feasible(engine.privacy.research_models(build_models(models)), source.n_rows,
                                  {marker: marked[marker]}, suppression_limit)
    with transaction.atomic():
        job = Job.objects.create(owner=dataset.owner, dataset=dataset, kind=Job.RUN, algorithm=algorithm, k=k,
                                 suppression_limit=suppression_limit, sensitive=sensitive,
                                 options=options or {}, models=models, config=config)
        privacy_ledger.charge_safepub_job(job)
    return job


# ---- queueing and running -----------------------------------------------------------------------------
def submit_job(job: Job) -> Job:
    """Queue the job on the Celery broker, under the time limits of its kind."""
    async_result = send_task("run_job_task", (str(job.pk),), job.kind)
    Job.objects.filter(pk=job.pk).update(celery_id=async_result.id)
    job.celery_id = async_result.id
    return job


def stop_for_time_limit(job_id, hard: bool = False) -> bool:
    """Fail a running job that its time limit stopped (soft: the exception in the task; hard: its worker
    process killed), its partial outputs discarded. Never queued again: it would only hit the limit again.
    After a kill the job may be queued already (a process stuck in C code holding the GIL stops beating and the
    sweep queues the job again): it is failed all the same, and the new delivery finds it finished."""
    states = (Job.RUNNING, Job.QUEUED) if hard else (Job.RUNNING,)
    job = Job.objects.filter(pk=job_id, status__in=states).first()
    if job is None:  # it ended (or was deleted) meanwhile
        return False
    soft, hard_seconds, _ = time_limit(job.kind)
    _discard_partial(job)
    return bool(Job.objects.filter(pk=job.pk, status__in=states).update(
        status=Job.FAILED, message=time_limit_message(job.kind, hard_seconds if hard else soft),
        finished=timezone.now()))


def _over_time_limit(job: Job, now=None) -> bool:
    """Whether a running job whose worker stopped beating ran into its kind's time limit: it beat until its
    soft limit, or it started longer ago than its hard limit (a process stuck in C code does not beat). Its
    worker was killed by the limit, or the job would run into it again."""
    if job.started is None:
        return False
    soft, hard, _ = time_limit(job.kind)
    beating = (job.heartbeat - job.started).total_seconds() if job.heartbeat is not None else 0.0
    return beating >= soft or ((now or timezone.now()) - job.started).total_seconds() >= hard


# ---- liveness: heartbeat, redelivery, sweep ------------------------------------------------------------
def _claim(job: Job) -> str:
    """Take the job for this worker: "run" (queued, or running on a worker that died: its heartbeat is
    stale, the message came back), "busy" (a live worker runs it: a duplicate delivery) or "done"."""
    now = timezone.now()
    if Job.objects.filter(pk=job.pk, status=Job.QUEUED).update(
            status=Job.RUNNING, started=now, heartbeat=now, phase="loading the dataset",
            attempts=F("attempts") + 1):
        return "run"
    stale = now - stale_after()
    redelivered = Job.objects.filter(pk=job.pk, status=Job.RUNNING).filter(
        Q(heartbeat__lt=stale) | Q(heartbeat__isnull=True, started__lt=stale))
    dead = redelivered.first()
    if dead is not None and _over_time_limit(dead, now):  # its worker was killed by the time limit: not again
        _discard_partial(dead)
        _settle(dead, Job.FAILED, time_limit_message(dead.kind, time_limit(dead.kind)[0]))
        return "done"
    if redelivered.update(heartbeat=now, progress=0.0, phase="restarted: the worker running it stopped",
                          attempts=F("attempts") + 1):
        _discard_partial(job)
        return "run"
    return "busy" if Job.objects.filter(pk=job.pk, status=Job.RUNNING).exists() else "done"


def _discard_partial(job: Job) -> None:
    """What a dead worker may have left of the job: its stored output and result row, its scratch folder and
    its half-written outputs."""
    storage.delete_job_files(job)
    storage.discard_leftovers(job)
    Result.objects.filter(job_id=job.pk).delete()


def sweep_stale_jobs(now=None) -> dict[str, list[str]]:
    """Running jobs whose heartbeat is stale (their worker died: killed, out of memory, its message lost
    on a broker that loses messages) are queued again on the broker, or, after
    ANONYMIZER_JOB_MAX_ATTEMPTS deliveries, failed with the cause. Run by every worker (at start and
    periodically), at web start and by `manage.py sweep_jobs`. Scratch folders that no live worker touches (a
    dead worker's, also of a job deleted meanwhile) are removed too ("scratch_removed": their job ids), and so
    are half-written outputs of jobs that no longer run."""
    now = now or timezone.now()
    stale = now - stale_after()
    out: dict[str, list[str]] = {"requeued": [], "failed": [], "cancelled": []}
    candidates = Job.objects.filter(status=Job.RUNNING).filter(
        Q(heartbeat__lt=stale) | Q(heartbeat__isnull=True, started__lt=stale))
    for job in candidates:
        _discard_partial(job)
        if job.cancel_requested:
            if _settle(job, Job.CANCELLED, "cancelled (its worker had stopped)"):
                out["cancelled"].append(str(job.pk))
        elif _over_time_limit(job, now):  # stopped by (or about to hit again) its time limit: failed, not requeued
            if _settle(job, Job.FAILED, time_limit_message(job.kind, time_limit(job.kind)[0])):
                out["failed"].append(str(job.pk))
        elif job.attempts >= settings.ANONYMIZER_JOB_MAX_ATTEMPTS:
            if _settle(job, Job.FAILED, f"the worker running it stopped {job.attempts} time(s) (killed, out of "
                                        f"memory or shut down); not retried again"):
                out["failed"].append(str(job.pk))
        elif Job.objects.filter(pk=job.pk, status=Job.RUNNING, heartbeat=job.heartbeat).update(
                status=Job.QUEUED, progress=0.0, heartbeat=None,
                phase=f"queued again: the worker running it stopped (attempt {job.attempts + 1} next)"):
            submit_job(job)
            out["requeued"].append(str(job.pk))
    folders = storage.stale_scratch(settings.ANONYMIZER_JOB_STALE_SECONDS, now.timestamp())
    storage.remove_scratch(folders)
    out["scratch_removed"] = [folder.name for folder in folders]
    # half-written outputs of jobs that no longer run (deleted, or ended, after their worker died)
    partials = storage.old_partial_outputs(settings.ANONYMIZER_JOB_STALE_SECONDS, now.timestamp())
    running = {str(pk) for pk in Job.objects.filter(pk__in=list(partials), status=Job.RUNNING)
               .values_list("pk", flat=True)}
    storage.delete_names([name for job_id, names in partials.items() if job_id not in running for name in names])
    imports = source_imports.sweep_stale_imports(now)  # dataset imports whose worker died: failed, their staged file removed
    if imports:
        out["imports_failed"] = imports
    return out


def cancel_if_stale(job: Job) -> bool:
    """Cancel at once a running job whose worker stopped (no live worker would notice the request)."""
    stale = timezone.now() - stale_after()
    found = Job.objects.filter(pk=job.pk, status=Job.RUNNING).filter(
        Q(heartbeat__lt=stale) | Q(heartbeat__isnull=True, started__lt=stale)).first()
    if found is None:
        return False
    _discard_partial(found)
    return _settle(found, Job.CANCELLED, "cancelled (its worker had stopped)")


def _settle(job: Job, status: str, message: str) -> bool:
    """Move a stale running job to a final state (only if nobody took it meanwhile)."""
    return bool(Job.objects.filter(pk=job.pk, status=Job.RUNNING, heartbeat=job.heartbeat).update(
        status=status, message=message, finished=timezone.now()))


def run_job(job: Job) -> Job:
    """Run a queued job to its end: succeeded with a stored, verified result, failed, or cancelled. A job
    its soft time limit stops (on a worker) ends failed with the limit named, its partial outputs discarded."""
    soft_limit = soft_time_limit_error()
    try:
        return _run_job(job, soft_limit)
    except soft_limit:  # raised outside the handler (claiming, settling): the same ending
        stop_for_time_limit(job.pk)
        job.refresh_from_db()
        return job


def _run_job(job: Job, soft_limit: type[BaseException]) -> Job:
    job.refresh_from_db()
    if job.status == Job.QUEUED and job.cancel_requested:
        _finish(job, Job.CANCELLED, "cancelled before it started")
        job.refresh_from_db()
        return job
    if job.status not in (Job.QUEUED, Job.RUNNING) or _claim(job) != "run":
        return job  # finished, or a live worker runs it (a duplicate delivery)
    job.refresh_from_db()
    if job.attempts > settings.ANONYMIZER_JOB_MAX_ATTEMPTS:
        _finish(job, Job.FAILED, f"the worker running it stopped {job.attempts - 1} time(s) (killed, out of memory "
                                 f"or shut down); not retried again")
        job.refresh_from_db()
        return job
    try:
        handler = JOB_HANDLERS.get(job.kind)
        if handler is None:
            raise engine.EngineError(f"unknown job kind {job.kind!r}")
        with storage.job_scratch(job), Heartbeat(job, also=lambda: storage.touch_scratch(job.pk)):  # the scratch folder goes whatever the ending
            handler(job)
    except Exception as exc:
        if from_time_limit(exc, soft_limit):  # SoftTimeLimitExceeded derives from Exception
            stop_for_time_limit(job.pk)
        elif isinstance(exc, engine.Cancelled):
            _finish(job, Job.CANCELLED, "cancelled by the user")
        elif isinstance(exc, engine.EngineError):
            _finish(job, Job.FAILED, str(exc))
        else:  # the job must end failed, whatever went wrong, with the reason shown
            _finish(job, Job.FAILED, f"internal error: {exc.__class__.__name__}: {exc}")
            raise
    else:
        _finish(job, Job.SUCCEEDED, "")
    job.refresh_from_db()
    return job


def _finish(job: Job, status: str, message: str) -> None:
    fields = {"status": status, "message": message, "finished": timezone.now()}
    if status == Job.SUCCEEDED:
        fields.update(progress=1.0, phase="done")
    Job.objects.filter(pk=job.pk).exclude(status__in=Job.FINISHED).update(**fields)


def evaluation_job(source: Job, create: bool = True) -> Job | None:
    """The lattice evaluation (services.lattice) of ``source`` that is queued or running, else (``create``) a
    new one, submitted; never two at once for one run."""
    active = Job.objects.filter(owner=source.owner, kind=Job.LATTICE, options__source_job=str(source.pk),
                                status__in=lattice.ACTIVE).order_by("-created").first()
    if active is not None or not create:
        return active
    job = Job.objects.create(owner=source.owner, dataset=source.dataset, kind=Job.LATTICE, algorithm=source.algorithm,
                             k=source.k, suppression_limit=source.suppression_limit, sensitive=source.sensitive,
                             options={"source_job": str(source.pk)}, models=list(source.models or []),
                             config=source.config)
    try:
        return submit_job(job)
    except Exception as exc:  # a broker that refuses it: the evaluation ends failed and says why (retry anew)
        log.exception("could not queue the lattice evaluation %s", job.pk)
        Job.objects.filter(pk=job.pk, status=Job.QUEUED).update(
            status=Job.FAILED, finished=timezone.now(), message=f"could not queue the job: {exc}")
        job.refresh_from_db()
        return job
