"""Where the web side's files live, and the one module through which they are located, read, written
and deleted.

Names are relative to Django's default storage (MEDIA_ROOT, a FileSystemStorage):

    datasets/<hex>.<ext>                   an upload as it came, never modified (Dataset.original)
    tables/dataset-<pk>-<tag>.parquet      its parsed table: string columns, row groups of ROW_GROUP rows
    tables/staging-<hex>.parquet           a table being parsed, moved into place once complete
    dicom/dataset-<pk>-<tag>/              a DICOM dataset's files (files.zip) and manifest (services.dicom)
    results/job-<uuid>.parquet             a job's published rows, the suppression flag, the dataset row
    results/job-<uuid>-st.parquet          an Anatomy result's sensitive table, beside its QIT
    results/job-<uuid>-lattice/*.json      the solution lattice and node views computed for a lattice job
    hierarchy-drafts/<user>-<h>-<hex>/     an editing session of the hierarchy editor (hierarchy_editor.drafts)
    pending-hierarchies/<user>-<hex>.json  a hierarchy upload waiting for a conflict resolution (.forms)

No name can be guessed: uploads get a random name (the user's file name is kept in the database only),
a table's name carries a tag derived from SECRET_KEY, job ids are random UUIDs, sessions random tokens.
Files are written 0600 and folders 0700 (FILE_MODE, DIR_MODE; the process umask of settings.py covers
what other code writes). Every file behind an object is found by the ``*_files`` function of its kind
and removed by ``delete_names`` (services.erasure calls them when the object is deleted, in whatever way).

Parquet and pyarrow need local paths, which come from ``default_storage.path()``; existence, listing and
deletion go through the storage API, so a remote storage is a change here only.
Tables are stored as Parquet so that pages read only the row groups they show, charts only the columns
they draw.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from django.conf import settings
from django.core.files.storage import default_storage

from ..engine.io.reader import arrow_categorical
from ..engine.run.result import json_default as engine_json_default

ROW_GROUP = 32_768
DATASETS = "datasets"
TABLES = "tables"
RESULTS = "results"
DRAFTS = "hierarchy-drafts"
PENDING = "pending-hierarchies"
DICOM = "dicom"
FILE_MODE = 0o600
DIR_MODE = 0o700


def _local(name: str) -> Path:
    return Path(default_storage.path(name))


def media_root() -> Path:
    return Path(settings.MEDIA_ROOT)


# ---- permissions ------------------------------------------------------------------------------------
def make_folder(path: Path) -> None:
    """``path`` and its missing parents, each 0700 (mkdir's mode alone is filtered by the umask)."""
    missing = []
    while not path.is_dir():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(folder, DIR_MODE)


def make_private(path: Path) -> None:
    """A file (0600) or folder (0700) and everything under it readable by the owner only."""
    if not path.exists():
        return
    for root, _dirs, files in os.walk(path):
        os.chmod(root, DIR_MODE)
        for name in files:
            os.chmod(os.path.join(root, name), FILE_MODE)
    if path.is_file():
        os.chmod(path, FILE_MODE)


# ---- names and paths ------------------------------------------------------------------------------
def _tag(kind: str, key) -> str:
    """A name component nobody can compute without SECRET_KEY (a changed key: tables are rebuilt)."""
    message = f"anonymizer.storage:{kind}:{key}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()[:24]


def table_name(dataset) -> str:
    return f"{TABLES}/dataset-{dataset.pk}-{_tag('table', dataset.pk)}.parquet"


def table_path(dataset) -> Path:
    """The dataset's parsed table (see datasets.stored_table, which rebuilds it when missing)."""
    return _local(table_name(dataset))


def dicom_name(dataset) -> str:
    """The folder of a DICOM dataset's files and manifest (services.dicom): the one already there, found by
    the dataset's id, else a new name with a tag. Found, not recomputed, because the files cannot be rebuilt
    like a table: a changed SECRET_KEY changes the tag but must not lose them."""
    existing = _folder_entries(DICOM, DICOM_DIR_RE, dataset=dataset.pk)
    return existing[0] if existing else f"{DICOM}/dataset-{dataset.pk}-{_tag('dicom', dataset.pk)}"


def dicom_dir(dataset) -> Path:
    return _local(dicom_name(dataset))


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
    """Store an upload (a Django File: a temporary upload file is moved, not read) as the dataset's original,
    under a random name with the file's extension (its own name is Dataset.original_name)."""
    suffix = Path(filename).suffix.lower()
    suffix = suffix if re.fullmatch(r"\.[a-z0-9]{1,8}", suffix) else ""
    dataset.original.save(f"{secrets.token_hex(16)}{suffix}", source, save=False)


def delete_original(dataset) -> None:
    dataset.original.delete(save=False)


def read_original_head(dataset, size: int) -> bytes:
    with dataset.original.open("rb") as fh:
        return fh.read(size)


# ---- Parquet ------------------------------------------------------------------------------------------
class AtomicParquet:
    """A Parquet file written a table at a time under a temporary name and renamed into place by
    commit(); leaving the ``with`` block without commit() removes the temporary file. ``statistics``: the
    column chunks' min/max statistics (nothing here reads them; a dataset's table is written without them,
    which saves a quarter of the writing time of text columns)."""

    def __init__(self, target: Path, statistics: bool = True):
        make_folder(target.parent)
        self.target = target
        self.statistics = statistics
        self.tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        self.writer: pq.ParquetWriter | None = None

    def __enter__(self) -> AtomicParquet:
        return self

    def write(self, table: pa.Table) -> None:
        writer = self.writer if self.writer is not None else self._open(table.schema)
        writer.write_table(table, row_group_size=ROW_GROUP)

    def _open(self, schema: pa.Schema | None) -> pq.ParquetWriter:
        self.writer = writer = pq.ParquetWriter(self.tmp, schema, compression="zstd", write_statistics=self.statistics)
        os.chmod(self.tmp, FILE_MODE)
        return writer

    def commit(self, empty_schema: pa.Schema | None = None) -> None:
        """Close and rename; with nothing written, an empty file of ``empty_schema``."""
        writer = self.writer if self.writer is not None else self._open(empty_schema)
        writer.close()
        self.writer = None
        self.tmp.replace(self.target)

    def __exit__(self, *exc) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.tmp.exists():
            self.tmp.unlink()


def write_string_table(frame: pd.DataFrame, target: Path) -> None:
    """A small frame stored whole, every column as strings (an Anatomy result's sensitive table)."""
    make_folder(target.parent)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        pq.write_table(pa.Table.from_arrays([pa.array(frame[c].astype(str).to_numpy(dtype=object), type=pa.string())
                                             for c in frame.columns], names=[str(c) for c in frame.columns]),
                       tmp, compression="zstd")
        os.chmod(tmp, FILE_MODE)
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)


