"""What views, Celery tasks and management commands do with the database, on top of the engine.

Kept apart from views so that the web app, the worker and the CLI share one code path.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import time
import uuid
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from django.conf import settings
from django.core.files.base import ContentFile, File
from django.db import transaction
from django.utils import timezone

from . import engine
from .engine import Format, InputError, Role, Table, out_of_core
from .engine import reader as reader_mod
from .models import Column, Dataset, Job, Result

SUPPRESSED_COLUMN = "__suppressed__"
ROW_COLUMN = "__row__"  # stored beside the published rows: the dataset row each one comes from (never exported)
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


# ---- datasets ---------------------------------------------------------------------------------
# Tables are parsed once and stored as Parquet (one string column per table column, row groups of
# ROW_GROUP rows): pages read only the row groups they show, charts only the columns they draw.
ROW_GROUP = 32_768
# Files up to this size are parsed in one piece by the engine's reader; larger text files are read
# in blocks of STREAM_BLOCK bytes and written to Parquet block by block, never whole in memory.
STREAM_THRESHOLD = 32 * 1024 * 1024
STREAM_BLOCK = 16 * 1024 * 1024
SNIFF_BYTES = 65537


def _limits() -> dict:
    return {"max_rows": settings.ANONYMIZER_MAX_ROWS, "max_columns": settings.ANONYMIZER_MAX_COLUMNS}


def read_upload(raw: bytes, filename: str, fmt: Format | None = None) -> tuple[pd.DataFrame, Format]:
    """Parse uploaded bytes under the configured limits; errors name the file and line."""
    limit = settings.ANONYMIZER_MAX_UPLOAD_MB * 1024 * 1024
    if len(raw) > limit:
        raise InputError(f"{filename}: {len(raw) / 1048576:.1f} MB, more than the limit of "
                         f"{settings.ANONYMIZER_MAX_UPLOAD_MB} MB")
    return engine.read_table(raw, filename, fmt, **_limits())


def sniff_file(path: Path, filename: str) -> Format:
    """The format from the first bytes of the file only."""
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
    return engine.sniff(head, filename)


def iter_table_file(path: str | Path, filename: str | None = None, fmt: Format | None = None,
                    max_rows: int | None = None, max_columns: int | None = None,
                    block_bytes: int | None = None):
    """Parse a table file from its path; yields (frame, format) pieces in row order.

    Small files and workbooks: one piece from engine.read_table. Larger text files: blocks of
    ``block_bytes`` cut at a line end (unquoted, ASCII-compatible encodings) or pandas chunks
    (quoted fields may hold line breaks), each checked like the engine's reader (same field-count
    messages, with the line numbers of the whole file)."""
    path = Path(path)
    filename = filename or path.name
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"{path}: cannot read the file ({exc.strerror})") from None
    fmt = fmt or sniff_file(path, filename)
    if fmt.kind == "xlsx" or size <= STREAM_THRESHOLD:
        frame, fmt = engine.read_table(path.read_bytes(), filename, fmt, max_rows=max_rows, max_columns=max_columns)
        yield frame, fmt
        return
    block_bytes = block_bytes or STREAM_BLOCK
    if _has_quote(path) or not reader_mod._ascii_compatible(fmt.encoding):
        pieces = _iter_quoted(path, filename, fmt, block_bytes)
    else:
        pieces = _iter_blocks(path, filename, fmt, block_bytes)
    rows = 0
    for frame in pieces:
        if max_columns is not None and frame.shape[1] > max_columns:
            raise InputError(f"{filename}: {frame.shape[1]} columns, more than the limit of {max_columns}")
        rows += len(frame)
        if max_rows is not None and rows > max_rows:
            raise InputError(f"{filename}: more than the limit of {max_rows:,} rows")
        yield frame, fmt
    if rows == 0:
        raise InputError(f"{filename}: no data rows")


def _has_quote(path: Path) -> bool:
    with open(path, "rb") as fh:
        while chunk := fh.read(STREAM_BLOCK):
            if b'"' in chunk:
                return True
    return False


def _renumber(exc: InputError, offset: int) -> InputError:
    text = re.sub(r", line (\d+):", lambda m: f", line {int(m.group(1)) + offset}:", str(exc), count=1)
    return InputError(text)


def _iter_blocks(path: Path, filename: str, fmt: Format, block_bytes: int):
    """Unquoted text: blocks cut after a newline, parsed by the engine's reader one by one."""
    names, width, line_offset = None, 0, 0
    rest = b""
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(block_bytes)
            data = rest + chunk
            if not chunk:
                block, rest = data, b""
            else:
                cut = data.rfind(b"\n")
                if cut < 0:
                    rest = data
                    continue
                block, rest = data[:cut + 1], data[cut + 1:]
            if block.strip():
                first = names is None
                piece_fmt = fmt if first else replace(fmt, header=False)
                try:
                    frame = reader_mod._read_csv(block, filename, piece_fmt, None)
                except InputError as exc:
                    raise _renumber(exc, line_offset) from None
                if first:
                    names, width = list(frame.columns), frame.shape[1]
                elif frame.shape[1] != width:
                    raise InputError(f"{filename}, line {line_offset + 1}: {frame.shape[1]} field(s) where the "
                                     f"first line has {width}")
                else:
                    frame.columns = names
                yield frame
            line_offset += block.count(b"\n")
            if not chunk:
                break


