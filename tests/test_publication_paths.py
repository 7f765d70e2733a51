"""One specification, four ways in, one publication: the web job (its CSV download), the CLI (`manage.py
anonymize` with --out and --report), the engine API (pipeline.run with an in-memory sink) and, for the disk
hybrid, the out-of-core path (the web job and the CLI stream the table; the engine is run both streamed and
in memory) must publish byte-identical tables and equal reports.

Every path writes its rows with the one CSV writer of the product (services.exports.export_csv: formulas
neutralized, the input's delimiter): the download and the CLI's CsvSink use it, the engine path's rows are
written with it here, so the bytes are compared directly. The reports are compared whole, after removing
only the timing fields (TIMING_FIELDS).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pytest
from anonymizer_helpers import PEOPLE_CSV
from django.core.management import call_command

from anonymizer_app import engine
from anonymizer_app.engine import Role
from anonymizer_app.engine.privacy import make_model
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec, StreamedTable
from anonymizer_app.models import Job
from anonymizer_app.services import datasets, exports, jobs, results
from anonymizer_app.services.population import RESEARCH_MARKER
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

# The only report fields that may differ between two runs of one specification: wall-clock time (the run's,
# and the lattice search's of Flash, Incognito, Samarati, the exhaustive search, full-domain, k-Optimize).
TIMING_FIELDS = (("seconds",), ("search", "search_seconds"))

ADULT_QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
PEOPLE = PEOPLE_CSV.parent
PEOPLE_HIERARCHIES = {"age": "first", "city_birth": "lift", "zip_code": "error"}  # the demo's conflict policies


@dataclass(frozen=True)
class Source:
    """An input file, its columns' roles and its hierarchy files (with their conflict policies)."""

    csv: Path
    roles: dict[str, Role]
    hierarchies: dict[str, tuple[Path, str]]

    def cli_args(self) -> list[str]:
        args = []
        for column, role in self.roles.items():
            flag = {Role.QUASI_IDENTIFYING: "--qi", Role.SENSITIVE: "--sensitive", Role.IDENTIFYING: "--identifier"}
            args += [flag[role], column]
        for column, (path, policy) in self.hierarchies.items():
            args += ["--hierarchy", f"{column}={path}", "--hierarchy-conflicts", f"{column}={policy}"]
        return args


def adult(root: Path) -> Source:
    folder = root / "adult"
    roles = {c: Role.QUASI_IDENTIFYING for c in ADULT_QI} | {"occupation": Role.SENSITIVE}
    return Source(folder / "adult.csv", roles,
                  {c: (folder / f"adult_hierarchy_{c}.csv", "error") for c in ADULT_QI})


def people(root: Path) -> Source:
    roles = {"id": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "city_birth": Role.QUASI_IDENTIFYING,
             "zip_code": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}
    return Source(PEOPLE_CSV, roles,
                  {c: (PEOPLE / f"{c}_generalization.csv", p) for c, p in PEOPLE_HIERARCHIES.items()})


@dataclass(frozen=True)
class Case:
    """One specification as each path takes it: the job's stored models and options, the CLI's flags."""

    name: str
    source: Callable[[Path], Source]  # the datasets folder (demo_datasets) -> the input
    algorithm: str
    k: int
    suppression: float = 0.0
    sensitive: str = ""
    models: tuple[dict, ...] = ()  # as stored on a job (PrivacyModel.to_dict)
    options: dict = field(default_factory=dict)
    cli: tuple[str, ...] = ()  # the model and algorithm-option flags of the same run
    research: tuple[int, ...] | None = None  # δ-presence: the population rows of the research subset
    suppressed_rows: str = "remove"  # or "keep": suppressed records published as '*' rows


RESEARCH_ROWS = tuple(range(0, 100, 3))  # 34 of the 100 people

CASES = [
    Case("adult-flash-k5-distinct-3-diversity", adult, "flash", 5, 0.04, "occupation",
         ({"model": "distinct-l-diversity", "l": 3, "column": "occupation"},),
         cli=("--l", "3", "--l-variant", "distinct")),
    Case("people-datafly-k3-0.2-closeness", people, "datafly", 3, 0.0, "disease",
         ({"model": "t-closeness", "t": 0.2, "distance": "equal", "column": "disease"},),
         cli=("--t", "0.2", "--t-distance", "equal")),
    Case("adult-datafly-k5-suppressed-rows-kept", adult, "datafly", 5, 0.04, "occupation",
         suppressed_rows="keep"),
    # Mondrian's cells differ record by record (local recoding); relaxed: one QI tuple's records may be split
    Case("adult-mondrian-relaxed-k5", adult, "mondrian", 5, 0.0, "occupation", options={"variant": "relaxed"},
         cli=("--variant", "relaxed")),
    Case("adult-disk-hybrid-k5-out-of-core", adult, "disk-clustering", 5, 0.0, "occupation",
         options={"memory_mb": 1}, cli=("--memory-mb", "1")),
    Case("people-datafly-k2-delta-presence", people, "datafly", 2, 0.05, "disease",
         ({"model": "delta-presence", "delta_min": 0.0, "delta_max": 0.6, "column": RESEARCH_MARKER},),
         cli=("--delta-min", "0.0", "--delta-max", "0.6"), research=RESEARCH_ROWS),
]


