"""What the hierarchy pages, the editor and the HTTP API compute from stored objects, cached per account
(hierarchy_editor.caching): a hierarchy parsed, a column's values as a run reads them, and how many records
hold each value or item."""

from __future__ import annotations

import hashlib

import pandas as pd

from anonymizer_app.engine import Hierarchy as ParsedHierarchy
from anonymizer_app.engine.model.missing import normalize_missing
from anonymizer_app.models import Column, Dataset
from anonymizer_app.services import setvalued
from anonymizer_app.services.datasets import load_frame

from . import caching
from .models import Hierarchy


def content_digest(h: Hierarchy) -> str:
    """A digest of the hierarchy's stored text: what an editing session and the cache know it by."""
    return hashlib.blake2b(h.content.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def parsed_hierarchy(h: Hierarchy) -> ParsedHierarchy:
    """``h.to_engine()``, reused across requests while the stored text and settings are unchanged; raises
    HierarchyError (errors are not cached)."""
    key = caching.user_key(h.owner_id, "parsed", h.pk, h.name, h.source_name, h.delimiter, h.on_conflict,
                           content_digest(h))
    return caching.remember(key, lambda: _parse(h))


def _parse(h: Hierarchy) -> ParsedHierarchy:
    parsed = h.to_engine()
    parsed.leaf_index  # noqa: B018 - the lookup is built once and stored with the parsed hierarchy
    return parsed


def column_values(dataset: Dataset, name: str) -> pd.Series:
    """A column's cells as a run reads them: blanks and NA markers are the missing value (engine.model.missing)."""
    return normalize_missing(load_frame(dataset, columns=[name])[name])


def _file_key(dataset: Dataset) -> tuple:
    """What the values of a dataset's file depend on: the file and how it is read."""
    return (dataset.pk, dataset.original.name, dataset.created.isoformat(), dataset.n_rows, dataset.delimiter,
            dataset.encoding, dataset.has_header, dataset.item_delimiter)


def value_counts(column: Column | None) -> dict[str, int] | None:
    """Records per distinct value of the column (as strings), most frequent first; None without a column."""
    if column is None:
        return None
    dataset = column.dataset
    key = caching.user_key(dataset.owner_id, "values", column.name, *_file_key(dataset))
    return caching.remember(key, lambda: _value_counts(dataset, column.name))


def _value_counts(dataset: Dataset, name: str) -> dict[str, int]:
    values = load_frame(dataset, columns=[name])[name]
    return {str(k): int(v) for k, v in values.value_counts(sort=True).items()}


def item_counts(dataset: Dataset, column: Column | None = None) -> dict[str, int]:
    """Item -> records holding it, of a transaction dataset (no column) or of a table's set-valued column: an
    item hierarchy's leaves are items, so its nodes are sized by their item occurrences."""
    name = column.name if column is not None else None
    delimiter = column.item_delimiter if column is not None else None
    key = caching.user_key(dataset.owner_id, "items", name, delimiter, *_file_key(dataset))
    return caching.remember(key, lambda: _item_counts(dataset, column))


def _item_counts(dataset: Dataset, column: Column | None) -> dict[str, int]:
    if column is None:
        return setvalued.transactions(dataset).item_frequencies()
    return setvalued.column_records(dataset, column.name, column.item_delimiter).item_frequencies()
