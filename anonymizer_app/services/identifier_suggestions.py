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

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from django.core.cache import cache

from ..engine import InputError, Role
from ..engine.model import identifier_detection as idd
from . import storage

DETECTION_ROWS = 200_000  # rows read for the value shapes (uniqueness is counted over every row)
CACHE_SECONDS = 24 * 3600
# the run form's field (and the API's ``fields`` key) naming the columns confirmed to be published as they are
CONFIRM_FIELD = "publish_as_is"


def detect_file(path: Path) -> idd.Detection:
    """The detection of a stored table (Parquet), cached by the file's identity."""
    stat = path.stat()
    # the file itself (inode, time, size): the staging file of an upload keeps them when moved into place
    key = f"identifier-detection:{stat.st_dev}:{stat.st_ino}:{stat.st_mtime_ns}:{stat.st_size}"
    cached = cache.get(key)
    if isinstance(cached, idd.Detection):
        return cached
    frame = storage.read_rows(path, 0, DETECTION_ROWS)
    rows = pq.ParquetFile(path).metadata.num_rows
    # a longer table: its uniqueness counted over every row, not over the first rows (a patient id whose first
    # rows are all distinct repeats further down)
    counted = whole_table_counts(path) if rows > len(frame) else None
    detection = idd.detect_identifiers(frame, counted=counted)
    cache.set(key, detection, CACHE_SECONDS)
    return detection


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
