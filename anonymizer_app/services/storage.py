"""Where the web side's files live, and the one module through which they are located, read, written
and deleted.

Names are relative to Django's default storage (MEDIA_ROOT, a FileSystemStorage):

    datasets/<file>                        an upload as it came, never modified (Dataset.original)
    tables/dataset-<pk>.parquet            its parsed table: string columns, row groups of ROW_GROUP rows
    tables/staging-<hex>.parquet           a table being parsed, moved into place once complete
    results/job-<pk>.parquet               a job's published rows, the suppression flag, the dataset row
    results/job-<pk>-st.parquet            an Anatomy result's sensitive table, beside its QIT
    results/job-<pk>-lattice/*.json        the solution lattice and node views computed for a lattice job

Parquet and pyarrow need local paths, which come from ``default_storage.path()``; existence, listing and
deletion go through the storage API, so a remote storage or an erasure feature is a change here only.
Tables are stored as Parquet so that pages read only the row groups they show, charts only the columns
they draw.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from django.core.files.storage import default_storage

from ..engine.result import json_default as engine_json_default

ROW_GROUP = 32_768
TABLES = "tables"
RESULTS = "results"


def _local(name: str) -> Path:
    return Path(default_storage.path(name))


# ---- names and paths ------------------------------------------------------------------------------
def table_name(dataset) -> str:
    return f"{TABLES}/dataset-{dataset.pk}.parquet"


def table_path(dataset) -> Path:
    """The dataset's parsed table (see datasets.stored_table, which rebuilds it when missing)."""
    return _local(table_name(dataset))


def staging_path() -> Path:
    """A fresh name for a table being written (moved into place by move(), removed by discard())."""
    return _local(f"{TABLES}/staging-{uuid.uuid4().hex}.parquet")


def result_name(job) -> str:
    return f"{RESULTS}/job-{job.pk}.parquet"


def result_path(job) -> Path:
    return _local(result_name(job))


def output_path(result) -> Path:
    """The stored output rows of a Result."""
    return Path(result.output.path)


def sensitive_table_path(output: Path) -> Path:
    """Where an Anatomy result's sensitive table (ST) is stored, beside its QIT."""
    return output.with_name(output.stem + "-st.parquet")


def _sensitive_table_name(name: str) -> str:
    stem, _ = os.path.splitext(name)
    return f"{stem}-st.parquet"


def lattice_cache_name(job) -> str:
    return f"{RESULTS}/job-{job.pk}-lattice"


def lattice_cache_dir(job) -> Path:
    """The folder of a lattice job's cached lattice and node views."""
    return _local(lattice_cache_name(job))


def original_path(dataset) -> Path:
    """The upload as stored (a local path: the parsers read it from disk)."""
    return Path(dataset.original.path)


# ---- originals --------------------------------------------------------------------------------------
def save_original(dataset, filename: str, source) -> None:
    """Store an upload (a Django File: a temporary upload file is moved, not read) as the dataset's original."""
    dataset.original.save(Path(filename).name, source, save=False)


def delete_original(dataset) -> None:
    dataset.original.delete(save=False)


def read_original_head(dataset, size: int) -> bytes:
    with dataset.original.open("rb") as fh:
        return fh.read(size)


# ---- Parquet ------------------------------------------------------------------------------------------
class AtomicParquet:
    """A Parquet file written a table at a time under a temporary name and renamed into place by
    commit(); leaving the ``with`` block without commit() removes the temporary file."""

    def __init__(self, target: Path):
        target.parent.mkdir(parents=True, exist_ok=True)
        self.target = target
        self.tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        self.writer: pq.ParquetWriter | None = None

    def __enter__(self) -> AtomicParquet:
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


def write_string_table(frame: pd.DataFrame, target: Path) -> None:
    """A small frame stored whole, every column as strings (an Anatomy result's sensitive table)."""
    pq.write_table(pa.Table.from_arrays([pa.array(frame[c].astype(str).to_numpy(dtype=object), type=pa.string())
                                         for c in frame.columns], names=[str(c) for c in frame.columns]),
                   target, compression="zstd")