def to_frame(table: pa.Table) -> pd.DataFrame:
    return pd.DataFrame({name: _text_object_column(table.column(i)) for i, name in enumerate(table.column_names)})


def _text_object_column(column: pa.ChunkedArray) -> np.ndarray:
    """A column as to_frame makes it: one str object per cell (None where null)."""
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    return column.to_numpy(zero_copy_only=False).astype(object)


def _categorical(column: pa.ChunkedArray) -> pd.Categorical | None:
    """A dictionary-encoded string column as a Categorical of its text (as the engine's CSV reader makes
    them); None when it holds a null (a Table takes such a column as text)."""
    if column.null_count or not pa.types.is_dictionary(column.type) or \
            not pa.types.is_string(column.type.value_type):
        return None
    return arrow_categorical(column)


def read_frame(path: Path, columns: list[str] | None = None, dictionary: bool = False) -> pd.DataFrame:
    """A stored table, whole (or the given columns of it). ``dictionary``: its string columns as Categoricals of
    their text, read from Parquet's dictionary pages (a Python string per distinct value, not per cell), for an
    engine Table only (which encodes them from the codes, as the CLI's reader gives them); a column holding a
    null comes as to_frame makes it. Everything else (pages, exports, risk) wants the default text columns."""
    if not dictionary:
        return to_frame(pq.read_table(path, columns=columns))
    names = columns if columns is not None else stored_columns(path)
    table = pq.read_table(path, columns=columns, read_dictionary=names)
    out = {}
    for i, name in enumerate(table.column_names):
        column = table.column(i)
        categorical = _categorical(column)
        out[name] = categorical if categorical is not None else _text_object_column(column)
    return pd.DataFrame(out, index=pd.RangeIndex(table.num_rows))