def _iter_quoted(path: Path, filename: str, fmt: Format, block_bytes: int):
    """Quoted fields or a wide encoding: one streaming pass of csv.reader checks the field counts,
    then pandas parses the file in chunks of rows."""
    with open(path, encoding=fmt.encoding, newline="", errors="strict") as fh:
        bom = fh.read(1)
        if bom != "\ufeff":
            fh.seek(0)
        rows = csv.reader(fh, delimiter=fmt.delimiter)
        try:
            header = next(rows)
            width = len(header)
            for row in rows:
                if row and len(row) != width:
                    raise InputError(f"{filename}, line {rows.line_num}: {len(row)} field(s) where the first "
                                     f"line has {width}")
        except StopIteration:
            raise InputError(f"{filename}: the file is empty") from None
        except csv.Error as exc:
            raise InputError(f"{filename}, line {rows.line_num}: {exc}") from None
        except UnicodeError as exc:
            raise InputError(f"{filename}: cannot be decoded as {fmt.encoding} ({exc})") from None
    names = reader_mod._names(header, filename) if fmt.header else [f"column_{i + 1}" for i in range(width)]
    chunk_rows = max(1000, block_bytes // max(1, 8 * width))
    reader = pd.read_csv(path, sep=fmt.delimiter, header=0 if fmt.header else None, dtype=str,
                         keep_default_na=False, na_filter=False, skip_blank_lines=True, names=range(width),
                         encoding=fmt.encoding, engine="c", chunksize=chunk_rows)
    try:
        for frame in reader:
            frame.columns = names
            yield frame
    except pd.errors.ParserError as exc:
        raise InputError(f"{filename}: cannot be parsed as a delimited table ({exc})") from None


def _schema(columns) -> pa.Schema:
    return pa.schema([(str(c), pa.string()) for c in columns])


def _arrow(frame: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    return pa.Table.from_arrays(
        [pa.array(frame[c].to_numpy(dtype=object), type=pa.string()) for c in frame.columns], schema=schema)


class AtomicParquet:
    """A Parquet file written a table at a time under a temporary name and renamed into place by
    commit(); leaving the ``with`` block without commit() removes the temporary file."""

    def __init__(self, target: Path):
        target.parent.mkdir(parents=True, exist_ok=True)
        self.target = target
        self.tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        self.writer: pq.ParquetWriter | None = None

    def __enter__(self) -> "AtomicParquet":
        return self

    def write(self, table: pa.Table) -> None:
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.tmp, table.schema, compression="zstd")
        self.writer.write_table(table, row_group_size=ROW_GROUP)

    def commit(self, empty_schema: pa.Schema | None = None) -> None:
        """Close and rename; with nothing written, an empty file of ``empty_schema``."""
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.tmp, empty_schema, compression="zstd")
        self.writer.close()
        self.writer = None
        self.tmp.replace(self.target)

    def __exit__(self, *exc) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.tmp.exists():
            self.tmp.unlink()


def write_parquet(pieces, target: Path, extra: dict | None = None) -> tuple[Format | None, int, list[str]]:
    """Write (frame, format) pieces to ``target`` atomically; returns the format, rows and columns."""
    fmt, rows, columns = None, 0, []
    with AtomicParquet(target) as out:
        for frame, piece_fmt in pieces:
            fmt = piece_fmt
            if not columns:
                columns = [str(c) for c in frame.columns]
            out.write(_arrow(frame, _schema(columns)))
            rows += len(frame)
        out.commit(_schema(columns))
    return fmt, rows, columns


def table_path(dataset: Dataset) -> Path:
    return Path(settings.MEDIA_ROOT) / "tables" / f"dataset-{dataset.pk}.parquet"


def create_dataset(owner, source, filename: str, name: str | None = None, fmt: Format | None = None,
                   is_demo: bool = False) -> Dataset:
    """Store the original upload untouched, parse it from disk into Parquet, describe every column.

    ``source`` is bytes, a Django File (an upload: a temporary file is moved, not read) or a path."""
    if isinstance(source, (bytes, bytearray)):
        source = ContentFile(bytes(source))
    elif isinstance(source, (str, Path)):
        source = File(open(source, "rb"))
    size = source.size
    limit = settings.ANONYMIZER_MAX_UPLOAD_MB * 1024 * 1024
    if size > limit:
        raise InputError(f"{filename}: {size / 1048576:.1f} MB, more than the limit of "
                         f"{settings.ANONYMIZER_MAX_UPLOAD_MB} MB")
    dataset = Dataset(owner=owner, name=name or Path(filename).stem, original_name=filename, size_bytes=size,
                      is_demo=is_demo)
    dataset.original.save(Path(filename).name, source, save=False)
    staging = Path(settings.MEDIA_ROOT) / "tables" / f"staging-{uuid.uuid4().hex}.parquet"
    try:
        fmt, n_rows, columns = write_parquet(
            iter_table_file(dataset.original.path, filename, fmt, **_limits()), staging)
        with transaction.atomic():
            _apply_format(dataset, fmt, n_rows, len(columns))
            dataset.save()
            _describe_columns(dataset, staging)
        staging.replace(table_path(dataset))
    except BaseException:
        dataset.original.delete(save=False)
        if staging.exists():
            staging.unlink()
        raise
    return dataset


def reformat_dataset(dataset: Dataset, fmt: Format) -> Dataset:
    """Re-read the original with user-chosen delimiter/encoding/header; columns are described anew."""
    staging = table_path(dataset).with_suffix(".staging")
    try:
        fmt, n_rows, columns = write_parquet(
            iter_table_file(dataset.original.path, dataset.original_name, fmt, **_limits()), staging)
        with transaction.atomic():
            _apply_format(dataset, fmt, n_rows, len(columns))
            dataset.save()
            dataset.columns.all().delete()
            _describe_columns(dataset, staging)
        staging.replace(table_path(dataset))
    finally:
        if staging.exists():
            staging.unlink()
    return dataset


def _apply_format(dataset: Dataset, fmt: Format, n_rows: int, n_columns: int) -> None:
    dataset.kind, dataset.delimiter, dataset.encoding, dataset.has_header = (
        fmt.kind, fmt.delimiter, fmt.encoding, fmt.header)
    dataset.n_rows, dataset.n_columns = n_rows, n_columns


DISTINCT_SLICE = 200_000


def column_distinct(path: Path, column: str) -> pa.Array:
    """The distinct values of one stored column, in order of first appearance: a row group at a time,
    so memory follows the distinct values, not the rows."""
    pf = pq.ParquetFile(path)
    seen: list[pa.Array] = []
    for g in range(pf.metadata.num_row_groups):
        seen.append(pc.unique(pf.read_row_group(g, columns=[column]).column(0)))
        if len(seen) > 64:
            seen = [pc.unique(pa.chunked_array(seen))]
    if not seen:
        return pa.array([], type=pa.string())
    return pc.unique(pa.chunked_array(seen))


def _infer_type(distinct: pa.Array) -> str:
    """engine.infer_type over the distinct values, a slice at a time (bounded memory for id columns)."""
    found = set()
    for i in range(0, len(distinct), DISTINCT_SLICE):
        values = pd.Series(distinct.slice(i, DISTINCT_SLICE).to_pylist(), dtype=object)
        if (values.str.strip() != "").any():
            found.add(engine.infer_type(values))
    if not found:
        return "string"
    if found == {"integer"}:
        return "integer"
    if found <= {"integer", "decimal"}:
        return "decimal"
    return found.pop() if len(found) == 1 else "string"