# ---- the three paths --------------------------------------------------------------------------------------
def research_file(source: Source, rows: tuple[int, ...], folder: Path) -> Path:
    """The research subset as a file of its own: the chosen population rows, byte for byte."""
    lines = source.csv.read_text(encoding="utf-8").splitlines(keepends=True)
    path = folder / "research.csv"
    path.write_text("".join([lines[0], *(lines[1 + i] for i in rows)]), encoding="utf-8")
    return path


def upload(owner, path: Path, source: Source, name: str):
    """A dataset created as an upload is, with the roles and bound hierarchies of ``source``."""
    dataset = datasets.create_dataset(owner, path.read_bytes(), path.name, name=name)
    for column in dataset.columns.all():
        column.role = source.roles.get(column.name, Role.INSENSITIVE).value
        if column.name in source.hierarchies:
            file, policy = source.hierarchies[column.name]
            h = Hierarchy.from_text(owner, f"{column.name} hierarchy", file.read_text(encoding="utf-8"), file.name,
                                    on_conflict=policy)
            h.save()
            column.hierarchy = h
        column.save()
    return dataset


def through_the_web(client, owner, case: Case, source: Source, work: Path) -> tuple[bytes, dict, Job]:
    """Create the dataset(s) and the job through the services the views use, run it as the worker does,
    download the CSV through the download view."""
    population = None
    if case.research is not None:
        population = upload(owner, source.csv, source, "Population")
        dataset = upload(owner, research_file(source, case.research, work), source, "Study")
    else:
        dataset = upload(owner, source.csv, source, source.csv.stem)
    options = dict(case.options, **({"suppressed_rows": "keep"} if case.suppressed_rows == "keep" else {}))
    job = jobs.create_job(dataset, case.algorithm, case.k, case.suppression, case.sensitive,
                          options=options, models=[dict(m) for m in case.models], population=population)
    job = jobs.run_job(job)
    assert job.status == Job.SUCCEEDED, job.message
    response = client.get(f"/jobs/{job.pk}/result/anonymized.csv")
    assert response.status_code == 200
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return body, job.result.report, job


def through_the_cli(case: Case, source: Source, work: Path) -> tuple[bytes, dict]:
    out, report = work / "cli.csv", work / "cli.json"
    if case.research is not None:  # INPUT is the research subset, --population the whole table
        args = [research_file(source, case.research, work), "--population", source.csv]
    else:
        args = [source.csv]
    args += [*source.cli_args(), "--algorithm", case.algorithm, "--k", str(case.k),
             "--suppression", str(case.suppression), "--suppressed-rows", case.suppressed_rows, *case.cli,
             "--out", out, "--report", report, "--quiet"]
    call_command("anonymize", *map(str, args), stdout=io.StringIO(), stderr=io.StringIO())
    return out.read_bytes(), json.loads(report.read_text(encoding="utf-8"))


class FrameSink:
    """The engine API's in-memory sink: the published chunks, in order, with their flags and input rows."""

    def __init__(self):
        self.frames: list[pd.DataFrame] = []
        self.suppressed: list[np.ndarray] = []
        self.rows: list[np.ndarray] = []

    def write(self, frame: pd.DataFrame, suppressed: np.ndarray, rows: np.ndarray) -> None:
        self.frames.append(frame)
        self.suppressed.append(np.asarray(suppressed, dtype=bool))
        self.rows.append(np.asarray(rows, dtype=np.int64))

    def csv(self, delimiter: str) -> bytes:
        return exports.export_csv(pd.concat(self.frames, ignore_index=True), delimiter).encode("utf-8")


def engine_spec(case: Case, source: Source) -> tuple[RunSpec, str]:
    """The spec built with the engine alone (engine.read_table, Table, read_hierarchy, make_model) and the
    input's delimiter."""
    frame, fmt = engine.read_table(source.csv)
    if case.research is not None:  # δ-presence: the population with the research records marked
        marker = np.zeros(len(frame), dtype=bool)
        marker[list(case.research)] = True
        frame[RESEARCH_MARKER] = np.where(marker, "1", "0")
    hierarchies = {c: engine.read_hierarchy(path, c, on_conflict=policy)
                   for c, (path, policy) in source.hierarchies.items()}
    models = [make_model(m["model"], **{k: v for k, v in m.items() if k != "model"}) for m in case.models]
    table = engine.Table(frame, dict(source.roles), name=source.csv.stem)
    spec = RunSpec.build(table, hierarchies, case.algorithm, k=case.k, models=models, options=dict(case.options),
                         suppression_limit=case.suppression, sensitive=case.sensitive or None,
                         suppressed_rows=case.suppressed_rows)
    return spec, fmt.delimiter