# A range that ends within this many rows of its first row group's start is decoded batch-wise, from that
# start only (a page of 20 or 50 rows near the top of a group: ~0.7 ms instead of ~6 ms for the whole group).
HEAD_ROWS = ROW_GROUP // 4


def read_rows(path: Path, start: int, stop: int, columns: list[str] | None = None) -> pd.DataFrame:
    """Rows [start, stop) of a stored table: only the row groups that hold them are read, and of a range near
    the start of its row group only the pages up to its end are decoded."""
    pf = pq.ParquetFile(path)
    groups: list[int] = []
    offsets: list[int] = []  # the first row of each of those groups
    offset = 0
    for g in range(pf.metadata.num_row_groups):
        n = pf.metadata.row_group(g).num_rows
        if offset + n > start and offset < stop:
            groups.append(g)
            offsets.append(offset)
        offset += n
    if not groups:
        return to_frame(pf.schema_arrow.empty_table().select(columns) if columns else pf.schema_arrow.empty_table())
    first = offsets[0]
    if stop - first <= HEAD_ROWS:
        batch = next(pf.iter_batches(batch_size=stop - first, row_groups=groups, columns=columns))
        return to_frame(pa.Table.from_batches([batch]).slice(start - first, stop - start))
    table = pf.read_row_groups(groups, columns=columns)
    return to_frame(table.slice(start - first, stop - start))


def iter_row_groups(path: Path):
    """The stored table a row group at a time, as frames."""
    pf = pq.ParquetFile(path)
    for g in range(pf.metadata.num_row_groups):
        yield to_frame(pf.read_row_group(g))


def iter_row_group_tables(path: Path, dictionary: bool = False):
    """The stored table a row group at a time, as Arrow tables; ``dictionary``: its text columns as Parquet's
    dictionary pages and codes (DictionaryArray), not a string per cell."""
    pf = pq.ParquetFile(path)
    if dictionary:
        texts = [f.name for f in pf.schema_arrow if pa.types.is_string(f.type)]
        pf = pq.ParquetFile(path, read_dictionary=texts)
    for g in range(pf.metadata.num_row_groups):
        yield pf.read_row_group(g)


def iter_batches(path: Path, batch_size: int = ROW_GROUP):
    """The stored table in frames of ``batch_size`` rows (a job streamed out of core)."""
    pf = pq.ParquetFile(path)
    for batch in pf.iter_batches(batch_size=batch_size):
        yield to_frame(pa.Table.from_batches([batch]))


def first_distinct(path: Path, columns: list[str], count: int, batch_size: int = 4096) -> dict[str, list[str]]:
    """Per column, its first ``count`` distinct non-empty values in order of appearance, all columns read
    together a batch at a time until each has its values (or the table ends): the columns page's samples."""
    found: dict[str, list[str]] = {c: [] for c in columns}
    if not columns:
        return found
    pf = pq.ParquetFile(path)
    wanted = list(columns)
    for batch in pf.iter_batches(batch_size=batch_size, columns=wanted):
        for name, values in zip(batch.schema.names, batch.columns):
            seen = found[name]
            if len(seen) >= count:
                continue
            for v in pc.unique(values).to_pylist():
                if v is not None and v.strip() != "" and v not in seen:
                    seen.append(v)
                    if len(seen) == count:
                        break
        if all(len(found[c]) >= count for c in wanted):
            break
    return found


