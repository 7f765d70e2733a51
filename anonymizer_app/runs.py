"""A job's run: its RunSpec, the pipeline, and the stored publication. The one path by which a web
job (a run, a node kept from the solution lattice, δ-presence against a population dataset, the disk
hybrid out of core) produces a stored result: nothing here builds an output table or a report; the
pipeline's publishing gate decides what is stored, and the stored rows are exactly the published ones.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from django.conf import settings

from .engine import KAnonymity, Role, out_of_core
from .engine.pipeline import run
from .engine.privacy import make_model
from .engine.spec import RunSpec, StreamedTable
from .models import Dataset, Job, Result


def job_models(job: Job) -> list:
    """The job's stored privacy models (k-anonymity added from ``job.k`` by RunSpec.build)."""
    out = []
    for spec in job.models or []:
        params = {key: value for key, value in spec.items() if key != "model"}
        out.append(make_model(spec.get("model", ""), **params))
    return out


def job_spec(job: Job, algorithm: str | None = None, options: dict | None = None, streamed: bool = False) -> RunSpec:
    """The RunSpec of a job (or of the same setup with another algorithm, e.g. a lattice node)."""
    from . import services

    config = job.config
    hierarchies = services.hierarchies_from_config(job.owner, config, job.models)
    build = dict(algorithm=algorithm or job.algorithm, k=job.k, models=job_models(job),
                 options=job.options if options is None else options, suppression_limit=job.suppression_limit,
                 sensitive=job.sensitive or None,
                 suppressed_rows=(job.options or {}).get("suppressed_rows", "remove") if options is None
                 else options.get("suppressed_rows", "remove"))
    build["options"] = {k: v for k, v in build["options"].items() if k != "suppressed_rows"}
    if config.get("population"):
        population = Dataset.objects.get(pk=config["population"]["dataset"], owner=job.owner)
        marked, _ = services.match_research(services.load_frame(job.dataset), services.load_frame(population),
                                            services.RESEARCH_MARKER, f"population {population.name}")
        table = services.table_from_config(marked, config, population.name)
        return RunSpec.build(table, hierarchies, **build)
    if streamed:
        source = services._stored_table(job.dataset)

        def chunks():
            pf = pq.ParquetFile(source)
            for batch in pf.iter_batches(batch_size=services.ROW_GROUP):
                yield services._to_frame(pa.Table.from_batches([batch]))

        roles = {c["name"]: Role(c["role"]) for c in config["columns"]}
        types = {c["name"]: c["type"] for c in config["columns"]}
        return RunSpec.build(StreamedTable(chunks, roles, types, job.dataset.name), hierarchies, **build)
    table = services.table_from_config(services.load_frame(job.dataset), config, job.dataset.name)
    return RunSpec.build(table, hierarchies, **build)


class ParquetSink:
    """The stored result: published rows as strings plus the suppression flag, a row group at a time."""

    def __init__(self, out, display_rows: np.ndarray | None = None):
        self.out = out
        self.display_rows = display_rows  # input row -> row of the job's dataset (population runs)

    def write(self, frame: pd.DataFrame, suppressed: np.ndarray, rows: np.ndarray) -> None:
        from . import services

        shown = rows if self.display_rows is None else self.display_rows[rows]
        self.out.write(services.output_table(frame, suppressed, shown))


def result_path(job: Job) -> Path:
    return Path(settings.MEDIA_ROOT) / "results" / f"job-{job.pk}.parquet"


def run_and_store(job: Job, progress) -> Result:
    """Run the job's spec through the pipeline; the published rows and the report become its Result."""
    from . import services

    streamed = not job.config.get("population") and out_of_core.supports(
        job.algorithm, [KAnonymity(job.k), *job_models(job)])
    spec = job_spec(job, streamed=streamed)
    target = result_path(job)
    display = None
    if job.config.get("population"):  # the page shows the research dataset's row beside each published row
        population = Dataset.objects.get(pk=job.config["population"]["dataset"], owner=job.owner)
        _, positions = services.match_research(services.load_frame(job.dataset), services.load_frame(population),
                                               services.RESEARCH_MARKER)
        display = np.full(population.n_rows, -1, dtype=np.int64)
        display[positions] = np.arange(len(positions))
    with services.AtomicParquet(target) as out:
        publication = run(spec, progress, ParquetSink(out, display))
        out.commit()
    st = publication.tables.get("st")
    if st is not None:  # Anatomy: the sensitive table beside the QIT
        pq.write_table(pa.Table.from_arrays([pa.array(st[c].astype(str).to_numpy(dtype=object), type=pa.string())
                                             for c in st.columns], names=[str(c) for c in st.columns]),
                       services.sensitive_table_path(target), compression="zstd")
    report = dict(publication.report)
    if job.config.get("population"):
        report["research_subset"] = dict(report.get("research_subset", {}),
                                         population=job.config["population"]["name"])
    record = Result(job=job, report=json.loads(json.dumps(report, default=_json_default)))
    record.output.name = str(target.relative_to(settings.MEDIA_ROOT))
    record.save()
    return record


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return None if math.isnan(o) else float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    raise TypeError(type(o).__name__)
