"""Set-valued datasets: a transaction file (one record of items per line, an optional record id first) or
a table with a set-valued column (items separated inside the cell by a second delimiter).

The layout is detected from the file's first lines and can be overridden: a file whose lines split into
a varying number of fields is a transaction file, one with a constant number is a table, in which a
column whose cells mostly hold a second delimiter (``|``, ``;`` or ``,``) is proposed as set-valued.
A transaction dataset stores its original untouched and, as its Parquet table, the records as parsed
(``record id`` and ``items`` joined by the item delimiter), so the generic pages and erasure apply.
Records are read with the engine's parser (engine.setvalued.parse_transactions), whose messages name
the file and line; nothing is stored when it refuses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from django.conf import settings
from django.core.files.base import ContentFile, File
from django.db import transaction

from hierarchy_editor.forms import size_limits
from hierarchy_editor.models import Hierarchy, fit_name
from hierarchy_editor.models import Hierarchy as LibraryHierarchy

from ..engine import EngineError, InputError, KAnonymity
from ..engine.model.formats import detect_format, read_hierarchy_text, write_hierarchy
from ..engine.run.gate import ITEMS, RECORD_ID
from ..engine.run.spec import RunSpec, SetColumn, TransactionSet
from ..engine.setvalued import SET_ALGORITHMS, Transactions, column_transactions, parse_transactions
from ..engine.setvalued.item_hierarchy import ITEM_BUILDERS
from ..engine.setvalued.item_hierarchy import build_item_hierarchy as build
from ..models import Column, Dataset, Job
from . import datasets, storage

ITEM_DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe", " ": "space"}
SET_DELIMITERS = ("|", ";", ",")  # a set-valued column's items inside a cell
DETECT_LINES = 200
DETECT_BYTES = 256 * 1024
TOP_ITEMS = 30
REPEATED_ITEMS_RULE = ("a record is anonymized and published as the set of its items: an item repeated in a "
                       "record counts once (k^m-anonymity counts sets)")


@dataclass(frozen=True)
class Layout:
    """What a text file holds: "table" (``delimiter`` between its cells) or "transactions" (between items)."""

    layout: str
    delimiter: str
    record_id: bool = False


def delimiter_label(delimiter: str) -> str:
    return ITEM_DELIMITERS.get(delimiter, repr(delimiter))


# ---- reading the text ------------------------------------------------------------------------------------
def read_text(path: Path, filename: str, limit: int | None = None) -> str:
    """The file as text (UTF-8, a BOM allowed); a binary file is refused naming its line."""
    with open(path, "rb") as fh:
        data = fh.read() if limit is None else fh.read(limit)
    if not data.strip():
        raise InputError(f"{filename}: the file is empty")
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise InputError(f"{filename}, line {line}: a NUL byte: this is a binary file, not text with one record "
                         f"per line")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if limit is not None and exc.start >= len(data) - 4:  # a character cut by the limit
            text = data[:exc.start].decode("utf-8-sig")
        else:
            line = data.count(b"\n", 0, exc.start) + 1
            raise InputError(f"{filename}, line {line}: not UTF-8 text (byte {exc.start}); save the file as "
                             f"UTF-8") from None
    return text


def detect_layout(text: str) -> Layout:
    """The layout of a file from its first lines (see the module's docstring)."""
    lines = [line for line in text.splitlines() if line.strip()][:DETECT_LINES]
    best, best_lines = ",", 0
    for d in ITEM_DELIMITERS:  # the one most lines hold; a space only when no other one occurs (items have spaces)
        holding = sum(1 for line in lines if d in line)
        if holding > best_lines and (d != " " or best_lines == 0):
            best, best_lines = d, holding
    counts = {len(line.split(best)) for line in lines}
    if len(lines) > 1 and len(counts) == 1 and counts != {1}:
        return Layout(Dataset.TABLE, best)  # its set-valued column is found in the stored table
    fields = [[f.strip() for f in line.split(best)] for line in lines]
    firsts = [f[0] for f in fields]
    others = {x for f in fields for x in f[1:]}
    record_id = (len(lines) > 1 and len(set(firsts)) == len(firsts) and not (set(firsts) & others)
                 and all(len(f) > 1 for f in fields))
    return Layout(Dataset.TRANSACTIONS, best, record_id)


# ---- transaction datasets ----------------------------------------------------------------------------------
def parse(path: Path, filename: str, delimiter: str, record_id: bool) -> Transactions:
    return parse_transactions(read_text(path, filename).splitlines(), delimiter, has_id=record_id, where=filename)


def transactions(dataset: Dataset) -> Transactions:
    """A transaction dataset's records, parsed from its original."""
    return parse(storage.original_path(dataset), dataset.original_name, dataset.item_delimiter, dataset.record_id)


def _records_frame(tx: Transactions, delimiter: str) -> pd.DataFrame:
    frame = pd.DataFrame({ITEMS: [delimiter.join(r) for r in tx.records()]})
    if tx.ids is not None:
        frame.insert(0, RECORD_ID, [str(i) for i in tx.ids])
    return frame


def _store_records(dataset: Dataset, tx: Transactions, delimiter: str, record_id: bool) -> None:
    """The dataset's row and its Parquet table as a transaction dataset (no column rows)."""
    staging = storage.staging_path()
    try:
        storage.write_string_table(_records_frame(tx, delimiter), staging)
        with transaction.atomic():
            dataset.layout, dataset.item_delimiter, dataset.record_id = Dataset.TRANSACTIONS, delimiter, record_id
            dataset.kind, dataset.delimiter = "csv", delimiter
            dataset.n_rows, dataset.n_columns = tx.n, 2 if record_id else 1
            dataset.save()
            dataset.columns.all().delete()
        storage.move(staging, storage.table_path(dataset))
    finally:
        storage.discard(staging)


def create_transaction_dataset(owner, source, filename: str, delimiter: str, record_id: bool,
                               name: str | None = None) -> Dataset:
    """Store the upload as it came and its records as parsed; nothing stays when the file is refused."""
    if isinstance(source, (bytes, bytearray)):
        source = ContentFile(bytes(source))
    limit = settings.ANONYMIZER_MAX_UPLOAD_MB * 1024 * 1024
    if source.size > limit:
        raise InputError(f"{filename}: {source.size / 1048576:.1f} MB, more than the limit of "
                         f"{settings.ANONYMIZER_MAX_UPLOAD_MB} MB")
    dataset = Dataset(owner=owner, name=name or Path(filename).stem, original_name=filename, size_bytes=source.size)
    storage.save_original(dataset, filename, source)
    try:
        tx = parse(storage.original_path(dataset), filename, delimiter, record_id)
        _store_records(dataset, tx, delimiter, record_id)
    except BaseException:
        storage.delete_original(dataset)
        if dataset.pk:
            Dataset.objects.filter(pk=dataset.pk).delete()
        raise
    return dataset


def upload(owner, source: File, filename: str, layout: str = "auto", delimiter: str = "auto",
           record_id: str = "auto", name: str | None = None) -> Dataset:
    """A set-valued upload: the layout detected (or as chosen), then stored as a transaction dataset or as a
    table whose set-valued column is marked."""
    if Path(filename).suffix.lower() == ".xlsx":  # a workbook is a table
        if layout == Dataset.TRANSACTIONS:
            raise InputError(f"{filename}: an .xlsx workbook holds a table; upload transactions as a text file "
                             f"(one record per line) or choose the table layout")
        return _table(owner, source, filename, delimiter, name)
    path = getattr(source, "temporary_file_path", None)
    if path is not None:
        head = read_text(Path(path()), filename, DETECT_BYTES)
    else:
        source.seek(0)
        data = source.read(DETECT_BYTES)
        source.seek(0)
        head = _head_text(data, filename)
    found = detect_layout(head)
    chosen = found.layout if layout == "auto" else layout
    if chosen == Dataset.TRANSACTIONS:
        d = found.delimiter if delimiter == "auto" else delimiter
        rid = found.record_id if record_id == "auto" else record_id == "yes"
        return create_transaction_dataset(owner, source, filename, d, rid, name)
    return _table(owner, source, filename, delimiter, name)


def _table(owner, source, filename: str, delimiter: str, name: str | None) -> Dataset:
    """A table; the column whose cells mostly hold a set delimiter (or the chosen one) is marked set-valued."""
    dataset = datasets.create_dataset(owner, source, filename, name=name)
    found = detect_set_column(dataset, SET_DELIMITERS if delimiter == "auto" else (delimiter,))
    if found is not None:
        try:
            mark_set_column(dataset, *found)
        except InputError:
            pass  # detected, but some cell holds no item: the columns page offers the marking, with the reason
    return dataset


def detect_set_column(dataset: Dataset, delimiters=SET_DELIMITERS) -> tuple[str, str] | None:
    """A column of a stored table whose first cells mostly hold a set delimiter: (column, delimiter)."""
    head = datasets.dataset_rows(dataset, 0, DETECT_LINES)
    for column in head.columns:
        cells = [str(v) for v in head[column].tolist() if str(v).strip()]
        for d in delimiters:
            holding = sum(1 for v in cells if d in v)
            if holding and holding * 2 >= len(cells):
                return str(column), d
    return None


def _head_text(data: bytes, filename: str) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile() as fh:
        fh.write(data)
        fh.flush()
        return read_text(Path(fh.name), filename, DETECT_BYTES)


def relayout(dataset: Dataset, layout: str, delimiter: str, record_id: bool) -> Dataset:
    """Read the original again as another layout (the preview's override); refused input changes nothing."""
    if layout == Dataset.TRANSACTIONS:
        tx = parse(storage.original_path(dataset), dataset.original_name, delimiter, record_id)
        _store_records(dataset, tx, delimiter, record_id)
        return dataset
    fmt = datasets.detected_format(dataset)
    if fmt is None:
        raise InputError(f"{dataset.original_name}: the file cannot be read as a table")
    with transaction.atomic():
        dataset.layout, dataset.item_delimiter, dataset.record_id = Dataset.TABLE, "", False
        datasets.reformat_dataset(dataset, fmt)
    return dataset


# ---- a table's set-valued column ------------------------------------------------------------------------------
def set_column(dataset: Dataset) -> Column | None:
    """The table's set-valued column, if one is marked."""
    return dataset.columns.exclude(item_delimiter="").first()


def column_records(dataset: Dataset, column: str, delimiter: str) -> Transactions:
    values = datasets.load_frame(dataset, [column])[column].astype(str).tolist()
    return column_transactions(values, delimiter, column, where=dataset.original_name)


def mark_set_column(dataset: Dataset, column: str, delimiter: str) -> Column:
    """Mark ``column`` set-valued (items separated by ``delimiter``); it becomes insensitive, the role whose
    items k^m-anonymity protects within every class. Any other marking is cleared (one set column)."""
    col = dataset.columns.filter(name=column).first()
    if col is None:
        raise InputError(f"{dataset.original_name}: no column {column!r}")
    column_records(dataset, column, delimiter)  # every cell holds items, the delimiter splits some
    with transaction.atomic():
        dataset.columns.exclude(pk=col.pk).update(item_delimiter="")
        col.item_delimiter, col.role = delimiter, "insensitive"
        col.save(update_fields=["item_delimiter", "role"])
    return col


def unmark_set_column(dataset: Dataset) -> None:
    dataset.columns.update(item_delimiter="")


# ---- the preview's figures ------------------------------------------------------------------------------------
def figures(tx: Transactions, top: int = TOP_ITEMS) -> dict:
    """Records, distinct items, items per record (as sets: min/mean/max), records repeating an item, and the
    most frequent items (records holding each)."""
    sets = tx.distinct()
    lengths = sets.lengths
    frequencies = tx.item_frequencies()
    return {
        "records": tx.n,
        "items": int(len(tx.items)),
        "per_record_min": int(lengths.min()) if tx.n else 0,
        "per_record_mean": float(lengths.mean()) if tx.n else 0.0,
        "per_record_max": int(lengths.max()) if tx.n else 0,
        "repeated_records": tx.repeated_records(),
        "repeated_rule": REPEATED_ITEMS_RULE,
        "top_items": list(frequencies.items())[:top],
    }


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def longest_record(tx: Transactions) -> int:
    return int(tx.distinct().lengths.max()) if tx.n else 0


def missing_items(tx: Transactions, hierarchy, where: str, record: str = "record") -> None:
    """Refuse an item hierarchy that misses an item of the data, naming the item and its first record."""
    index = hierarchy.leaf_index
    for r in range(tx.n):
        for item in tx.record(r):
            if item not in index:
                whose = f"record {tx.ids[r]!r}" if tx.ids is not None else f"{record} {r + 1}"
                raise InputError(f"item hierarchy {hierarchy.name!r} has no item {item!r} ({where}, {whose})")


# ---- runs -----------------------------------------------------------------------------------------------------
def hierarchy_snapshot(hierarchy) -> dict | None:
    """An item hierarchy's text, kept with the job (a later edit or deletion does not change the run)."""
    if hierarchy is None:
        return None
    return {"name": hierarchy.name, "source_name": hierarchy.source_name, "content": hierarchy.content,
            "delimiter": hierarchy.delimiter, "on_conflict": hierarchy.on_conflict}


def item_hierarchy(owner, snapshot: dict | None):
    return None if not snapshot else Hierarchy(owner=owner, **snapshot).to_engine("items")


def _check_set_run(tx: Transactions, k: int, m: int, algorithm: str, hierarchy, where: str, record: str,
                   delimiter: str) -> None:
    KAnonymity(k)
    if algorithm not in SET_ALGORITHMS:
        raise InputError(f"unknown set-valued algorithm {algorithm!r}; available: {', '.join(SET_ALGORITHMS)}")
    if m < 1:
        raise InputError(f"m must be at least 1, got {m}")
    longest = longest_record(tx)
    if m > longest:
        raise InputError(f"m={m} is larger than the longest record ({longest} distinct items): no itemset of {m} "
                         f"items can occur; choose m <= {longest}")
    if k > tx.n:
        raise InputError(f"k={k} is larger than the dataset's {tx.n} record{'' if tx.n == 1 else 's'}")
    if algorithm == "apriori":
        if hierarchy is None:
            raise InputError("Apriori needs an item hierarchy: choose one (or dynamic hierarchies)")
        tree = hierarchy.to_engine(hierarchy.name)
        missing_items(tx, tree, where, record)
        clash = next((str(x) for labels in tree.labels[1:] for x in labels if delimiter in str(x)), None)
        if clash is not None:
            raise InputError(f"item hierarchy {hierarchy.name!r}: the generalized item {clash!r} contains the item "
                             f"delimiter {delimiter!r}; choose a hierarchy whose labels do not")


def create_set_job(dataset: Dataset, algorithm: str, k: int, m: int, item_suppression: bool = True,
                   hierarchy=None, numeric_items: bool = False) -> Job:
    """A queued k^m run of a transaction dataset (a Job of kind run: the same handler, pipeline and gate)."""
    tx = transactions(dataset)
    _check_set_run(tx, k, m, algorithm, hierarchy, dataset.original_name, "record", dataset.item_delimiter)
    config = {"columns": [], "layout": Dataset.TRANSACTIONS, "item_delimiter": dataset.item_delimiter,
              "record_id": dataset.record_id, "item_hierarchy": hierarchy_snapshot(hierarchy)}
    options = {"m": m, "item_suppression": bool(item_suppression)}
    if numeric_items and algorithm == "dynamic":
        bad = next((str(x) for x in tx.items if not _is_number(str(x))), None)
        if bad is not None:
            raise InputError(f"{dataset.original_name}: item {bad!r} is not a number; untick 'Items are numbers' "
                             f"to group the items as sets")
        options["numeric_items"] = True
    return Job.objects.create(owner=dataset.owner, dataset=dataset, kind=Job.RUN, algorithm=algorithm, k=k,
                              options=options, config=config)


def set_column_config(dataset: Dataset, k: int, m: int, algorithm: str, hierarchy=None) -> dict:
    """The mixed mode's part of a job's configuration: the set-valued column made k^m-anonymous within every
    class; checked now (role, m against the longest cell, the hierarchy covering every item)."""
    col = set_column(dataset)
    if col is None:
        raise InputError("no set-valued column: mark one on the columns page")
    if col.role != "insensitive":
        raise InputError(f"set-valued column {col.name!r} is {col.role}; mark it insensitive: its items are "
                         f"protected by k^m-anonymity within each class")
    tx = column_records(dataset, col.name, col.item_delimiter)
    _check_set_run(tx, k, m, algorithm, hierarchy, f"column {col.name!r}", "row", col.item_delimiter)
    return {"column": col.name, "delimiter": col.item_delimiter, "m": m, "algorithm": algorithm,
            "item_hierarchy": hierarchy_snapshot(hierarchy)}


def set_column_spec(owner, config: dict):
    """The engine's SetColumn of a job's configuration (None without a set-valued column)."""
    sc = config.get("set_column")
    if not sc:
        return None
    return SetColumn(sc["column"], sc["delimiter"], int(sc["m"]), sc["algorithm"],
                     item_hierarchy(owner, sc.get("item_hierarchy")))


def transaction_spec(job: Job):
    """The RunSpec of a transaction dataset's job."""
    config, dataset = job.config, job.dataset
    tx = parse(storage.original_path(dataset), dataset.original_name, config["item_delimiter"], config["record_id"])
    records = TransactionSet(tx, int(job.options["m"]), job.algorithm, item_hierarchy(job.owner,
                             config.get("item_hierarchy")), bool(job.options.get("item_suppression", True)),
                             config["item_delimiter"], dataset.name, bool(job.options.get("numeric_items", False)))
    return RunSpec.build(records, k=job.k)


# ---- item hierarchies ---------------------------------------------------------------------------------------
def dataset_items(dataset: Dataset) -> tuple[Transactions, str, str]:
    """The records of items of a dataset (a transaction file, or a table's set-valued column), where they
    come from and how a record is called in messages."""
    if dataset.is_transactions:
        return transactions(dataset), dataset.original_name, "record"
    col = set_column(dataset)
    if col is None:
        raise InputError("no set-valued column: mark one first")
    return column_records(dataset, col.name, col.item_delimiter), f"{dataset.original_name}, column {col.name!r}", "row"


def _save_item_hierarchy(owner, name: str, hierarchy, source_name: str, source_format: str = "arx"):
    """The hierarchy as a library entry (ARX text), usable as an item hierarchy and in the tree editor."""
    row = Hierarchy.from_text(owner, fit_name(name), write_hierarchy(hierarchy, "arx"), source_name=source_name,
                              delimiter=";")
    row.source_format = source_format
    row.save()
    return row


def build_item_hierarchy(dataset: Dataset, kind: str, options: dict, name: str = ""):
    """An item hierarchy built from the dataset's items (engine.setvalued.item_hierarchy) into the library."""
    if kind not in ITEM_BUILDERS:
        raise InputError(f"builder {kind!r} does not apply to items; choose one of {', '.join(ITEM_BUILDERS)}")
    tx, _, _ = dataset_items(dataset)
    label = name or f"{dataset.name} items ({kind})"
    limit = getattr(settings, "HIERARCHY_BUILDER_MAX_INTERVALS", None)
    hierarchy = build(tx, kind, label, **options, max_intervals=limit)
    return _save_item_hierarchy(dataset.owner, label, hierarchy, f"built from {dataset.original_name}")


def covering_hierarchies(dataset: Dataset, hierarchies) -> list:
    """The library entries that can generalize this dataset's items: item hierarchies whose leaves hold every
    item (a relational hierarchy such as education covers none, so it is not offered). A dataset whose items
    cannot be read gets none; an entry that does not parse is left out."""
    try:
        tx, _, _ = dataset_items(dataset)
    except InputError:
        return []
    items = {str(x) for x in tx.items}
    out = []
    for h in hierarchies:
        if h.leaves and h.leaves < len(items):
            continue  # fewer leaves than items: cannot cover them (no parse needed)
        try:
            leaves = h.to_engine("items").leaf_index
        except (InputError, EngineError):
            continue
        if all(x in leaves for x in items):
            out.append(h)
    return out


def upload_item_hierarchy(dataset: Dataset, text: str, filename: str):
    """An uploaded item hierarchy (any supported format, detected) into the library, once it covers every
    item of the dataset (a missing item is named with its record)."""
    fmt = detect_format(text, filename)
    hierarchy = read_hierarchy_text(text, Path(filename).stem, filename, fmt)
    tx, where, record = dataset_items(dataset)
    missing_items(tx, hierarchy, where, record)
    return _save_item_hierarchy(dataset.owner, Path(filename).stem, hierarchy, filename, fmt)


def save_built_hierarchy(job: Job, report: dict):
    """The hierarchy a dynamic-hierarchies run built (item -> group -> *, as its report holds it) into the
    owner's library, stored like an uploaded item hierarchy; the library's entry already holding it when it
    was saved before. Returns (entry, created)."""
    from ..engine.model.hierarchy import Hierarchy, check_size

    rows = report.get("hierarchy_rows") or []
    if not rows:
        raise InputError("this run built no hierarchy: only dynamic hierarchies of a transaction dataset build one")
    name = f"{job.dataset.name} items (dynamic hierarchies, k={job.k}, m={report.get('m')})"
    hierarchy = Hierarchy.from_rows(rows, name, f"built by job {job.pk}")
    check_size(hierarchy, "the hierarchy built", **size_limits())  # the limits of an upload
    source = fit_name(f"built by a run on {job.dataset.original_name}", 255)
    same = LibraryHierarchy.objects.filter(owner=job.owner, source_name=source,
                                           content=write_hierarchy(hierarchy, "arx")).first()
    if same is not None:  # saved before (a second click)
        return same, False
    return _save_item_hierarchy(job.owner, name, hierarchy, source, "dynamic"), True