def iter_column(path: Path, column: str, dictionary: bool = False):
    """One stored column, a row group at a time (Arrow arrays); ``dictionary``: a text column as Parquet's
    dictionary pages and codes (DictionaryArray), not a string per cell."""
    pf = pq.ParquetFile(path, read_dictionary=[column] if dictionary else None)
    for g in range(pf.metadata.num_row_groups):
        yield pf.read_row_group(g, columns=[column]).column(0)


def _decoded(values: pa.Array) -> pa.Array:
    """A DictionaryArray as the plain array of its values (anything else as it is)."""
    if pa.types.is_dictionary(values.type):
        return values.dictionary.take(values.indices)
    return values


def column_distinct(path: Path, column: str) -> pa.Array:
    """The distinct values of one stored column, in order of first appearance: a row group at a time,
    so memory follows the distinct values, not the rows. Read as dictionary codes: a row group's distinct
    values are those of its codes (hashing int32 codes, not a string per cell: 1M rows of a text column in
    ~20 ms instead of ~0.5 s), decoded to text once each."""
    seen: list[pa.Array] = []
    for values in iter_column(path, column, dictionary=True):
        seen.append(_decoded(pc.unique(values)))
        if len(seen) > 64:
            seen = [pc.unique(pa.chunked_array(seen))]
    if not seen:
        return pa.array([], type=pa.string())
    return pc.unique(pa.chunked_array(seen))


def stored_columns(path: Path) -> list[str]:
    return list(pq.ParquetFile(path).schema_arrow.names)


def read_integers(path: Path, column: str) -> np.ndarray:
    """One integer column of a stored table as an int64 array, without read_frame's str/object cells (a Python
    object per cell: 0.3 s instead of 0.07 s for the dataset rows of a 1,000,000-row result)."""
    return pq.read_table(path, columns=[column]).column(0).to_numpy().astype(np.int64, copy=False)


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
    """Written under a temporary name and renamed, so a reader never sees half a file (mkstemp: 0600)."""
    make_folder(path.parent)
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


def delete_names(names) -> None:
    """Remove the named files and folders (with everything in them); missing ones are skipped."""
    for name in names:
        if name and _local(name).is_dir():
            _delete_tree(name)
        else:
            _delete(name)


def existing_files(names) -> list[str]:
    """The files the names stand for that exist now (a folder: every file in it), sorted."""
    found: list[str] = []
    for name in names:
        path = _local(name) if name else None
        if path is None or not path.exists():
            continue
        if path.is_dir():
            found.extend(p.relative_to(media_root()).as_posix() for p in path.rglob("*") if p.is_file())
        else:
            found.append(name)
    return sorted(set(found))


def media_files() -> list[tuple[str, float]]:
    """Every file under MEDIA_ROOT as (name, modification time), for the orphan sweep and the tests."""
    root = media_root()
    out = []
    for folder, _, files in os.walk(root):
        for file in files:
            path = Path(folder) / file
            try:
                out.append((path.relative_to(root).as_posix(), path.stat().st_mtime))
            except OSError:  # removed meanwhile
                continue
    return sorted(out)


def remove_empty_parents(names) -> None:
    """The folders (below the top-level ones) that removing ``names`` left empty."""
    root = media_root()
    for name in names:
        folder = _local(name).parent
        while folder.parent != root and folder != root and root in folder.parents:
            try:
                folder.rmdir()
            except OSError:  # not empty, or gone already
                break
            folder = folder.parent


def prune_empty_folders(grace_seconds: float = 0) -> None:
    """Remove empty folders below the top-level ones (lattice caches, editing sessions) left by a sweep."""
    root, cutoff = media_root(), time.time() - grace_seconds
    for folder, dirs, files in os.walk(root, topdown=False):
        path = Path(folder)
        if path.parent == root or path == root or files or dirs:
            continue
        try:
            if path.stat().st_mtime <= cutoff:
                path.rmdir()
        except OSError:
            continue


