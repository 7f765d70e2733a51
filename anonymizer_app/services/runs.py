"""A job's run: its RunSpec, the pipeline, and the stored publication. The one path by which a web
job (a run, a node kept from the solution lattice, δ-presence against a population dataset, the disk
hybrid out of core) produces a stored result: nothing here builds an output table or a report; the
pipeline's publishing gate decides what is stored, and the stored rows are exactly the published ones.
Handles the job kinds "run" and "lattice-keep" (registered in job_support.JOB_HANDLERS).
"""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np
import pandas as pd
from django.conf import settings

from ..engine import KAnonymity, Role
from ..engine.backends import out_of_core
from ..engine.backends.dask import ParquetTable
from ..engine.backends.dask import backend as cluster_backend
from ..engine.run.pipeline import run
from ..engine.run.spec import RunSpec, StreamedTable
from ..models import Job, Result
from . import (
    datasets,
    lattice_known,
    population,
    pseudonyms,
    republication,
    results,
    sdc_runs,
    setvalued,
    storage,
)
from .job_support import Progress, build_models, register

log = logging.getLogger(__name__)


def job_spec(job: Job, algorithm: str | None = None, options: dict | None = None, streamed: bool = False,
             cluster: str | None = None) -> RunSpec:
    """The RunSpec of a job (or of the same setup with another algorithm, e.g. a lattice node); with
    ``cluster`` (a Dask cluster's address) the stored Parquet table is read by the cluster's workers. With a
    person-id column the job's adversary (Job.person_adversary) goes with it, on every path."""
    spec = replace(_job_spec(job, algorithm, options, streamed, cluster),
                   person_adversary=job.person_adversary or "class")
    return sdc_runs.with_sdc(spec, job.options if options is None else options)  # SDC steps after the recoding


def has_person_id(job: Job) -> bool:
    """Does the job's snapshot have a person-id column (every model then counts persons)?"""
    return any(c.get("role") == Role.PERSON.value for c in (job.config or {}).get("columns", []))


def _job_spec(job: Job, algorithm: str | None, options: dict | None, streamed: bool,
              cluster: str | None) -> RunSpec:
    config = job.config
    if config.get("layout") == "transactions":  # a transaction dataset: k^m on its records
        return setvalued.transaction_spec(job)
    hierarchies = datasets.hierarchies_from_config(job.owner, config, job.models)
    build = dict(algorithm=algorithm or job.algorithm, k=job.k, models=build_models(job.models),
                 options=job.options if options is None else options, suppression_limit=job.suppression_limit,
                 sensitive=job.sensitive or None,
                 suppressed_rows=(job.options or {}).get("suppressed_rows", "remove") if options is None
                 else options.get("suppressed_rows", "remove"))
    build["options"] = {k: v for k, v in sdc_runs.algorithm_options(build["options"]).items()
                        if k != "suppressed_rows"}
    build["set_column"] = setvalued.set_column_spec(job.owner, config)  # mixed mode: k^m within every class
    if config.get("population"):
        source, marked, _ = population.marked_population(job)
        table = datasets.table_from_config(marked, config, source.name)
        return RunSpec.build(table, hierarchies, **build)
    if cluster:
        roles = {c["name"]: Role(c["role"]) for c in config["columns"]}
        types = {c["name"]: c["type"] for c in config["columns"]}
        parquet = ParquetTable(str(datasets.stored_table(job.dataset)), roles, types, job.dataset.name)
        return replace(RunSpec.build(parquet, hierarchies, **build), cluster=cluster)
    if streamed:
        path = datasets.stored_table(job.dataset)

        def chunks():
            yield from storage.iter_batches(path)

        roles = {c["name"]: Role(c["role"]) for c in config["columns"]}
        types = {c["name"]: c["type"] for c in config["columns"]}
        return RunSpec.build(StreamedTable(chunks, roles, types, job.dataset.name), hierarchies, **build)
    # text columns dictionary-encoded, as the CLI reads them: the Table encodes its QIs from the codes
    table = datasets.table_from_config(datasets.load_frame(job.dataset, dictionary=True), config, job.dataset.name)
    return RunSpec.build(table, hierarchies, **build)


class ParquetSink:
    """The stored result: published rows as strings plus the suppression flag, a row group at a time."""

    def __init__(self, out, display_rows: np.ndarray | None = None):
        self.out = out
        self.display_rows = display_rows  # input row -> row of the job's dataset (population runs)

    def write(self, frame: pd.DataFrame, suppressed: np.ndarray, rows: np.ndarray) -> None:
        shown = rows if self.display_rows is None else self.display_rows[rows]
        self.out.write(results.output_table(frame, suppressed, shown))


def run_and_store(job: Job, progress) -> Result:
    """Run the job's spec through the pipeline; the published rows and the report become its Result."""
    streamed = not job.config.get("population") and not job.config.get("layout") == "transactions" \
        and not job.config.get("set_column") and out_of_core.supports(
        job.algorithm, [KAnonymity(job.k), *build_models(job.models)])
    if pseudonyms.treats(job):  # pseudonyms, masks and surrogates are published from an in-memory run
        streamed = False
    if has_person_id(job):  # persons are counted by the in-memory run only (the other backends count records)
        streamed = False
    simple = not job.config.get("population") and not job.config.get("layout") == "transactions" \
        and not job.config.get("set_column") and not pseudonyms.treats(job) and not has_person_id(job)
    cluster = settings.ANONYMIZER_DASK_CLUSTER if simple and settings.ANONYMIZER_DASK_CLUSTER and \
        cluster_backend.supports(job.algorithm, [KAnonymity(job.k), *build_models(job.models)]) else None
    # a population run's report names the population dataset (its research section, built with the report)
    population_name = job.config["population"]["name"] if job.config.get("population") else None
    spec = replace(job_spec(job, streamed=streamed and not cluster, cluster=cluster), scratch=storage.scratch_of(job),
                   population=population_name)
    spec = republication.with_history(job, spec)  # m-invariance: the release's history from its policy
    spec = pseudonyms.with_identifiers(job, spec)  # the identifying columns' rules and their keys' secrets
    target = storage.result_path(job)
    display = None
    if job.config.get("population"):  # the page shows the research dataset's row beside each published row
        source, _, positions = population.marked_population(job)
        display = np.full(source.n_rows, -1, dtype=np.int64)
        display[positions] = np.arange(len(positions))
    with storage.AtomicParquet(target) as out:
        publication = run(spec, progress, ParquetSink(out, display))
        out.commit()
    republication.store(job, spec, publication)  # m-invariance: the history extended by this release
    pseudonyms.store_reidentification(job, publication.reidentification)  # only when the job asked for it
    st = publication.tables.get("st")
    if st is not None:  # Anatomy: the sensitive table beside the QIT
        storage.write_string_table(st, storage.sensitive_table_path(target))
    stored = results.store(job, results.report_json(publication.report), storage.result_name(job),
                           storage.job_files(job))
    try:  # the lattice page's first view (a lattice run's search): an extra, whose failure leaves the page as it was
        lattice_known.remember(job, publication)
    except Exception:  # noqa: BLE001 - logged; the run and its stored result stand
        log.exception("the lattice's first view of job %s was not written", job.pk)
    return stored


def run_job_spec(job: Job) -> None:
    """The handler of a run and of a node kept from the lattice (a full-domain run with fixed levels)."""
    run_and_store(job, Progress(job))


register(Job.RUN, run_job_spec)
register(Job.LATTICE_KEEP, run_job_spec)
