"""Statistics before and after for a result (engine.measure.statistics): the dataset's rows against the rows the
result publishes, per column and for a chosen pair of columns.

A result, its input and its output never change, so the figures are computed once and kept as JSON with the
job's cached views (deleted with it), like the risk figures: the page of a million-row result reads the two
tables once (as Parquet dictionary columns: one string per distinct value) and answers from the cache after.
Suppressed records are left out of the figures after and counted apart, whether the run published them as '*'
rows or removed them. Columns of direct identifiers (pseudonymized, masked, surrogate) are left out: their
originals are not shown beside the published tokens on any page.

A synthetic set (Job.SYNTHESIS) is a table of the same columns with made-up rows, usually fewer than the input's
(a share is held out of the synthesis): every figure here counts each table on its own, so no row is paired with
another; its stored suppression flags are all false and its report counts no suppressed record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection

import numpy as np
import pandas as pd

from ..engine import InputError
from ..engine.measure import statistics
from ..engine.measure.figure_catalogue import format_kind
from ..models import Job, Result
from . import datasets, results, storage

# the kinds of job that publish a table of records (a run, and a lattice node kept as a run)
PUBLISHING_KINDS = (Job.RUN, Job.LATTICE_KEEP, Job.SYNTHESIS)  # a synthetic set: a table of the same columns
STATISTICS_CACHE_VERSION = 4  # raise when the figures' content changes (4: whole-number histogram widths)


def statistics_columns(result: Result) -> list[str]:
    """The columns both tables hold, in the input's order, identifiers' columns left out."""
    hidden = {e.get("column") for e in result.report.get("identifiers", [])}
    published = set(results.output_columns(result))
    return [c for c in datasets.dataset_columns(result.job.dataset) if c in published and c not in hidden]


def _check(result: Result) -> None:
    if result.job.kind not in PUBLISHING_KINDS:
        raise InputError("this job publishes no table")
    report = result.report
    if report.get("recoding") == "anatomy":
        raise InputError("an Anatomy result publishes its sensitive values in a table of their own: no statistics "
                         "of the records are computed")
    if report.get("research_subset"):
        raise InputError("this result publishes a research subset of the input (δ-presence): its rows are not the "
                         "input's, so no statistics before and after are computed")


def _tables(result: Result, columns: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """The dataset's and the output's columns (Categoricals where Parquet dictionary-encodes them) and the
    suppression flag of each output row."""
    before = datasets.load_frame(result.job.dataset, columns=columns, dictionary=True)
    path = storage.output_path(result)
    after = storage.read_frame(path, columns=columns, dictionary=True)
    flags = storage.read_frame(path, columns=[results.SUPPRESSED_COLUMN])[results.SUPPRESSED_COLUMN]
    return before, after, flags.to_numpy(dtype=bool)


def _cache(result: Result, name: str):
    return storage.lattice_cache_dir(result.job) / name


def _cached(result: Result, name: str, compute) -> dict:
    path = _cache(result, name)
    found = storage.read_json(path)
    if isinstance(found, dict) and found.get("version") == STATISTICS_CACHE_VERSION:
        return found
    figures = {"version": STATISTICS_CACHE_VERSION, **compute()}
    figures = json.loads(json.dumps(figures, default=storage.json_default))  # what a cached read gives
    storage.write_json(path, figures)
    if not Result.objects.filter(pk=result.pk).exists():  # deleted meanwhile: leave nothing of it
        storage.delete_names([storage.lattice_cache_name(result.job)])
    return figures


def result_statistics(result: Result) -> dict:
    """Every column's figures before and after (engine.measure.statistics.table_statistics)."""
    _check(result)

    def compute() -> dict:
        columns = statistics_columns(result)
        before, after, flags = _tables(result, columns)
        # suppressed records the stored output does not hold (removed by the run): counted from the report
        removed = max(int(result.report.get("suppressed", 0) or 0) - int(flags.sum()), 0)
        return statistics.table_statistics(before, after, flags, removed=removed)

    return _cached(result, "statistics.json", compute)


def pair_statistics(result: Result, first: str, second: str) -> dict:
    """The contingency tables and association of two columns before and after."""
    _check(result)
    columns = statistics_columns(result)
    unknown = [c for c in (first, second) if c not in columns]
    if unknown:
        raise InputError(f"no column {unknown[0]!r} in both tables: choose two of {', '.join(columns)}")
    if first == second:
        raise InputError("choose two different columns")
    key = hashlib.sha256(json.dumps([first, second]).encode()).hexdigest()[:32]

    def compute() -> dict:
        before, after, flags = _tables(result, [first, second])
        return statistics.association(first, second, (before[first], before[second]),
                                      (after[first], after[second]), flags)

    return _cached(result, f"statistics-pair-{key}.json", compute)


def report_rows(result: Result, leave_out: Collection[str] = ()) -> list[dict] | None:
    """The release report's short table: per column the distinct values and missing cells, and for numbers the
    mean, median and standard deviation before and after ("midpoint / interval-aware" when the published column
    holds ranges); None when the result has no statistics (services.statistics._check). ``leave_out``: columns the
    report shows as one row (a wide table's insensitive columns kept as they are), so the PDF stays short."""
    try:
        figures = result_statistics(result)
    except InputError:
        return None
    rows = []
    for column in figures["columns"]:
        if column["column"] in leave_out:
            continue
        before, after = column["before"], column["after"]
        row = {"column": column["column"], "kind": column["kind"],
               "distinct": [format_kind("count", before["distinct"]), format_kind("count", after["distinct"])],
               "missing": [format_kind("count", before["missing"]), format_kind("count", after["missing"])],
               "numbers": []}
        aware = after.get("interval_aware")
        for key in ("mean", "median", "sd"):
            shown = format_kind("amount", after.get("numbers", {}).get(key))
            if aware is not None:
                shown += " / " + format_kind("amount", aware.get(key))
            if column["kind"] == "numeric":
                row["numbers"].append([format_kind("amount", before.get("numbers", {}).get(key)), shown])
        rows.append(row)
    return rows