# ---- a job's scratch folder and partial outputs --------------------------------------------------------------
# A running job's temporary files live in <ANONYMIZER_JOB_TMP>/<job id>/ (0700), outside MEDIA_ROOT: the engine
# is given the folder (RunSpec.scratch) and never writes to the system temp folder. The worker removes it when
# the job ends, whatever the ending; the heartbeat touches it, so a folder untouched for the stale limit is one
# whose worker died, and the sweep removes it (also when the job was deleted meanwhile).
def scratch_root() -> Path:
    return Path(settings.ANONYMIZER_JOB_TMP)


def job_scratch_path(job) -> Path:
    return scratch_root() / str(job.pk)


@contextmanager
def job_scratch(job) -> Iterator[Path]:
    """The job's scratch folder, fresh (what an earlier attempt left is discarded), removed on leaving."""
    folder = job_scratch_path(job)
    shutil.rmtree(folder, ignore_errors=True)
    make_folder(folder)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def touch_scratch(job_id) -> None:
    """The heartbeat: the job's worker is alive (see stale_scratch)."""
    try:
        os.utime(scratch_root() / str(job_id))
    except OSError:  # not made yet, or removed (the job ended)
        pass


def scratch_of(job) -> str | None:
    """The folder a job's handler gives the engine (RunSpec.scratch): the job's scratch folder while
    services.jobs.run_job runs it; None (the system temp folder) for a handler called on its own."""
    folder = job_scratch_path(job)
    return str(folder) if folder.is_dir() else None


def delete_job_scratch(job) -> None:
    shutil.rmtree(job_scratch_path(job), ignore_errors=True)


def stale_scratch(stale_seconds: float, now: float | None = None) -> list[Path]:
    """The scratch folders not touched for ``stale_seconds``: their worker died (a live one touches its
    job's folder with every heartbeat)."""
    root = scratch_root()
    if not root.is_dir():
        return []
    cutoff = (time.time() if now is None else now) - stale_seconds
    out = []
    for entry in sorted(root.iterdir()):
        try:
            if entry.is_dir() and entry.stat().st_mtime <= cutoff:
                out.append(entry)
        except OSError:  # removed meanwhile
            continue
    return out


def remove_scratch(folders) -> None:
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def partial_outputs(job) -> list[str]:
    """The job's outputs left half-written beside their targets (AtomicParquet's and write_string_table's
    ``.<name>.<pid>.tmp``) by a worker that died while writing them."""
    folder = media_root() / RESULTS
    if not folder.is_dir():
        return []
    prefixes = tuple(f".{Path(name).name}." for name in (result_name(job), _sensitive_table_name(result_name(job))))
    return [f"{RESULTS}/{entry}" for entry in sorted(os.listdir(folder))
            if entry.endswith(".tmp") and entry.startswith(prefixes)]


PARTIAL_RE = re.compile(r"^\.job-(?P<job>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(-st)?\.parquet\.\d+\.tmp$")


def old_partial_outputs(stale_seconds: float, now: float | None = None) -> dict[str, list[str]]:
    """Half-written outputs of any job not written to for ``stale_seconds``, by job id (the sweep removes
    those of jobs that no longer run: deleted, or ended, after their worker died)."""
    folder = media_root() / RESULTS
    if not folder.is_dir():
        return {}
    cutoff = (time.time() if now is None else now) - stale_seconds
    out: dict[str, list[str]] = {}
    for entry in sorted(os.listdir(folder)):
        match = PARTIAL_RE.match(entry)
        try:
            if match and (folder / entry).stat().st_mtime <= cutoff:
                out.setdefault(match.group("job"), []).append(f"{RESULTS}/{entry}")
        except OSError:  # removed meanwhile
            continue
    return out


def discard_leftovers(job) -> None:
    """What a dead worker left of a job besides its stored files: scratch folder and partial outputs."""
    delete_job_scratch(job)
    delete_names(partial_outputs(job))


