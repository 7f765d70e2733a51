"""The seed-001 experiment: homogeneous equivalence classes against k, on generated people tables of the
given sizes (seeded) and/or the job's dataset, anonymized once per k; a job of kind "experiment"."""

from __future__ import annotations

import csv
import io
import json

from .. import engine
from ..engine import InputError, Role
from ..engine.measure import experiments
from ..engine.model.persons import Persons
from ..engine.run import stages
from ..models import Dataset, Job
from ..plotly_text import plotly_escape
from . import comparison, datasets, results, storage
from .job_support import Progress, register

EXPERIMENT = "homogeneity-experiment"  # Job.algorithm of an experiment (kept for older rows)
EXPERIMENT_MAX_ROWS = 1_000_000
EXPERIMENT_FIELDS = ["table", "rows", "k", "algorithm", "equivalence_classes", "homogeneous_classes",
                     "homogeneous_records", "homogeneous_share", "k_reached", "suppressed", "transformation",
                     "seconds",
                     # with a person id the runs count persons: k_reached is then in persons (k_reached_records
                     # beside it) and homogeneous_persons the distinct persons with a record in a homogeneous class
                     "counted", "persons", "homogeneous_persons", "k_reached_records"]


def parse_size_list(text: str) -> list[int]:
    """'10,000, 50000' -> [10000, 50000]: generated table sizes (commas, spaces or _ as thousands marks
    inside a number are not allowed: sizes are separated by commas)."""
    sizes = []
    for part in str(text).split(","):
        part = part.strip().replace("_", "").replace(" ", "")
        if not part:
            continue
        try:
            n = int(part)
        except ValueError:
            raise InputError(f"table sizes must be whole numbers separated by commas, got {part!r}") from None
        if n < 1 or n > EXPERIMENT_MAX_ROWS:
            raise InputError(f"a generated table has 1 to {EXPERIMENT_MAX_ROWS:,} rows, got {n:,}")
        if n not in sizes:
            sizes.append(n)
    return sizes


def create_experiment(dataset: Dataset, sizes, seed: int, include_dataset: bool, ks, algorithm: str,
                      suppression_limit: float = 0.0, sensitive: str = "") -> Job:
    """The seed-001 experiment as a Job (kind "experiment") started from ``dataset``: generated people
    tables of the given sizes (seeded) and/or the dataset itself, anonymized once per k."""
    sizes = parse_size_list(",".join(map(str, sizes)) if not isinstance(sizes, str) else sizes)
    ks = comparison.parse_k_list(",".join(map(str, ks)) if not isinstance(ks, str) else ks)
    engine.get_algorithm(algorithm)
    stages.SUPPRESSION.validate(suppression_limit)
    if int(seed) < 0:
        raise InputError(f"the seed must be 0 or more, got {seed}")
    if not sizes and not include_dataset:
        raise InputError("choose at least one table: a generated size or this dataset")
    if sizes:
        experiments.people_hierarchies()  # the demo hierarchy files are there (InputError otherwise)
    too_big = [(k, n) for n in sizes for k in ks if k > n]
    if too_big:
        raise InputError(f"k={too_big[0][0]} is larger than the generated table of {too_big[0][1]:,} rows")
    if include_dataset:
        if not dataset.qi_columns.exists():
            raise InputError("no quasi-identifier in this dataset: mark at least one column as quasi-identifying")
        names = [c.name for c in dataset.columns.filter(role=Role.SENSITIVE.value)]
        if sensitive and sensitive not in names:
            raise InputError(f"{sensitive!r} is not a sensitive column of this dataset")
        if not names:
            raise InputError("the homogeneity count needs a sensitive column in this dataset: mark one on the "
                             "columns page")
        sensitive = sensitive or names[0]
        big = [k for k in ks if k > dataset.n_rows]
        if big:
            raise InputError(f"k={big[0]} is larger than the dataset's {dataset.n_rows} records")
        _check_persons(dataset, ks, algorithm)
    return Job.objects.create(owner=dataset.owner, dataset=dataset, kind=Job.EXPERIMENT, algorithm=EXPERIMENT,
                              k=min(ks), suppression_limit=suppression_limit,
                              sensitive=sensitive if include_dataset else "",
                              options={"sizes": sizes, "seed": int(seed), "include_dataset": bool(include_dataset),
                                       "k": ks, "algorithm": algorithm},
                              config=datasets.dataset_config(dataset))