def _describe_columns(dataset: Dataset, path: Path) -> None:
    cols = []
    n = dataset.n_rows
    for i, name in enumerate(pq.ParquetFile(path).schema_arrow.names):
        distinct = column_distinct(path, name)
        inferred = _infer_type(distinct)
        role = Role.IDENTIFYING if n > 1 and len(distinct) == n else Role.INSENSITIVE
        cols.append(Column(dataset=dataset, position=i, name=name, inferred_type=inferred, type=inferred,
                           role=role.value, distinct_count=len(distinct)))
        del distinct
    Column.objects.bulk_create(cols)


def _stored_table(dataset: Dataset) -> Path:
    """The Parquet file of the dataset; rebuilt from the original when missing (or an old cache)."""
    path = table_path(dataset)
    if not path.exists():
        write_parquet(iter_table_file(dataset.original.path, dataset.original_name, dataset_format(dataset)),
                      path)
    return path


def load_frame(dataset: Dataset, columns: list[str] | None = None) -> pd.DataFrame:
    """The parsed table, whole (for a run); pages use read_rows / column readers instead."""
    return _to_frame(pq.read_table(_stored_table(dataset), columns=columns))


def _to_frame(table: pa.Table) -> pd.DataFrame:
    return pd.DataFrame({name: table.column(i).to_numpy(zero_copy_only=False).astype(object)
                         for i, name in enumerate(table.column_names)})


def read_rows(path: Path, start: int, stop: int, columns: list[str] | None = None) -> pd.DataFrame:
    """Rows [start, stop) of a stored table: only the row groups that hold them are read."""
    pf = pq.ParquetFile(path)
    groups, first, offset = [], None, 0
    for g in range(pf.metadata.num_row_groups):
        n = pf.metadata.row_group(g).num_rows
        if offset + n > start and offset < stop:
            groups.append(g)
            first = offset if first is None else first
        offset += n
    if not groups:
        return _to_frame(pf.schema_arrow.empty_table().select(columns) if columns else pf.schema_arrow.empty_table())
    table = pf.read_row_groups(groups, columns=columns)
    return _to_frame(table.slice(start - first, stop - start))


def dataset_rows(dataset: Dataset, start: int, stop: int) -> pd.DataFrame:
    return read_rows(_stored_table(dataset), start, stop)


def dataset_rows_at(dataset: Dataset, rows: np.ndarray) -> pd.DataFrame:
    """The dataset's rows at the given positions (increasing, as published rows are): only the row groups
    between the first and the last are read."""
    rows = np.asarray(rows, dtype=np.int64)
    if not len(rows):
        return read_rows(_stored_table(dataset), 0, 0)
    lo, hi = int(rows.min()), int(rows.max()) + 1
    return read_rows(_stored_table(dataset), lo, hi).iloc[rows - lo].reset_index(drop=True)


def stored_columns(path: Path) -> list[str]:
    return list(pq.ParquetFile(path).schema_arrow.names)


def dataset_columns(dataset: Dataset) -> list[str]:
    return stored_columns(_stored_table(dataset))


def column_samples(dataset: Dataset, column: str, count: int) -> list[str]:
    """The first ``count`` distinct non-empty values of a column, reading row groups until found."""
    pf = pq.ParquetFile(_stored_table(dataset))
    seen: list[str] = []
    for g in range(pf.metadata.num_row_groups):
        for v in pc.unique(pf.read_row_group(g, columns=[column]).column(0)).to_pylist():
            if v is not None and v.strip() != "" and v not in seen:
                seen.append(v)
                if len(seen) == count:
                    return seen
    return seen


def distinct_values(dataset: Dataset, column: str) -> pd.Series:
    """Distinct values of a column in order of first appearance (type checks need no more)."""
    return pd.Series(column_distinct(_stored_table(dataset), column).to_pylist(), dtype=object)


def dataset_format(dataset: Dataset) -> Format:
    return Format(dataset.kind, dataset.delimiter, dataset.encoding, dataset.has_header)


def dataset_config(dataset: Dataset) -> dict:
    """Roles, types and hierarchy bindings: snapshotted into a job at submission."""
    return {
        "columns": [
            {"name": c.name, "role": c.role, "type": c.type, "hierarchy": c.hierarchy_id}
            for c in dataset.columns.all()
        ]
    }


def table_from_config(frame: pd.DataFrame, config: dict, name: str = "table") -> Table:
    roles = {c["name"]: Role(c["role"]) for c in config["columns"]}
    types = {c["name"]: c["type"] for c in config["columns"]}
    return Table(frame, roles, types, name)


def hierarchies_from_config(owner, config: dict, models: list | None = None) -> dict:
    """The bound hierarchies of the QIs, and of the sensitive columns a hierarchical t-closeness model uses."""
    from hierarchy_editor.models import Hierarchy

    wanted = {m.get("column") for m in (models or []) if m.get("distance") == "hierarchical"}
    out = {}
    for c in config["columns"]:
        if (c["role"] == Role.QUASI_IDENTIFYING.value or c["name"] in wanted) and c.get("hierarchy"):
            h = Hierarchy.objects.get(pk=c["hierarchy"], owner=owner)
            out[c["name"]] = h.to_engine(c["name"])
    return out


def dataset_table(dataset: Dataset) -> tuple[Table, dict]:
    """The dataset as an engine Table with its current roles/types, and the user's hierarchies."""
    config = dataset_config(dataset)
    return table_from_config(load_frame(dataset), config, dataset.name), hierarchies_from_config(
        dataset.owner, config)


# ---- jobs -------------------------------------------------------------------------------------
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
    the research-subset column a population job adds (δ-presence against another dataset)."""
    models = build_models(specs)
    engine.api.check_supported(info, [engine.KAnonymity(k), *models])
    columns = {c.name: c for c in dataset.columns.all()}
    for m in models:
        if marker is not None and m.column == marker:
            continue
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


def validate_job(dataset: Dataset, algorithm: str, k: int, suppression_limit: float, sensitive: str,
                 models: list[dict] | None = None, marker: str | None = None) -> list[dict]:
    """Everything that can be checked before queueing, with the engine's messages; returns the models."""
    info = engine.get_algorithm(algorithm)
    engine.KAnonymity(k)
    engine.api.SUPPRESSION.validate(suppression_limit)
    if not dataset.qi_columns.exists():
        raise InputError("no quasi-identifier: mark at least one column as quasi-identifying")
    if sensitive and not dataset.columns.filter(name=sensitive).exists():
        raise InputError(f"unknown sensitive column {sensitive!r}")
    if k > dataset.n_rows:
        raise InputError(f"k={k} is larger than the dataset's {dataset.n_rows} records")
    return validate_models(dataset, info, k, models, marker)