def to_frame(table: pa.Table) -> pd.DataFrame:
    return pd.DataFrame({name: table.column(i).to_numpy(zero_copy_only=False).astype(object)
                         for i, name in enumerate(table.column_names)})


def read_frame(path: Path, columns: list[str] | None = None) -> pd.DataFrame:
    """A stored table, whole (or the given columns of it)."""
    return to_frame(pq.read_table(path, columns=columns))


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
        return to_frame(pf.schema_arrow.empty_table().select(columns) if columns else pf.schema_arrow.empty_table())
    table = pf.read_row_groups(groups, columns=columns)
    return to_frame(table.slice(start - first, stop - start))


def iter_row_groups(path: Path):
    """The stored table a row group at a time, as frames."""
    pf = pq.ParquetFile(path)
    for g in range(pf.metadata.num_row_groups):
        yield to_frame(pf.read_row_group(g))


def iter_batches(path: Path, batch_size: int = ROW_GROUP):
    """The stored table in frames of ``batch_size`` rows (a job streamed out of core)."""
    pf = pq.ParquetFile(path)
    for batch in pf.iter_batches(batch_size=batch_size):
        yield to_frame(pa.Table.from_batches([batch]))


def iter_column(path: Path, column: str):
    """One stored column, a row group at a time (Arrow arrays)."""
    pf = pq.ParquetFile(path)
    for g in range(pf.metadata.num_row_groups):
        yield pf.read_row_group(g, columns=[column]).column(0)


def column_distinct(path: Path, column: str) -> pa.Array:
    """The distinct values of one stored column, in order of first appearance: a row group at a time,
    so memory follows the distinct values, not the rows."""
    seen: list[pa.Array] = []
    for values in iter_column(path, column):
        seen.append(pc.unique(values))
        if len(seen) > 64:
            seen = [pc.unique(pa.chunked_array(seen))]
    if not seen:
        return pa.array([], type=pa.string())
    return pc.unique(pa.chunked_array(seen))


def stored_columns(path: Path) -> list[str]:
    return list(pq.ParquetFile(path).schema_arrow.names)


# ---- JSON caches ----------------------------------------------------------------------------------------
# numpy scalars as JSON: the engine's one report encoder
json_default = engine_json_default


def read_json(path: Path):
    """A cached JSON document, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_json(path: Path, data) -> None:
    """Written under a temporary name and renamed, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, separators=(",", ":"), default=json_default)
    os.replace(tmp, path)


# ---- moving and deleting ----------------------------------------------------------------------------------
def move(source: Path, target: Path) -> None:
    """Put a completely written file (a staging table) in place."""
    source.replace(target)


def discard(path: Path) -> None:
    """Remove a temporary file if it is there."""
    if path.exists():
        path.unlink()


def _delete(name: str) -> None:
    if name and default_storage.exists(name):
        default_storage.delete(name)


def _delete_tree(name: str) -> None:
    if not default_storage.exists(name):
        return
    dirs, files = default_storage.listdir(name)
    for d in dirs:
        _delete_tree(f"{name}/{d}")
    for f in files:
        default_storage.delete(f"{name}/{f}")
    default_storage.delete(name)  # the folder itself, now empty


def delete_job_files(job) -> None:
    """Every file a job produced: its stored output (and an Anatomy result's sensitive table) and, for a
    lattice job, the cached lattice and node views. The database rows are the caller's business."""
    names = {result_name(job)}
    result = getattr(job, "result", None)  # no Result yet: a reverse one-to-one raises an AttributeError
    if result is not None and result.output.name:
        names.add(result.output.name)
    for name in names:
        _delete(name)
        _delete(_sensitive_table_name(name))
    _delete_tree(lattice_cache_name(job))


def delete_dataset_files(dataset) -> None:
    """Every file of a dataset: the original upload, its parsed table, and the files of its jobs."""
    for job in dataset.jobs.all():
        delete_job_files(job)
    _delete(table_name(dataset))
    _delete(dataset.original.name)
