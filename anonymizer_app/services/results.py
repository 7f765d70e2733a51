"""Stored results: the published rows as Parquet (every column as strings, the suppression flag, the dataset
row each published row comes from), read a page, a column list or all at once; an Anatomy result's
sensitive table; the report's figures (value counts, model checks, the transformation in QI order)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
from django.db import transaction
from django.http import Http404

from ..engine import Cancelled
from ..models import Job, Result
from . import storage

# the kinds of job whose outcome is a page of figures (its URL name), not a table of published rows
RESULT_PAGES = {Job.COMPARISON: "anonymizer:comparison", Job.EXPERIMENT: "anonymizer:experiment_result",
                Job.MODEL_UTILITY: "anonymizer:model_utility_result", Job.SYNTHESIS: "anonymizer:synthesis_result",
                Job.SDC_RISK: "anonymizer:sdc_risk_job_result"}


def job_result(job: Job) -> Result:
    """The stored result of a finished job (404 when it has none: not finished, or failed)."""
    result = Result.objects.filter(job=job).first()
    if result is None or job.status != Job.SUCCEEDED:
        raise Http404("this job has no result")
    return result


SUPPRESSED_COLUMN = "__suppressed__"
ROW_COLUMN = "__row__"  # stored beside the published rows: the dataset row each one comes from (never exported)


def report_json(report: dict) -> dict:
    """A report as it is stored (plain JSON: numpy scalars converted, NaN as null)."""
    return json.loads(json.dumps(report, default=storage.json_default))


def store(job: Job, report: dict, output_name: str = "", files: list[str] | None = None) -> Result:
    """Save the job's Result, only while the job exists: a job deleted as it ran (erasure) must leave
    nothing behind, so its written ``files`` are removed and it ends as cancelled. The job row is locked
    (PostgreSQL; SQLite takes the write lock) so that a deletion waits for the Result or comes first."""
    with transaction.atomic():
        if Job.objects.select_for_update().filter(pk=job.pk).exists():
            record = Result(job=job, report=report)
            record.output.name = output_name
            record.save()
            return record
    storage.delete_names(files or [])
    raise Cancelled("the job was deleted while it ran")


# ---- the stored rows ------------------------------------------------------------------------------------
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


def split_suppressed(frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The published columns and the suppression flags; the dataset rows (if stored) in frame.attrs["rows"]."""
    suppressed = frame.pop(SUPPRESSED_COLUMN).to_numpy(dtype=bool)
    if ROW_COLUMN in frame.columns:
        frame.attrs["rows"] = frame.pop(ROW_COLUMN).to_numpy(dtype=np.int64)
    return frame, suppressed


def load_output(result: Result) -> tuple[pd.DataFrame, np.ndarray]:
    """All output rows (downloads with shuffling, tests); pages use output_rows."""
    return split_suppressed(storage.read_frame(storage.output_path(result)))


def output_rows(result: Result, start: int, stop: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Rows [start, stop) of the output: only the row groups that hold them are read."""
    return split_suppressed(storage.read_rows(storage.output_path(result), start, stop))


def output_columns(result: Result) -> list[str]:
    return [c for c in storage.stored_columns(storage.output_path(result)) if c not in (SUPPRESSED_COLUMN, ROW_COLUMN)]


def load_sensitive_table(result: Result) -> pd.DataFrame | None:
    """An Anatomy result's ST (group, value, count), or None for other results."""
    path = storage.sensitive_table_path(storage.output_path(result))
    if path.exists():
        return storage.read_frame(path)
    rows = result.report.get("sensitive_table")
    return pd.DataFrame(rows).astype(str) if rows else None


# ---- the report ------------------------------------------------------------------------------------------
def transformation_levels(report: dict) -> list[tuple[str, int]]:
    """(QI, level) in the QIs' order. Reports are JSON objects, and PostgreSQL's jsonb does not keep
    key order, so the order comes from the report's list of quasi-identifiers, never from the dict."""
    levels = report.get("transformation") or {}
    return [(qi, levels[qi]) for qi in report.get("quasi_identifiers", []) if qi in levels]


def transformation_key(report: dict) -> str:
    """The transformation as the lattice names its nodes: '0,4,1,...' in QI order."""
    return ",".join(str(level) for _, level in transformation_levels(report))