def create_job(dataset: Dataset, algorithm: str, k: int, suppression_limit: float, sensitive: str = "",
               options: dict | None = None, models: list[dict] | None = None,
               population: Dataset | None = None) -> Job:
    """A queued job. With ``population`` (δ-presence against another dataset of the owner) ``dataset`` is
    the research subset: its rows are matched into the population on their shared columns (as the CLI's
    --population does), the population is anonymized and the result keeps the research rows only."""
    if population is None:
        models = validate_job(dataset, algorithm, k, suppression_limit, sensitive, models)
        return Job.objects.create(owner=dataset.owner, dataset=dataset, algorithm=algorithm, k=k,
                                  suppression_limit=suppression_limit, sensitive=sensitive,
                                  options=options or {}, models=models, config=dataset_config(dataset))
    specs = [dict(m) for m in models or []]
    presence = [m for m in specs if m.get("model") == "delta-presence"]
    if not presence:
        raise InputError("a population dataset applies to δ-presence: tick δ-presence or choose no population")
    if population.owner_id != dataset.owner_id:
        raise InputError("unknown population dataset")
    if population.pk == dataset.pk:
        raise InputError("the population must be another dataset than the research subset")
    for m in presence:
        m["column"] = RESEARCH_MARKER
    models = validate_job(dataset, algorithm, k, suppression_limit, sensitive, specs, marker=RESEARCH_MARKER)
    if k > population.n_rows:
        raise InputError(f"k={k} is larger than the population's {population.n_rows} records")
    config = population_config(dataset, population)
    research = load_frame(dataset)
    _, positions = match_research(research, load_frame(population), RESEARCH_MARKER, f"population {population.name}")
    config["population"]["research_records"] = int(len(positions))
    return Job.objects.create(owner=dataset.owner, dataset=dataset, algorithm=algorithm, k=k,
                              suppression_limit=suppression_limit, sensitive=sensitive,
                              options=options or {}, models=models, config=config)


# ---- δ-presence against a population dataset ------------------------------------------------------
RESEARCH_MARKER = "__research_subset__"  # the 0/1 column added to the population (never published)


def match_research(research: pd.DataFrame, population: pd.DataFrame, marker: str = RESEARCH_MARKER,
                   label: str = "the population") -> tuple[pd.DataFrame, np.ndarray]:
    """The population with a ``marker`` column reading "1" for the research records, "0" for the others,
    and for each research row (in its order) the position of the population row it matched.

    Rows are matched on every column the two tables share, as text; each population row is used once
    (the n-th research copy of a row takes the n-th population copy). The one matching function of
    the web app and the CLI (--population); every research record must be found."""
    shared = [c for c in research.columns if c in population.columns]
    if not shared:
        raise InputError(f"{label}: the population and the research subset share no column")

    def keys(frame):
        return frame[shared].astype(str).agg("\x1f".join, axis=1) if len(frame) else pd.Series([], dtype=str)

    pop_key, res_key = keys(population).reset_index(drop=True), keys(research).reset_index(drop=True)
    pop_rank = pop_key.groupby(pop_key).cumcount()
    res_rank = res_key.groupby(res_key).cumcount()
    where = pd.Series(np.arange(len(pop_key)), index=pd.MultiIndex.from_arrays([pop_key, pop_rank]))
    found = where.reindex(pd.MultiIndex.from_arrays([res_key, res_rank]))
    missing = int(found.isna().sum())
    if missing:
        raise InputError(f"{label}: {missing} of the {len(research)} research records are not in the population "
                         f"(matched on {', '.join(map(str, shared))})")
    positions = found.to_numpy(dtype=np.int64)
    marked = population.copy()
    flag = np.zeros(len(population), dtype=bool)
    flag[positions] = True
    marked[marker] = np.where(flag, "1", "0")
    return marked, positions


def population_config(research: Dataset, population: Dataset) -> dict:
    """The job's snapshot for a population run: the population's columns with the research dataset's
    roles, types and hierarchies where it has the column (the population's own otherwise), plus the
    research marker (insensitive, never published)."""
    mine = {c["name"]: c for c in dataset_config(research)["columns"]}
    theirs = dataset_config(population)["columns"]
    names = {c["name"] for c in theirs}
    missing = [n for n, c in mine.items() if c["role"] == Role.QUASI_IDENTIFYING.value and n not in names]
    if missing:
        raise InputError(f"population {population.name}: no column {', '.join(map(repr, missing))} "
                         f"(a quasi-identifier of the research subset)")
    columns = [mine.get(c["name"], c) for c in theirs]
    columns.append({"name": RESEARCH_MARKER, "role": Role.INSENSITIVE.value, "type": "string", "hierarchy": None})
    return {"columns": columns, "population": {"dataset": population.pk, "name": population.name,
                                               "research_columns": list(mine)}}


def _run_population(job: Job) -> None:
    population = Dataset.objects.get(pk=job.config["population"]["dataset"], owner=job.owner)
    marked, positions = match_research(load_frame(job.dataset), load_frame(population), RESEARCH_MARKER,
                                       f"population {population.name}")
    table = table_from_config(marked, job.config, population.name)
    hierarchies = hierarchies_from_config(job.owner, job.config, job.models)
    result = engine.anonymize(
        table, hierarchies, job.algorithm, k=job.k, suppression_limit=job.suppression_limit,
        sensitive=job.sensitive or None, models=build_models(job.models), options=job.options,
        progress=_Progress(job),
    )
    store_population_result(job, table, result, hierarchies, positions)


def store_population_result(job: Job, table: Table, result: engine.Result, hierarchies: dict,
                            positions: np.ndarray) -> Result:
    """Like store_result, but the stored output holds only the research rows (in the research dataset's
    order, the marker left out); the report's figures are the population's classes."""
    if not result.verified:
        raise engine.VerificationError("refusing to store a result that was not verified")
    report = result.report()
    report["model_checks"] = model_checks(table, result, hierarchies)
    output = result.output.iloc[positions].drop(columns=[RESEARCH_MARKER], errors="ignore").reset_index(drop=True)
    suppressed = np.asarray(result.suppressed, dtype=bool)[positions]
    before = table.frame.iloc[positions]
    report["research_subset"] = {"population": job.config["population"]["name"],
                                 "population_records": int(table.n), "research_records": int(len(positions)),
                                 "written": int(len(output)), "suppressed": int(suppressed.sum()),
                                 "population_suppressed": int(np.asarray(result.suppressed).sum())}
    report["records"] = int(len(positions))
    report["value_counts"] = {
        qi: {"before": value_counts(before[qi]), "after": value_counts(output[qi])}
        for qi in result.qi if qi in output.columns
    }
    target = Path(settings.MEDIA_ROOT) / "results" / f"job-{job.pk}.parquet"
    write_output(output, suppressed, target)
    record = Result(job=job, report=json.loads(json.dumps(report, default=_json_default)))
    record.output.name = str(target.relative_to(settings.MEDIA_ROOT))
    record.save()
    return record