def streamed(spec: RunSpec, rows: int = 4096) -> RunSpec:
    """The same spec with its table read as chunks (the out-of-core path)."""
    table = spec.table
    frame = table.frame

    def chunks():
        for start in range(0, len(frame), rows):
            yield frame.iloc[start:start + rows]

    return replace(spec, table=StreamedTable(chunks, dict(table.roles), dict(table.types), table.name))


def through_the_engine(spec: RunSpec, delimiter: str) -> tuple[bytes, dict, FrameSink]:
    sink = FrameSink()
    publication = pipeline.run(spec, sink=sink)
    return sink.csv(delimiter), publication.report, sink


# ---- the comparison ---------------------------------------------------------------------------------------
def without(report: dict, paths) -> dict:
    """A copy of ``report`` without the fields at ``paths`` (each a tuple of keys)."""
    out = json.loads(json.dumps(report))
    for path in paths:
        holder = out
        for key in path[:-1]:
            holder = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(holder, dict):
            holder.pop(path[-1], None)
    return out


def first_difference(a, b, path: str = "report") -> str:
    """Where two JSON values first differ (a readable assertion message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}: only in the {'first' if key in a else 'second'}"
            if a[key] != b[key]:
                return first_difference(a[key], b[key], f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path}: {a!r} != {b!r}"


def assert_same_report(a: dict, b: dict, label: str, also_apart=()) -> None:
    a, b = without(a, TIMING_FIELDS + tuple(also_apart)), without(b, TIMING_FIELDS + tuple(also_apart))
    assert a == b, f"{label}: {first_difference(a, b)}"


def first_different_line(a: bytes, b: bytes) -> str:
    for i, (x, y) in enumerate(zip(a.split(b"\n"), b.split(b"\n")), start=1):
        if x != y:
            return f"line {i}: {x!r} != {y!r}"
    return f"{len(a)} bytes != {len(b)} bytes"


# A population job's report names the population dataset (services/runs.py): a dataset of the owner,
# which the CLI (--population is a file) and the engine (its table is the population) do not have.
WEB_ONLY = (("research_subset", "population"),)

# The disk hybrid in memory and out of core publish the same rows; their reports differ only where they
# describe how the run went or break ties their own way (tests/engine/test_pipeline_backends.py):
BACKEND_APART = (
    ("notes",),  # the streamed run says how many buckets it streamed
    ("search", "out_of_core"), ("search", "partitions"),  # the streamed run's own figures
    ("attack",),  # example classes named by number; among classes of equal risk each backend picks its own
    ("value_counts",),  # values of equal count in another order (the counts are compared below)
)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_path_publishes_the_same_table_and_report(case, client_alice, user, demo_datasets, tmp_path):
    source = case.source(demo_datasets)
    web_csv, web_report, job = through_the_web(client_alice, user, case, source, tmp_path)
    cli_csv, cli_report = through_the_cli(case, source, tmp_path)
    spec, delimiter = engine_spec(case, source)
    out_of_core = pipeline.runs_out_of_core(spec)  # the web job and the CLI stream such a run
    api_csv, api_report, api_sink = through_the_engine(streamed(spec) if out_of_core else spec, delimiter)

    assert web_csv == cli_csv, f"web download vs CLI: {first_different_line(web_csv, cli_csv)}"
    assert api_csv == cli_csv, f"engine vs CLI: {first_different_line(api_csv, cli_csv)}"
    if case.research is not None:
        assert web_report["research_subset"]["population"] == "Population"
    assert_same_report(web_report, cli_report, "web job vs CLI", WEB_ONLY)
    assert_same_report(api_report, cli_report, "engine vs CLI")
    assert cli_report["verified"] is True and cli_report["records"] == cli_csv.count(b"\n") - 1
    assert cli_report["search"].get("out_of_core", False) is out_of_core
    if case.suppressed_rows == "keep":
        assert cli_report["publishing"]["suppressed_published"] == cli_report["suppressed"] > 0

    # the stored Parquet beside the download: each published row's suppression flag and its dataset row (with
    # δ-presence the research dataset's row: the research subset holds the population rows RESEARCH_ROWS)
    stored_frame, stored_flags = results.load_output(job.result)
    stored = stored_frame.attrs["rows"]
    input_rows = np.concatenate(api_sink.rows)
    expected = input_rows if case.research is None else np.searchsorted(case.research, input_rows)
    assert np.array_equal(stored, expected)
    assert np.array_equal(stored_flags, np.concatenate(api_sink.suppressed))

    if out_of_core:  # the same spec in memory: the same bytes, the same report but for BACKEND_APART
        memory_csv, memory_report, _ = through_the_engine(spec, delimiter)
        assert memory_csv == cli_csv, f"in memory vs out of core: {first_different_line(memory_csv, cli_csv)}"
        assert_same_report(memory_report, cli_report, "in memory vs out of core", BACKEND_APART)
        for column, sides in memory_report["value_counts"].items():
            for side, counted in sides.items():
                streamed_counts = cli_report["value_counts"][column][side]
                assert {k: counted[k] for k in ("counts", "distinct", "rows")} == \
                    {k: streamed_counts[k] for k in ("counts", "distinct", "rows")}, (column, side)
