"""Datasets: an upload stored as it came and parsed into Parquet, its columns described (type inferred,
identifying role suggested), its rows read a page at a time, and its configuration (roles, types,
hierarchy bindings) turned into the engine's Table and hierarchies."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from django.conf import settings
from django.core.files.base import ContentFile, File
from django.db import transaction

from hierarchy_editor.models import Hierarchy

from .. import engine
from ..engine import Format, InputError, Role, Table
from ..engine.model.missing import NA_MARKERS
from ..models import Column, Dataset
from . import identifier_suggestions, ingestion, storage
from .column_profile import ColumnProfile

DISTINCT_SLICE = 200_000


def _limits() -> dict:
    return {"caps": ingestion.limits(rows=True)}


def shorten(text: str, limit: int | None) -> str:
    """A name cut to what the database column holds, the cut marked with an ellipsis (an extension kept);
    ``limit`` None (a column without a maximum length): unchanged."""
    if limit is None or len(text) <= limit:
        return text
    suffix = Path(text).suffix if len(Path(text).suffix) < 16 else ""
    return text[: limit - len(suffix) - 1] + "…" + suffix


def create_dataset(owner, source, filename: str, name: str | None = None, fmt: Format | None = None,
                   is_demo: bool = False, header: bool | None = None) -> Dataset:
    """Store the original upload untouched, parse it from disk into Parquet, describe every column.

    ``source`` is bytes, a Django File (an upload: a temporary file is moved, not read) or a path.
    ``header``: the user's choice over the sniffed one (None: sniffed). Names longer than their database
    columns are shortened (the dataset name and the original file name)."""
    if isinstance(source, (bytes, bytearray)):
        source = ContentFile(bytes(source))
    elif isinstance(source, (str, Path)):
        source = File(open(source, "rb"))
    size = source.size
    limit = settings.ANONYMIZER_MAX_UPLOAD_MB * 1024 * 1024
    if size > limit:
        raise InputError(f"{filename}: {size / 1048576:.1f} MB, more than the limit of "
                         f"{settings.ANONYMIZER_MAX_UPLOAD_MB} MB")
    name_limit = Dataset._meta.get_field("name").max_length
    file_limit = Dataset._meta.get_field("original_name").max_length
    dataset = Dataset(owner=owner, name=shorten(name or Path(filename).stem, name_limit),
                      original_name=shorten(filename, file_limit), size_bytes=size, is_demo=is_demo)
    storage.save_original(dataset, filename, source)
    staging = storage.staging_path()
    profile = ColumnProfile()
    try:
        fmt, n_rows, columns = ingestion.store_table_file(storage.original_path(dataset), filename, fmt, staging,
                                                          profile, header=header, **_limits())
        with transaction.atomic():
            apply_format(dataset, fmt, n_rows, len(columns))
            dataset.save()
            describe_columns(dataset, staging, profile)
        storage.move(staging, storage.table_path(dataset))
    except BaseException:
        storage.delete_original(dataset)
        storage.discard(staging)
        raise
    return dataset


def reformat_dataset(dataset: Dataset, fmt: Format) -> Dataset:
    """Re-read the original with user-chosen delimiter/encoding/header; columns are described anew."""
    staging = storage.staging_path()
    profile = ColumnProfile()
    try:
        fmt, n_rows, columns = ingestion.store_table_file(storage.original_path(dataset), dataset.original_name, fmt,
                                                          staging, profile, **_limits())
        with transaction.atomic():
            apply_format(dataset, fmt, n_rows, len(columns))
            dataset.save()
            dataset.columns.all().delete()
            describe_columns(dataset, staging, profile)
        storage.move(staging, storage.table_path(dataset))
    finally:
        storage.discard(staging)
    return dataset


def apply_format(dataset: Dataset, fmt: Format, n_rows: int, n_columns: int) -> None:
    dataset.kind, dataset.delimiter, dataset.encoding, dataset.has_header = (
        fmt.kind, fmt.delimiter, fmt.encoding, fmt.header)
    dataset.n_rows, dataset.n_columns = n_rows, n_columns


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


def describe_columns(dataset: Dataset, path: Path, profile: ColumnProfile | None = None) -> None:
    """The Column rows of the stored table at ``path``: type, distinct count, suggested role. ``profile``: the
    distinct values and counts gathered while the table was written (else read from the stored table)."""
    cols = []
    n = dataset.n_rows
    for i, name in enumerate(storage.stored_columns(path)):
        distinct = profile.distinct(name) if profile is not None else storage.column_distinct(path, name)
        inferred = _infer_type(distinct)
        role = Role.IDENTIFYING if n > 1 and len(distinct) == n else Role.INSENSITIVE
        cols.append(Column(dataset=dataset, position=i, name=name, inferred_type=inferred, type=inferred,
                           role=role.value, distinct_count=len(distinct)))
        del distinct
    # names, patient ids, e-mails, ...: the detection's high-confidence identifiers pre-selected as identifying
    identifier_suggestions.preselect(identifier_suggestions.detect_file(path, profile), cols)
    Column.objects.bulk_create(cols)


# ---- reading the stored table ------------------------------------------------------------------------
def stored_table(dataset: Dataset) -> Path:
    """The Parquet file of the dataset; rebuilt from the original when missing (or an old cache)."""
    path = storage.table_path(dataset)
    if not path.exists():
        ingestion.write_parquet(ingestion.iter_table_file(storage.original_path(dataset), dataset.original_name,
                                                          dataset_format(dataset)), path)
    return path


def load_frame(dataset: Dataset, columns: list[str] | None = None, dictionary: bool = False) -> pd.DataFrame:
    """The parsed table, whole (for a run); pages use dataset_rows / column readers instead. ``dictionary``: text
    columns as Categoricals (storage.read_frame), for building an engine Table only."""
    return storage.read_frame(stored_table(dataset), columns, dictionary=dictionary)


def dataset_rows(dataset: Dataset, start: int, stop: int) -> pd.DataFrame:
    return storage.read_rows(stored_table(dataset), start, stop)


def dataset_rows_at(dataset: Dataset, rows: np.ndarray) -> pd.DataFrame:
    """The dataset's rows at the given positions (increasing, as published rows are): only the row groups
    between the first and the last are read."""
    rows = np.asarray(rows, dtype=np.int64)
    if not len(rows):
        return storage.read_rows(stored_table(dataset), 0, 0)
    lo, hi = int(rows.min()), int(rows.max()) + 1
    return storage.read_rows(stored_table(dataset), lo, hi).iloc[rows - lo].reset_index(drop=True)


def dataset_columns(dataset: Dataset) -> list[str]:
    return storage.stored_columns(stored_table(dataset))


def columns_samples(dataset: Dataset, columns: list[str], count: int) -> dict[str, list[str]]:
    """Per column, its first ``count`` distinct non-empty values, all columns in one pass over the table's
    first rows (batches are read until every column has its values)."""
    return storage.first_distinct(stored_table(dataset), columns, count)


def missing_counts(dataset: Dataset, columns: list[str]) -> dict[str, int]:
    """Per column, its missing cells (blanks and NA markers, engine.model.missing: what a run reads as the missing
    value): the columns page's count. One pass over the stored columns, each batch's distinct values tested
    against the markers and only those counted; kept in the cache while the stored file is unchanged."""
    from django.core.cache import cache


    path = stored_table(dataset)
    stat = path.stat()
    key = f"missing-counts:{dataset.pk}:{stat.st_mtime_ns}:{stat.st_size}:{hash(tuple(columns))}"
    cached = cache.get(key)
    if cached is not None:
        return cached
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    # the markers are ASCII, so Arrow's lower-casing finds what engine.model.missing's casefold finds
    folded = pa.array(sorted({m.strip().casefold() for m in NA_MARKERS}), type=pa.string())
    counts = dict.fromkeys(columns, 0)
    if not columns:
        return counts
    for batch in pq.ParquetFile(path).iter_batches(batch_size=65_536, columns=list(columns)):
        for name, values in zip(batch.schema.names, batch.columns):
            n = values.null_count
            if pa.types.is_dictionary(values.type):
                values = values.cast(values.type.value_type)
            if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
                distinct = pc.unique(values)  # the markers looked for among the distinct texts, then counted
                marked = pc.filter(distinct, pc.is_in(pc.utf8_lower(pc.utf8_trim_whitespace(distinct)),
                                                      value_set=folded.cast(values.type)))
                if len(marked):
                    n += int(pc.sum(pc.is_in(values, value_set=marked)).as_py() or 0)
            counts[name] += n
    # the key names the file's size and time: a re-read table is counted anew, so the count can be kept long
    cache.set(key, counts, 30 * 24 * 3600)
    return counts


def distinct_values(dataset: Dataset, column: str) -> pd.Series:
    """Distinct values of a column in order of first appearance (type checks need no more)."""
    return pd.Series(storage.column_distinct(stored_table(dataset), column).to_pylist(), dtype=object)


def dataset_format(dataset: Dataset) -> Format:
    return Format(dataset.kind, dataset.delimiter, dataset.encoding, dataset.has_header)


def detected_format(dataset: Dataset) -> Format | None:
    """What sniffing the original says now (shown beside the format in use)."""
    try:
        return engine.sniff(storage.read_original_head(dataset, ingestion.SNIFF_BYTES), dataset.original_name)
    except (OSError, engine.EngineError):
        return None


# ---- configuration ------------------------------------------------------------------------------------
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
    wanted = {m.get("column") for m in (models or []) if m.get("distance") == "hierarchical"}
    out = {}
    for c in config["columns"]:
        if c["role"] != Role.QUASI_IDENTIFYING.value and c["name"] not in wanted:
            continue
        if c.get("hierarchy_snapshot"):  # deleted since the job was made: its text was kept (snapshot_hierarchy)
            out[c["name"]] = Hierarchy(owner=owner, **c["hierarchy_snapshot"]).to_engine(c["name"])
        elif c.get("hierarchy"):
            h = Hierarchy.objects.get(pk=c["hierarchy"], owner=owner)
            out[c["name"]] = h.to_engine(c["name"])
    return out


def snapshot_hierarchy(config: dict, hierarchy) -> bool:
    """Keep the text of a hierarchy about to be deleted in a job's configuration, so that the job's lattice
    and comparisons can still be computed; True when the configuration used it."""
    changed = False
    for c in config.get("columns", []):
        if c.get("hierarchy") == hierarchy.pk:
            c["hierarchy"] = None
            c["hierarchy_snapshot"] = {"name": hierarchy.name, "source_name": hierarchy.source_name,
                                       "content": hierarchy.content, "delimiter": hierarchy.delimiter,
                                       "on_conflict": hierarchy.on_conflict}
            changed = True
    return changed


def dataset_table(dataset: Dataset) -> tuple[Table, dict]:
    """The dataset as an engine Table with its current roles/types, and the user's hierarchies."""
    config = dataset_config(dataset)
    return table_from_config(load_frame(dataset, dictionary=True), config, dataset.name), hierarchies_from_config(
        dataset.owner, config)