def submit_job(job: Job) -> Job:
    """Queue the job on the Celery broker."""
    from .tasks import run_job_task

    async_result = run_job_task.delay(str(job.pk))
    Job.objects.filter(pk=job.pk).update(celery_id=async_result.id)
    job.celery_id = async_result.id
    return job


class _Progress:
    """Writes progress to the job row at most every 0.1 s and stops the run when cancelled."""

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
        return not Job.objects.filter(pk=self.job.pk, cancel_requested=True).exists()


def run_job(job: Job) -> Job:
    """Run a queued job to its end: succeeded with a stored, verified result, failed, or cancelled."""
    job.refresh_from_db()
    if job.status != Job.QUEUED:
        return job
    if job.cancel_requested:
        _finish(job, Job.CANCELLED, "cancelled before it started")
        job.refresh_from_db()
        return job
    Job.objects.filter(pk=job.pk).update(status=Job.RUNNING, started=timezone.now(), phase="loading the dataset")
    job.refresh_from_db()
    try:
        if job.algorithm == COMPARE:
            _run_comparison(job)
        elif job.algorithm == EXPERIMENT:
            _run_experiment(job)
        else:  # a run, δ-presence against a population, a node kept from the lattice, out of core
            from .runs import run_and_store

            run_and_store(job, _Progress(job))
    except engine.Cancelled:
        _finish(job, Job.CANCELLED, "cancelled by the user")
    except engine.EngineError as exc:
        _finish(job, Job.FAILED, str(exc))
    except Exception as exc:  # the job must end failed, whatever went wrong, with the reason shown
        _finish(job, Job.FAILED, f"internal error: {exc.__class__.__name__}: {exc}")
        raise
    else:
        _finish(job, Job.SUCCEEDED, "")
    job.refresh_from_db()
    return job


def _run_out_of_core(job: Job) -> Result:
    """The disk hybrid with k-anonymity alone: the dataset's Parquet file is streamed a row group at a
    time (read three times) and the output written a chunk at a time, so the worker's memory stays
    bounded by the job's memory setting whatever the table's size."""
    source = _stored_table(job.dataset)
    roles = {c["name"]: Role(c["role"]) for c in job.config["columns"]}
    types = {c["name"]: c["type"] for c in job.config["columns"]}
    hierarchies = hierarchies_from_config(job.owner, job.config, job.models)

    def chunks():
        pf = pq.ParquetFile(source)
        for batch in pf.iter_batches(batch_size=ROW_GROUP):
            yield _to_frame(pa.Table.from_batches([batch]))

    target = Path(settings.MEDIA_ROOT) / "results" / f"job-{job.pk}.parquet"
    with AtomicParquet(target) as out:
        result = out_of_core.anonymize_out_of_core(
            chunks, roles, hierarchies, job.k, lambda frame: out.write(output_table(frame, np.zeros(len(frame), bool))),
            types=types, sensitive=job.sensitive or None, options=job.options, progress=_Progress(job),
            suppression_limit=job.suppression_limit)
        if not result.verified:
            raise engine.VerificationError("refusing to store a result that was not verified")
        out.commit()
    record = Result(job=job, report=json.loads(json.dumps(result.report, default=_json_default)))
    record.output.name = str(target.relative_to(settings.MEDIA_ROOT))
    record.save()
    return record


def _finish(job: Job, status: str, message: str) -> None:
    fields = {"status": status, "message": message, "finished": timezone.now()}
    if status == Job.SUCCEEDED:
        fields.update(progress=1.0, phase="done")
    Job.objects.filter(pk=job.pk).update(**fields)


TOP_VALUES = 30


def value_counts(values: pd.Series, top: int = TOP_VALUES) -> dict:
    """The ``top`` most frequent values with their counts, and how many distinct values there are."""
    counts = pd.Series(values).astype(str).value_counts()
    return {"values": [str(v) for v in counts.index[:top]], "counts": [int(c) for c in counts.to_numpy()[:top]],
            "distinct": int(len(counts)), "rows": int(len(values))}


def model_checks(table: Table, result: engine.Result, hierarchies: dict | None = None) -> list[dict]:
    """Per privacy model of the run: whether it holds on the result's classes and the figure reached
    (k: smallest class; l: fewest distinct values / exp of the lowest entropy / the largest r1 ratio;
    t: the largest EMD; β: the largest relative gain; δ: the lowest and highest presence)."""
    from .engine.distributions import domain_for

    class_of_row = np.asarray(result.class_of_row, dtype=np.int64)
    kept = class_of_row >= 0
    _, dense = np.unique(class_of_row[kept], return_inverse=True)
    rows = class_of_row.copy()
    rows[kept] = dense
    sizes = np.bincount(dense).astype(np.int64) if kept.any() else np.zeros(0, np.int64)
    out = []
    for m in result.models:
        entry = {"model": m.name, "label": m.label, "describe": m.describe(), "column": m.column,
                 "parameters": m.to_dict()}
        if not getattr(m, "needs_sensitive", False):
            failing = m.classes_failing(sizes)
            entry.update(value=int(sizes.min()) if len(sizes) else 0, value_label="smallest EC")
        else:
            dom = domain_for(m, table.frame, hierarchies, table.is_numeric(m.column))
            counts = dom.from_rows(rows, len(sizes))
            failing = m.classes_failing(sizes, counts, dom)
            values = m.values(counts, dom) if len(sizes) else np.zeros(0)
            if not len(values):
                entry.update(value=None, value_label="")
            elif m.name == "distinct-l-diversity":
                entry.update(value=int(values.min()), value_label="fewest distinct values in an EC")
            elif m.name == "entropy-l-diversity":
                entry.update(value=float(math.exp(values.min())), value_label="exp(lowest EC entropy)")
            elif m.name == "recursive-cl-diversity":
                finite = values[np.isfinite(values)]
                entry.update(value=float(finite.max()) if len(finite) == len(values) else None,
                             value_label="largest r1 / (r_l + ... + r_m)")
            elif m.name == "t-closeness":
                entry.update(value=float(values.max()), value_label="largest EMD")
            elif m.name == "beta-likeness":
                entry.update(value=float(values.max()), value_label="largest relative gain")
            elif m.name == "delta-presence":
                entry.update(value=[float(values.min()), float(values.max())], value_label="presence range")
            else:
                entry.update(value=None, value_label="")
        entry["failing_classes"] = int(np.asarray(failing).sum())
        entry["holds"] = entry["failing_classes"] == 0
        out.append(entry)
    return out


