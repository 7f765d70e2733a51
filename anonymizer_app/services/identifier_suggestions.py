"""A dataset's identifier suggestions (engine/model/identifier_detection/, docs/definitions.md "Identifier
detection") for the columns page, the risk page, the API and the run's pre-flight.

The detection reads the value shapes on the stored table's first :data:`DETECTION_ROWS` rows and counts the
uniqueness (distinct values, separation, records per value) over every row of the table, column by column
(:func:`whole_table_counts`); it is kept in the cache while the stored file is unchanged. At upload, its high-confidence
suggestions are pre-selected as identifying, or as the person id for an id that repeats across records
(:func:`preselect`); the pre-flight holds a run that would publish one of them as it is until the user confirms
it (:func:`held`). The columns a run confirmed are kept in its job's configuration (:func:`remember`), so a job
made from it later (a kept lattice node) is held by the same rule, on its own snapshotted roles (:func:`check_job`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from django.core.cache import cache

from ..engine import InputError, Role
from ..engine.model import identifier_detection as idd
from . import storage
from .column_profile import ColumnProfile

DETECTION_ROWS = 200_000  # rows read for the value shapes (uniqueness is counted over every row)
CACHE_SECONDS = 24 * 3600
# the run form's field (and the API's ``fields`` key) naming the columns confirmed to be published as they are
CONFIRM_FIELD = "publish_as_is"


def detect_file(path: Path, profile: ColumnProfile | None = None) -> idd.Detection:
    """The detection of a stored table (Parquet), cached by the file's identity. ``profile``: the table's distinct
    values and counts gathered while it was written (an upload), from which the same detection is made without
    reading the whole table (:func:`detect_profiled`)."""
    stat = path.stat()
    # the file itself (inode, time, size): the staging file of an upload keeps them when moved into place
    key = f"identifier-detection:{stat.st_dev}:{stat.st_ino}:{stat.st_mtime_ns}:{stat.st_size}"
    cached = cache.get(key)
    if isinstance(cached, idd.Detection):
        return cached
    if profile is not None and _profiled(profile, path):
        detection = detect_profiled(path, profile)
        cache.set(key, detection, CACHE_SECONDS)
        return detection
    frame = storage.read_rows(path, 0, DETECTION_ROWS)
    rows = pq.ParquetFile(path).metadata.num_rows
    # a longer table: its uniqueness counted over every row, not over the first rows (a patient id whose first
    # rows are all distinct repeats further down)
    counted = whole_table_counts(path) if rows > len(frame) else None
    detection = idd.detect_identifiers(frame, counted=counted)
    cache.set(key, detection, CACHE_SECONDS)
    return detection


def _profiled(profile: ColumnProfile, path: Path) -> bool:
    """The profile describes the stored table, and stands for it here: unique column names, no missing cell (a
    sample of the non-missing values of each column is then one sample of rows for all)."""
    names = storage.stored_columns(path)
    return (profile.names == names and len(set(names)) == len(names) and profile.rows == pq.ParquetFile(path)
            .metadata.num_rows and not any(profile.nulls.values()))


def detect_profiled(path: Path, profile: ColumnProfile) -> idd.Detection:
    """detect_file's detection from an upload's distinct values and counts: the uniqueness from the counts (as
    whole_table_counts, or as the detection counts the first rows when they are the whole table), the value shapes
    on the sample the detection draws from the first DETECTION_ROWS rows (its seeded pandas sample of their
    positions), the sampled rows only read from the stored table."""
    head = min(profile.rows, DETECTION_ROWS)
    order = pd.Series(np.arange(head))
    if head > idd.SAMPLE_SIZE:
        order = order.sample(idd.SAMPLE_SIZE, random_state=0)
    positions = order.to_numpy()
    pf = pq.ParquetFile(path)
    groups, first = [], 0
    for g in range(pf.metadata.num_row_groups):
        if first >= head:
            break
        groups.append(g)
        first += pf.metadata.row_group(g).num_rows
    table = pf.read_row_groups(groups).take(pa.array(positions, type=pa.int64())) if groups else pf.schema_arrow.empty_table()
    sample = storage.to_frame(table).set_axis(pd.Index(positions), axis=0)
    # the detection strips values as Python does when it counts the rows themselves; whole_table_counts as Arrow does
    counted = {name: _uniqueness(*profile.counted(name), arrow=profile.rows > head) for name in profile.names}
    return idd.detect_identifiers(sample, counted=counted)


def _uniqueness(values: pa.Array, counts: np.ndarray, arrow: bool) -> idd.Uniqueness:
    """A column's uniqueness from its distinct values and counts: values that strip to the same text are one value,
    blank ones none."""
    if arrow:
        text = pc.utf8_trim_whitespace(values)
        kept = pc.not_equal(text, "").to_numpy(zero_copy_only=False)
        encoded = pc.dictionary_encode(text.filter(kept))
        return idd.uniqueness_of_counts(np.bincount(encoded.indices.to_numpy(zero_copy_only=False),
                                                    weights=counts[kept], minlength=len(encoded.dictionary)))
    text = pd.Series(values.to_pylist(), dtype=object).str.strip()
    kept = (text != "").to_numpy()
    per_value = pd.Series(counts[kept], index=pd.Index(text[kept].to_numpy(), dtype=object))
    return idd.uniqueness_of_counts(per_value.groupby(level=0, sort=False).sum().to_numpy())


def whole_table_counts(path: Path) -> dict[str, idd.Uniqueness]:
    """Each column's uniqueness over every row of a stored table, one column in memory at a time: a value is its
    text with surrounding blanks stripped, missing and blank cells are not values (as the detection's own count)."""
    pf = pq.ParquetFile(path)
    out: dict[str, idd.Uniqueness] = {}
    for name in pf.schema_arrow.names:
        column = pf.read(columns=[name]).column(name)
        if pa.types.is_dictionary(column.type):
            column = column.cast(pa.string())
        text = pc.utf8_trim_whitespace(column.cast(pa.string()))
        text = text.filter(pc.and_(pc.is_valid(text), pc.not_equal(text, "")))
        counts = pc.value_counts(text).field("counts").to_numpy(zero_copy_only=False)
        out[name] = idd.uniqueness_of_counts(counts)
    return out


def for_dataset(dataset, path: Path | None = None) -> idd.Detection:
    """The dataset's detection (an empty one for a transaction or DICOM dataset without a stored table)."""
    path = path or storage.table_path(dataset)
    if getattr(dataset, "is_transactions", False) or not path.exists():
        return idd.Detection()
    return detect_file(path)


def preselect(detection: idd.Detection, columns: Iterable) -> None:
    """Upload: a column with a high-confidence suggestion takes its suggested role (the Column rows, unsaved):
    identifying, or "person id" for a repeating id. A table has one person id at most (engine Table.person): the
    first repeating id by score (then column order) gets it, any other repeating id becomes identifying."""
    high = {s.column: s for s in detection.high}
    repeating = sorted((s for s in high.values() if s.person_id), key=lambda s: -s.score)
    person = repeating[0].column if repeating else None
    for c in columns:
        if c.name in high:
            c.role = Role.PERSON.value if c.name == person else Role.IDENTIFYING.value


def held(dataset, confirmed: Iterable[str] = (), path: Path | None = None) -> list[idd.Suggestion]:
    """The high-confidence identifiers the run would publish as they are (role insensitive or sensitive),
    not confirmed by the user: the pre-flight holds the run for each."""
    roles = {c.name: c.role for c in dataset.columns.all()}
    return idd.unconfirmed(for_dataset(dataset, path), roles, confirmed)


def hold_message(s: idd.Suggestion) -> str:
    return idd.hold_message(s, f"tick \"Publish column {s.column} as is\" on the run form (API: "
                               f"{CONFIRM_FIELD}: [\"{s.column}\"]; CLI: --allow-identifier {s.column})")


def remember(job, confirmed: Iterable[str]) -> None:
    """Keep the columns the run form (or the API's ``publish_as_is``) confirmed in the job's configuration."""
    names = sorted({str(c) for c in confirmed})
    if names:
        job.config = {**(job.config or {}), CONFIRM_FIELD: names}
        job.save(update_fields=["config"])


def held_by_job(job) -> list[idd.Suggestion]:
    """The high-confidence identifiers the job's snapshotted roles would publish as they are, not confirmed when
    the job was made (a population run anonymizes another table: none)."""
    config = job.config or {}
    if config.get("population") or not config.get("columns"):
        return []
    roles = {c["name"]: c["role"] for c in config["columns"]}
    return idd.unconfirmed(for_dataset(job.dataset), roles, config.get(CONFIRM_FIELD) or ())


def check_job(job, how_to_confirm: str) -> None:
    """An InputError naming every column :func:`held_by_job` finds (the pre-flight of a job made from a job)."""
    held = held_by_job(job)
    if held:
        raise InputError(" ".join(idd.hold_message(s, how_to_confirm.format(column=s.column)) for s in held))