# ---- the files of each kind of object -----------------------------------------------------------------------
# Each returns names (files or folders) relative to MEDIA_ROOT, computed from the object's own fields, so that
# they work on an object whose row was just deleted (services.erasure collects them in post_delete).
DRAFT_RE = re.compile(r"^(?P<user>\d+)-(?P<hierarchy>\d+)-[0-9a-f]{32}$")
PENDING_RE = re.compile(r"^(?P<user>\d+)-[0-9a-f]{32}\.json$")
JOB_FILE_RE = re.compile(rf"^{RESULTS}/job-(?P<job>[0-9a-f]{{8}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{12}})"
                         r"(\.parquet|-st\.parquet|-lattice(/.*)?)$")
TABLE_RE = re.compile(rf"^{TABLES}/dataset-(?P<dataset>\d+)(-[0-9a-f]+)?\.parquet$")
DICOM_DIR_RE = re.compile(r"^dataset-(?P<dataset>\d+)-[0-9a-f]+$")
TABLE_ENTRY_RE = re.compile(r"^dataset-(?P<dataset>\d+)(-[0-9a-f]+)?\.parquet$")


def _folder_entries(folder: str, pattern: re.Pattern, **groups) -> list[str]:
    """Names in ``folder`` matching ``pattern`` whose named groups equal ``groups``."""
    path = media_root() / folder
    if not path.is_dir():
        return []
    out = []
    for entry in sorted(os.listdir(path)):
        match = pattern.match(entry)
        if match and all(match.group(key) == str(value) for key, value in groups.items()):
            out.append(f"{folder}/{entry}")
    return out


def dataset_files(dataset) -> list[str]:
    """The upload as it came and its parsed table (under its current, an earlier and its pre-tag name), and a
    DICOM dataset's files."""
    names = [table_name(dataset), f"{TABLES}/dataset-{dataset.pk}.parquet", dicom_name(dataset)]
    # tables and DICOM folders named under an earlier SECRET_KEY's tag
    names += [name for name in _folder_entries(TABLES, TABLE_ENTRY_RE, dataset=dataset.pk)
              + _folder_entries(DICOM, DICOM_DIR_RE, dataset=dataset.pk) if name not in names]
    if dataset.original.name:
        names.append(dataset.original.name)
    return names


def job_files(job) -> list[str]:
    """A job's stored output, an Anatomy result's sensitive table beside it, a lattice job's cache."""
    name = result_name(job)
    return [name, _sensitive_table_name(name), lattice_cache_name(job)]


def result_files(result) -> list[str]:
    name = result.output.name
    return [name, _sensitive_table_name(name)] if name else []


def hierarchy_files(hierarchy) -> list[str]:
    """The editing sessions of the hierarchy editor open on this hierarchy."""
    return _folder_entries(DRAFTS, DRAFT_RE, user=hierarchy.owner_id, hierarchy=hierarchy.pk)


def user_files(user) -> list[str]:
    """What belongs to a user but to none of their objects: editing sessions, uploads awaiting a resolution."""
    return _folder_entries(DRAFTS, DRAFT_RE, user=user.pk) + _folder_entries(PENDING, PENDING_RE, user=user.pk)


def delete_job_files(job) -> None:
    """Every file a job produced: its stored output (and an Anatomy result's sensitive table) and, for a
    lattice job, the cached lattice and node views. The database rows are the caller's business."""
    names = job_files(job)
    result = getattr(job, "result", None)  # no Result yet: a reverse one-to-one raises an AttributeError
    if result is not None:
        names += result_files(result)
    delete_names(names)


def delete_result_files(result) -> None:
    delete_names(result_files(result))


def delete_dataset_files(dataset) -> None:
    """Every file of a dataset: the original upload, its parsed table, and the files of its jobs."""
    for job in dataset.jobs.all():
        delete_job_files(job)
    delete_names(dataset_files(dataset))


def delete_hierarchy_files(hierarchy) -> None:
    delete_names(hierarchy_files(hierarchy))


def delete_user_files(user) -> None:
    """The user's own files; those of their datasets, jobs and hierarchies go with each of them."""
    delete_names(user_files(user))