def store_result(job: Job, table: Table, result: engine.Result, hierarchies: dict | None = None) -> Result:
    """Persist a verified engine result: output rows (Parquet) and the report with chart data.

    The value counts the result page draws are computed here, once, over all rows, so the page
    never loads a whole column again."""
    if not result.verified:
        raise engine.VerificationError("refusing to store a result that was not verified")
    report = result.report()
    report["model_checks"] = model_checks(table, result, hierarchies)
    report["value_counts"] = {
        qi: {"before": value_counts(table.frame[qi]), "after": value_counts(result.output[qi])}
        for qi in result.qi if qi in result.output.columns
    }
    target = Path(settings.MEDIA_ROOT) / "results" / f"job-{job.pk}.parquet"
    write_output(result.output, result.suppressed, target)
    if "st" in result.published:  # Anatomy: the sensitive table beside the QIT (the output)
        st = result.published["st"]
        pq.write_table(pa.Table.from_arrays([pa.array(st[c].astype(str).to_numpy(dtype=object), type=pa.string())
                                             for c in st.columns], names=[str(c) for c in st.columns]),
                       sensitive_table_path(target), compression="zstd")
    record = Result(job=job, report=json.loads(json.dumps(report, default=_json_default)))
    record.output.name = str(target.relative_to(settings.MEDIA_ROOT))
    record.save()
    return record


def write_output(output: pd.DataFrame, suppressed: np.ndarray, target: Path) -> None:
    """The anonymized rows as Parquet (strings), plus a boolean column marking suppression."""
    with AtomicParquet(target) as out:
        out.write(output_table(output, suppressed))
        out.commit()


def output_table(output: pd.DataFrame, suppressed: np.ndarray, rows: np.ndarray | None = None) -> pa.Table:
    """Output rows as stored: every column as strings, then the suppression flags (and, when given, the
    dataset row each published row comes from, for the side-by-side view)."""
    arrays = [pa.array(output[c].astype(str).to_numpy(dtype=object), type=pa.string()) for c in output.columns]
    arrays.append(pa.array(np.asarray(suppressed, dtype=bool)))
    names = [str(c) for c in output.columns] + [SUPPRESSED_COLUMN]
    if rows is not None:
        arrays.append(pa.array(np.asarray(rows, dtype=np.int64)))
        names.append(ROW_COLUMN)
    return pa.Table.from_arrays(arrays, names=names)


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return None if math.isnan(o) else float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    raise TypeError(type(o).__name__)


def output_path(result: Result) -> Path:
    return Path(result.output.path)


def sensitive_table_path(output: Path) -> Path:
    """Where an Anatomy result's sensitive table (ST) is stored, beside its QIT."""
    return output.with_name(output.stem + "-st.parquet")


def load_sensitive_table(result: Result) -> pd.DataFrame | None:
    """An Anatomy result's ST (group, value, count), or None for other results."""
    path = sensitive_table_path(output_path(result))
    if path.exists():
        return _to_frame(pq.read_table(path))
    rows = result.report.get("sensitive_table")
    return pd.DataFrame(rows).astype(str) if rows else None