def _check_persons(dataset: Dataset, ks: list[int], algorithm: str) -> None:
    """With a person id the dataset's runs count persons (against the adversary who knows one class, as a run's
    default): an algorithm that counts records is refused by name, and k above the persons is named now."""
    person = dataset.columns.filter(role=Role.PERSON.value).first()
    if person is None:
        return
    engine.algorithms.check_person_level(engine.get_algorithm(algorithm), True)
    count = Persons.of(datasets.load_frame(dataset, columns=[person.name])[person.name], person.name).count
    big = [k for k in ks if k > count]
    if big:
        raise InputError(f"k={big[0]} is larger than the dataset's {count:,} persons (person id {person.name!r})")


def experiment_tables(job: Job):
    """(label, engine Table, hierarchies, sensitive) of each table of an experiment job, made lazily."""
    opts = job.options
    for n in opts.get("sizes", []):
        def make(n=n):
            frame = experiments.generate_people(n, opts.get("seed", 0))
            return experiments.people_table(frame), experiments.people_hierarchies(), experiments.SENSITIVE
        yield f"people, {n:,} rows (seed {opts.get('seed', 0)})", make
    if opts.get("include_dataset"):
        def mine():
            table = datasets.table_from_config(datasets.load_frame(job.dataset, dictionary=True), job.config,
                                               job.dataset.name)
            return table, datasets.hierarchies_from_config(job.owner, job.config), job.sensitive or None
        yield job.dataset.name, mine


def run_experiment(job: Job) -> None:
    progress = Progress(job)
    tables = list(experiment_tables(job))
    ks = job.options["k"]
    algorithm = job.options["algorithm"]
    total = len(tables) * len(ks)
    rows = []
    for i, (label, make) in enumerate(tables):
        if not progress(i * len(ks) / total, f"{label}: preparing the table"):
            raise engine.Cancelled("cancelled")
        table, hierarchies, sensitive = make()
        for j, k in enumerate(ks):
            if not progress((i * len(ks) + j) / total, f"{label}: {algorithm}, k={k}"):
                raise engine.Cancelled("cancelled")
            row = experiments.homogeneity_vs_k(table, hierarchies, [k], algorithm, job.suppression_limit,
                                               sensitive, scratch=storage.scratch_of(job))[0]
            rows.append({"table": label, **row})
    progress(1.0, "done")
    results.store(job, {"experiment": rows})


def experiment_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, EXPERIMENT_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({f: row.get(f, "") for f in EXPERIMENT_FIELDS})
    return buf.getvalue()


def experiment_figure(rows: list[dict]) -> dict:
    """Plotly figure (as a dict): homogeneous ECs against k, one line per table."""
    import plotly.graph_objects as go

    ks = sorted({r["k"] for r in rows})
    traces = []
    for label in dict.fromkeys(r["table"] for r in rows):
        mine = sorted((r for r in rows if r["table"] == label), key=lambda r: r["k"])
        traces.append(go.Scatter(
            # the table's label holds the dataset name: escaped for plotly, and kept out of the template
            x=[r["k"] for r in mine], y=[r["homogeneous_classes"] for r in mine], mode="lines+markers",
            name=plotly_escape(label),
            customdata=[[r["equivalence_classes"], r["homogeneous_records"]] for r in mine],
            hovertemplate="%{fullData.name}, k=%{x}: %{y} homogeneous of %{customdata[0]} ECs, "
                          "%{customdata[1]} records<extra></extra>"))
    layout = dict(template="none", paper_bgcolor="#ffffff", plot_bgcolor="#ffffff", height=380,
                  margin=dict(l=70, r=20, t=40, b=50),
                  title=dict(text="Homogeneous equivalence classes against k", font=dict(size=14)),
                  legend=dict(orientation="h", y=-0.2),
                  xaxis=dict(title=dict(text="k"), type="log", tickvals=ks, ticktext=[str(k) for k in ks],
                             gridcolor="#e6ebf1", automargin=True),
                  yaxis=dict(title=dict(text="homogeneous ECs"), gridcolor="#e6ebf1", automargin=True))
    return json.loads(go.Figure(data=traces, layout=layout).to_json())


register(Job.EXPERIMENT, run_experiment)
