"""The solution lattice of a finished lattice run (Flash, Incognito, Samarati, exhaustive), evaluated on a
worker: a job of kind "lattice" (options["source_job"]: the run) evaluates every node under every model
of the run with progress, and writes the lattice into the run's cache folder
(storage.lattice_cache_dir), where the lattice page reads it.

When the run was made with keep_lattice=yes its report already holds the lattice of its own search:
that is used directly, no job needed.
"""

from __future__ import annotations

import logging

from .. import engine
from ..engine.search import solution_lattice
from ..engine.search.solution_lattice import build_lattice
from ..models import Job, Result
from . import identifier_suggestions, job_support, results, runs, storage

log = logging.getLogger(__name__)

CACHE_VERSION = 1
LATTICE_FILE = "lattice.json"
ACTIVE = (Job.QUEUED, Job.RUNNING)


def read_cache(job: Job, name: str):
    data = storage.read_json(storage.lattice_cache_dir(job) / name)
    return data if isinstance(data, dict) and data.get("version") == CACHE_VERSION else None


def write_cache(job: Job, name: str, data: dict) -> None:
    storage.write_json(storage.lattice_cache_dir(job) / name, data)
    if not Job.objects.filter(pk=job.pk).exists():  # the run was deleted meanwhile: leave nothing of it
        storage.delete_names([storage.lattice_cache_name(job)])


def job_metric(job: Job) -> str:
    return solution_lattice.metric_of(job.options)  # the job's metric, or the searches' default


def run_spec(job: Job):
    """The run's full specification (every model), or InputError when a hierarchy it used is gone."""
    try:
        return runs.job_spec(job)
    except engine.EngineError:
        raise
    except Exception as exc:  # a hierarchy of the snapshot was deleted since
        raise engine.InputError(f"a hierarchy this job used is no longer available ({exc})") from None


def stored_lattice(job: Job) -> dict | None:
    """The lattice from the cache, or from the run's own report (keep_lattice), or None (a job needed)."""
    cached = read_cache(job, LATTICE_FILE)
    if cached is not None:
        return cached
    report = Result.objects.get(job=job).report
    stored = (report.get("search") or {}).get("lattice")
    if stored is None:
        return None
    spec = run_spec(job)
    hs = spec.table.hierarchies(spec.hierarchies)
    metric = (report.get("search") or {}).get("metric") or job_metric(job)
    data = build_lattice(stored, [hs[c] for c in spec.table.qi], metric)
    data["models"] = [m.describe() for m in spec.models]
    data.update(version=CACHE_VERSION, source="stored with the job's result (keep_lattice)",
                result=results.transformation_key(report))
    write_cache(job, LATTICE_FILE, data)
    return data


def last_evaluation(source: Job) -> Job | None:
    return Job.objects.filter(owner=source.owner, kind=Job.LATTICE,
                              options__source_job=str(source.pk)).order_by("-created").first()


def keep_node(job: Job, key: str) -> Job:
    """Keep the node ``key`` (checked levels, '0,2,1') of ``job``'s lattice as a result of its own: a new job
    (kind "lattice-keep", algorithm full-domain, the node's levels, the same k, every privacy model,
    suppression limit and configuration), not yet submitted: the caller queues it (the web's "keep" and the
    API's), and on a worker the pipeline and its publishing gate run it like any run. With a person id the kept
    node counts persons against the run's adversary; if the chosen transformation cannot, it is refused by name now
    (engine.algorithms.check_person_level), not on the worker."""
    if runs.has_person_id(job):
        engine.algorithms.check_person_level(engine.get_algorithm("full-domain"), True)
    # the identifier pre-flight on the run's own roles: a column that looks like a direct identifier and that the
    # run would publish as it is needs the confirmation the run was made with
    identifier_suggestions.check_job(job, 'run the table again with "Publish column {column} as is" ticked on '
                                          'the run form (API: publish_as_is), then keep a node of that run')
    options = {"levels": key}
    if (job.options or {}).get("suppressed_rows"):
        options["suppressed_rows"] = job.options["suppressed_rows"]
    return Job.objects.create(owner=job.owner, dataset=job.dataset, kind=Job.LATTICE_KEEP,
                              algorithm="full-domain", k=job.k, suppression_limit=job.suppression_limit,
                              sensitive=job.sensitive, options=options, models=list(job.models or []),
                              config=job.config, person_adversary=job.person_adversary)


def source_of(job: Job) -> Job:
    source_id = (job.options or {}).get("source_job")
    source = Job.objects.filter(pk=source_id, owner=job.owner).first() if source_id else None
    if source is None or not Result.objects.filter(job=source).exists():
        raise engine.InputError("the run whose lattice this job evaluates no longer exists")
    return source


def run_lattice_job(job: Job) -> None:
    """Evaluate the source run's lattice under its full specification, with progress; cache it."""
    source = source_of(job)
    if read_cache(source, LATTICE_FILE) is not None:
        return
    spec = run_spec(source)
    report = Result.objects.get(job=source).report
    metric = (report.get("search") or {}).get("metric") or job_metric(source)
    data = solution_lattice.evaluate(spec, metric, progress=job_support.Progress(job))
    data.update(version=CACHE_VERSION,
                source="computed by an exhaustive evaluation of every node under every model of the job",
                result=results.transformation_key(report))
    write_cache(source, LATTICE_FILE, data)


job_support.register(Job.LATTICE, run_lattice_job)