def _split_suppressed(frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The published columns and the suppression flags; the dataset rows (if stored) in frame.attrs["rows"]."""
    suppressed = frame.pop(SUPPRESSED_COLUMN).to_numpy(dtype=bool)
    if ROW_COLUMN in frame.columns:
        frame.attrs["rows"] = frame.pop(ROW_COLUMN).to_numpy(dtype=np.int64)
    return frame, suppressed


def load_output(result: Result) -> tuple[pd.DataFrame, np.ndarray]:
    """All output rows (downloads with shuffling, tests); pages use output_rows."""
    path = output_path(result)
    if path.suffix == ".pkl":  # results stored before the Parquet format
        with result.output.open("rb") as fh:
            return _split_suppressed(pd.read_pickle(fh))
    return _split_suppressed(_to_frame(pq.read_table(path)))


def output_rows(result: Result, start: int, stop: int) -> tuple[pd.DataFrame, np.ndarray]:
    path = output_path(result)
    if path.suffix == ".pkl":
        frame, suppressed = load_output(result)
        return frame.iloc[start:stop].reset_index(drop=True), suppressed[start:stop]
    frame = read_rows(path, start, stop)
    return _split_suppressed(frame)


def output_columns(result: Result) -> list[str]:
    path = output_path(result)
    if path.suffix == ".pkl":
        return list(load_output(result)[0].columns)
    return [c for c in stored_columns(path) if c not in (SUPPRESSED_COLUMN, ROW_COLUMN)]


def iter_output_csv(result: Result, delimiter: str = ",", drop_suppressed: bool = False):
    """The CSV download a row group at a time (a million rows never sit in memory as text)."""
    path = output_path(result)
    if path.suffix == ".pkl":
        frame, suppressed = load_output(result)
        yield export_csv(frame[~suppressed] if drop_suppressed else frame, delimiter)
        return
    pf = pq.ParquetFile(path)
    for g in range(pf.metadata.num_row_groups):
        frame, suppressed = _split_suppressed(_to_frame(pf.read_row_group(g)))
        if drop_suppressed:
            frame = frame[~suppressed]
        text = export_csv(frame, delimiter)
        yield text if g == 0 else text.split("\n", 1)[1]


# ---- export -----------------------------------------------------------------------------------
def neutralize(value: str) -> str:
    """Cells a spreadsheet would run as a formula get a leading apostrophe (OWASP CSV injection)."""
    return "'" + value if value.startswith(FORMULA_PREFIXES) else value


def export_csv(frame: pd.DataFrame, delimiter: str = ",", shuffle: bool = False, seed: int | None = None) -> str:
    """CSV text of the anonymized rows, formulas neutralized, optionally in shuffled row order."""
    if shuffle:
        frame = frame.sample(frac=1.0, random_state=np.random.default_rng(seed).integers(2**31))
    safe = pd.DataFrame({neutralize(str(c)): _neutralize_column(frame[c]) for c in frame.columns})
    return safe.to_csv(sep=delimiter, index=False, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)


def _neutralize_column(values: pd.Series) -> pd.Series:
    """Only the distinct values are tested and rewritten, then mapped back onto the rows."""
    codes, uniques = pd.factorize(values.to_numpy(dtype=object), use_na_sentinel=False)
    text = pd.Series(uniques, dtype=object).astype(str)
    risky = text.str.startswith(FORMULA_PREFIXES)
    safe = text.where(~risky, "'" + text).to_numpy(dtype=object)
    return pd.Series(safe[codes], index=values.index, dtype=object)


def job_configuration(job: Job) -> dict:
    """The run configuration as downloadable JSON (enough to repeat the run from the CLI)."""
    columns = job.config.get("columns", [])
    return {
        "dataset": job.dataset.original_name,
        "algorithm": job.algorithm,
        "k": job.k,
        "suppression_limit": job.suppression_limit,
        "sensitive": job.sensitive or None,
        "options": job.options,
        "models": job.models,
        "quasi_identifiers": [c["name"] for c in columns if c["role"] == Role.QUASI_IDENTIFYING.value],
        "identifiers": [c["name"] for c in columns if c["role"] == Role.IDENTIFYING.value],
        "columns": columns,
        "delimiter": job.dataset.delimiter,
        **({"population": job.config["population"]} if job.config.get("population") else {}),
    }


# ---- comparison of algorithms -----------------------------------------------------------------
COMPARE = "compare"  # Job.algorithm of a comparison; its options hold the algorithms and the k list
COMPARE_FIGURES = {
    "ncp": ("NCP (information loss)", "ncp"),
    "discernibility": ("Discernibility C_DM", "discernibility"),
    "seconds": ("Time (s)", "seconds"),
}


def parse_k_list(text: str) -> list[int]:
    """'2,5,10' -> [2, 5, 10]; each k at least 1, no repeats, in the given order."""
    ks = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            k = int(part)
        except ValueError:
            raise InputError(f"k must be whole numbers separated by commas, got {part!r}") from None
        engine.KAnonymity(k)
        if k not in ks:
            ks.append(k)
    if not ks:
        raise InputError("give at least one k")
    return ks


def parse_algorithm_list(names) -> list[str]:
    if isinstance(names, str):
        names = names.split(",")
    out = []
    for name in names:
        name = name.strip()
        if name:
            engine.get_algorithm(name)  # "unknown algorithm 'x'; available: ..."
            if name not in out:
                out.append(name)
    if not out:
        raise InputError("give at least one algorithm")
    return out


def compare(table: Table, hierarchies: dict, algorithms: list[str], ks: list[int], suppression_limit: float = 0.0,
            sensitive: str | None = None, options: dict | None = None, progress=None) -> list[dict]:
    """Run every algorithm for every k on one table (engine.anonymize, each result verified).

    A run that finds no solution (or refuses the k) is a row with its error, not the end of the
    comparison. ``progress(fraction, phase)`` returning False stops it (engine.Cancelled)."""
    options = options or {}
    rows = []
    total = len(algorithms) * len(ks)
    for i, name in enumerate(algorithms):
        info = engine.get_algorithm(name)
        for j, k in enumerate(ks):
            step = i * len(ks) + j

            def sub(fraction, phase, step=step, label=info.label, k=k):
                if progress is None:
                    return True
                return progress((step + min(max(fraction, 0.0), 1.0)) / total, f"{label}, k={k}: {phase}")

            row = {"algorithm": name, "label": info.label, "recoding": info.recoding, "k": k}
            try:
                result = engine.anonymize(table, hierarchies, name, k=k, suppression_limit=suppression_limit,
                                          sensitive=sensitive, options=options.get(name), progress=sub)
            except engine.Cancelled:
                raise
            except engine.EngineError as exc:
                row.update(error=str(exc), verified=False)
            else:
                m = result.metrics
                row.update(
                    k_achieved=result.k_achieved, equivalence_classes=int(len(result.class_sizes)),
                    suppressed=int(result.suppressed.sum()), ncp=_plain_float(m.get("ncp")),
                    discernibility=int(m["discernibility"]), seconds=round(result.seconds, 4),
                    verified=result.verified, error="")
            rows.append(row)
    if progress is not None:
        progress(1.0, "done")
    return rows


def _plain_float(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else round(float(v), 6)


COMPARE_CSV_FIELDS = ["algorithm", "k", "k_achieved", "equivalence_classes", "suppressed", "ncp", "discernibility",
                      "seconds", "verified", "error"]


def comparison_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, COMPARE_CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({f: row.get(f, "") for f in COMPARE_CSV_FIELDS})
    return buf.getvalue()


def comparison_figures(rows: list[dict]) -> dict:
    """Plotly figures (as dicts): NCP, discernibility and time against k, one line per algorithm."""
    import plotly.graph_objects as go

    algorithms = list(dict.fromkeys(r["algorithm"] for r in rows))
    ks = sorted({r["k"] for r in rows})
    figures = {}
    for key, (title, field) in COMPARE_FIGURES.items():
        traces = []
        for name in algorithms:
            mine = sorted((r for r in rows if r["algorithm"] == name and not r.get("error")), key=lambda r: r["k"])
            label = mine[0]["label"] if mine else name
            traces.append(go.Scatter(x=[r["k"] for r in mine], y=[r[field] for r in mine], mode="lines+markers",
                                     name=label, hovertemplate=f"{label}, k=%{{x}}: %{{y}}<extra></extra>"))
        layout = dict(template="none", paper_bgcolor="#ffffff", plot_bgcolor="#ffffff", height=340,
                      margin=dict(l=70, r=20, t=40, b=50), title=dict(text=f"{title} against k", font=dict(size=14)),
                      legend=dict(orientation="h", y=-0.2),
                      xaxis=dict(title=dict(text="k"), type="log", tickvals=ks, ticktext=[str(k) for k in ks],
                                 gridcolor="#e6ebf1", automargin=True),
                      yaxis=dict(title=dict(text=title), gridcolor="#e6ebf1", automargin=True,
                                 type="log" if key == "seconds" else "linear"))
        figures[key] = json.loads(go.Figure(data=traces, layout=layout).to_json())
    return figures


def comparison_html(rows: list[dict], title: str) -> str:
    """A standalone page (plotly.js inlined, no CDN) with the three charts and the table."""
    import html

    import plotly.io as pio

    figs = comparison_figures(rows)
    parts = [pio.to_html(fig, full_html=False, include_plotlyjs=(i == 0)) for i, fig in enumerate(figs.values())]
    head = "".join(f"<th>{html.escape(f)}</th>" for f in COMPARE_CSV_FIELDS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(r.get(f, '')))}</td>" for f in COMPARE_CSV_FIELDS)
                   + "</tr>" for r in rows)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head><body>"
            f"<h1>{html.escape(title)}</h1>{''.join(parts)}<table border='1' cellpadding='4'><thead><tr>{head}"
            f"</tr></thead><tbody>{body}</tbody></table></body></html>\n")


def create_comparison(dataset: Dataset, algorithms, ks, suppression_limit: float = 0.0, sensitive: str = "") -> Job:
    """A comparison is a Job with algorithm "compare"; its options hold the algorithms and the k list."""
    algorithms = parse_algorithm_list(algorithms)
    ks = parse_k_list(",".join(map(str, ks)) if not isinstance(ks, str) else ks)
    engine.api.SUPPRESSION.validate(suppression_limit)
    if not dataset.qi_columns.exists():
        raise InputError("no quasi-identifier: mark at least one column as quasi-identifying")
    if sensitive and not dataset.columns.filter(name=sensitive).exists():
        raise InputError(f"unknown sensitive column {sensitive!r}")
    too_big = [k for k in ks if k > dataset.n_rows]
    if too_big:
        raise InputError(f"k={too_big[0]} is larger than the dataset's {dataset.n_rows} records")
    return Job.objects.create(owner=dataset.owner, dataset=dataset, algorithm=COMPARE, k=min(ks),
                              suppression_limit=suppression_limit, sensitive=sensitive,
                              options={"algorithms": algorithms, "k": ks}, config=dataset_config(dataset))


def _run_comparison(job: Job) -> None:
    frame = load_frame(job.dataset)
    table = table_from_config(frame, job.config, job.dataset.name)
    hierarchies = hierarchies_from_config(job.owner, job.config)
    rows = compare(table, hierarchies, job.options["algorithms"], job.options["k"], job.suppression_limit,
                   job.sensitive or None, progress=_Progress(job))
    Result.objects.create(job=job, report={"comparison": rows, "records": table.n,
                                           "quasi_identifiers": list(table.qi), "sensitive": job.sensitive or None})


def transformation_levels(report: dict) -> list[tuple[str, int]]:
    """(QI, level) in the QIs' order. Reports are JSON objects, and PostgreSQL's jsonb does not keep
    key order, so the order comes from the report's list of quasi-identifiers, never from the dict."""
    levels = report.get("transformation") or {}
    return [(qi, levels[qi]) for qi in report.get("quasi_identifiers", []) if qi in levels]


def transformation_key(report: dict) -> str:
    """The transformation as the lattice names its nodes: '0,4,1,...' in QI order."""
    return ",".join(str(level) for _, level in transformation_levels(report))


# ---- the seed-001 experiment: homogeneous ECs against k ---------------------------------------------
EXPERIMENT = "homogeneity-experiment"  # Job.algorithm; options hold the tables, the k list and the algorithm
EXPERIMENT_MAX_ROWS = 1_000_000
EXPERIMENT_FIELDS = ["table", "rows", "k", "algorithm", "equivalence_classes", "homogeneous_classes",
                     "homogeneous_records", "homogeneous_share", "k_reached", "suppressed", "transformation",
                     "seconds"]


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
    """The seed-001 experiment as a Job (algorithm "homogeneity-experiment") started from ``dataset``:
    generated people tables of the given sizes (seeded) and/or the dataset itself, anonymized once per k."""
    from .engine import experiments

    sizes = parse_size_list(",".join(map(str, sizes)) if not isinstance(sizes, str) else sizes)
    ks = parse_k_list(",".join(map(str, ks)) if not isinstance(ks, str) else ks)
    engine.get_algorithm(algorithm)
    engine.api.SUPPRESSION.validate(suppression_limit)
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
    return Job.objects.create(owner=dataset.owner, dataset=dataset, algorithm=EXPERIMENT, k=min(ks),
                              suppression_limit=suppression_limit, sensitive=sensitive if include_dataset else "",
                              options={"sizes": sizes, "seed": int(seed), "include_dataset": bool(include_dataset),
                                       "k": ks, "algorithm": algorithm},
                              config=dataset_config(dataset))


def experiment_tables(job: Job):
    """(label, engine Table, hierarchies, sensitive) of each table of an experiment job, made lazily."""
    from .engine import experiments

    opts = job.options
    for n in opts.get("sizes", []):
        def make(n=n):
            frame = experiments.generate_people(n, opts.get("seed", 0))
            return experiments.people_table(frame), experiments.people_hierarchies(), experiments.SENSITIVE
        yield f"people, {n:,} rows (seed {opts.get('seed', 0)})", make
    if opts.get("include_dataset"):
        def mine():
            table = table_from_config(load_frame(job.dataset), job.config, job.dataset.name)
            return table, hierarchies_from_config(job.owner, job.config), job.sensitive or None
        yield job.dataset.name, mine


def _run_experiment(job: Job) -> None:
    from .engine import experiments

    progress = _Progress(job)
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
                                               sensitive)[0]
            rows.append({"table": label, **row})
    progress(1.0, "done")
    Result.objects.create(job=job, report={"experiment": rows})


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
            x=[r["k"] for r in mine], y=[r["homogeneous_classes"] for r in mine], mode="lines+markers", name=label,
            customdata=[[r["equivalence_classes"], r["homogeneous_records"]] for r in mine],
            hovertemplate=f"{label}, k=%{{x}}: %{{y}} homogeneous of %{{customdata[0]}} ECs, "
                          "%{customdata[1]} records<extra></extra>"))
    layout = dict(template="none", paper_bgcolor="#ffffff", plot_bgcolor="#ffffff", height=380,
                  margin=dict(l=70, r=20, t=40, b=50),
                  title=dict(text="Homogeneous equivalence classes against k", font=dict(size=14)),
                  legend=dict(orientation="h", y=-0.2),
                  xaxis=dict(title=dict(text="k"), type="log", tickvals=ks, ticktext=[str(k) for k in ks],
                             gridcolor="#e6ebf1", automargin=True),
                  yaxis=dict(title=dict(text="homogeneous ECs"), gridcolor="#e6ebf1", automargin=True))
    return json.loads(go.Figure(data=traces, layout=layout).to_json())
