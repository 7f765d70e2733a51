"""Differential privacy releases of a dataset for the web app: engine.dp's histogram and randomized response
on the stored table, the numeric columns (which need declared bounds) taken from the columns' types.

A release is computed in the request: every call draws new noise, so every call is a release of its own that
spends its ε again, and each is written to the dataset's ε ledger (services/privacy_ledger.py) with the released
histogram's cells, after the budget is checked (a release past the budget is refused before any noise is drawn).
The histogram's noisy counts are post-processed as the form chooses (engine/dp_postprocess.py; free in privacy
terms, consistent totals by default). Randomized response calls OpenDP once per record (about 2 s for
Adult's 30,162 records), so the page refuses tables above WEB_RR_MAX_ROWS (manage.py dp_release has no cap), and it shows at most
WEB_MAX_CELLS histogram cells or categories.
"""

from __future__ import annotations

from pathlib import Path

from ..engine import InputError, dp, dp_postprocess
from ..models import Dataset
from . import datasets, privacy_ledger

NUMERIC_TYPES = {"integer", "decimal"}
WEB_RR_MAX_ROWS = 200_000
WEB_MAX_CELLS = 5_000  # cells (or categories) one page shows in its table and chart; the CLI allows dp.MAX_CELLS


def numeric_columns(dataset: Dataset) -> set[str]:
    return {c.name for c in dataset.columns.all() if c.type in NUMERIC_TYPES}


def parse_bounds(text: str) -> dict[str, tuple[float, float]]:
    """One COL=LOWER:UPPER a line (the column name may hold '='; the last one splits)."""
    bounds: dict[str, tuple[float, float]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        column, sep, rng = line.strip().rpartition("=")
        lo, sep2, hi = rng.partition(":")
        try:
            if not (sep and sep2 and column):
                raise ValueError
            bounds[column.strip()] = (float(lo), float(hi))
        except ValueError:
            raise InputError(f"bounds, line {number}: expected COLUMN=LOWER:UPPER (e.g. age=17:90), "
                             f"got {line.strip()!r}") from None
    return bounds


def release_counts(dataset: Dataset, columns: list[str], epsilon: float, mechanism: str,
                   bounds: dict[str, tuple[float, float]], bins: int,
                   post_processing: str = dp_postprocess.DEFAULT) -> dp.CountsRelease:
    extra = [c for c in bounds if c not in columns]
    if extra:
        raise InputError(f"bounds: {extra[0]!r} is not one of the counted columns")
    frame = datasets.load_frame(dataset, columns=[c for c in columns if c in datasets.dataset_columns(dataset)])
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"unknown column {missing[0]!r}")
    return dp.dp_counts(frame, columns, epsilon, mechanism, numeric_columns=numeric_columns(dataset),
                        bounds=bounds, bins=bins, max_cells=WEB_MAX_CELLS, post_processing=post_processing)


def release_randomized_response(dataset: Dataset, column: str, epsilon: float) -> dp.RandomizedResponseRelease:
    if dataset.n_rows > WEB_RR_MAX_ROWS:
        raise InputError(f"{dataset.n_rows:,} records: this page randomizes at most {WEB_RR_MAX_ROWS:,} "
                         f"(manage.py dp_release has no cap)")
    if column not in datasets.dataset_columns(dataset):
        raise InputError(f"unknown column {column!r}")
    return dp.randomized_response(datasets.load_frame(dataset, columns=[column])[column], epsilon,
                                  max_categories=WEB_MAX_CELLS)


def release(dataset: Dataset, d: dict, user=None) -> dp.CountsRelease | dp.RandomizedResponseRelease:
    """A new release from the DP form's cleaned data (mode "counts": a histogram; "rr": randomized response):
    new noise, its ε spent again and written to the dataset's ledger (by ``user``, the owner by default).
    InputError: bad input, or the budget would be exceeded (nothing drawn, nothing recorded). The web's DP
    page and the API call this."""
    if d["mode"] == "counts":
        mechanism = f"{d['mechanism']} histogram"
        description = f"histogram of {', '.join(d['columns'])}"
    else:
        mechanism, description = "randomized response", f"randomized response on {d['rr_column']}"
    with privacy_ledger.charge(dataset, user or dataset.owner, mechanism, d["epsilon"], 0.0, description) as entry:
        if d["mode"] == "counts":
            released: dp.CountsRelease | dp.RandomizedResponseRelease = release_counts(
                dataset, d["columns"], d["epsilon"], d["mechanism"], parse_bounds(d["bounds"]), d["bins"],
                d.get("post_processing") or dp_postprocess.DEFAULT)
        else:
            released = release_randomized_response(dataset, d["rr_column"], d["epsilon"])
        entry.release = ledger_record(released)
    return released


def ledger_record(released: dp.CountsRelease | dp.RandomizedResponseRelease) -> dict:
    """What the ledger keeps of a release: the published figures (a histogram's post-processed cells; randomized
    response's perturbed counts per category, the perturbed column itself is not kept), never the true ones."""
    if isinstance(released, dp.CountsRelease):
        return {"kind": "counts", "columns": released.columns, "post_processing": released.post_processing,
                "cells": [[c, n] for c, n in zip(released.cells, released.released_counts)]}
    return {"kind": "rr", "column": released.column, "keep_probability": released.keep_probability,
            "cells": [[c, n] for c, n in zip(released.categories, released.perturbed_counts)]}


def release_frame(released: dp.CountsRelease | dp.RandomizedResponseRelease):
    """What a release's CSV holds: the histogram's cells and noisy counts, or the perturbed column."""
    if isinstance(released, dp.CountsRelease):
        return released.frame()
    return released.perturbed.to_frame()


def release_filename(dataset: Dataset, d: dict) -> str:
    stem = Path(dataset.original_name).stem
    kind = "dp-counts" if d["mode"] == "counts" else "randomized-response"
    return f"{stem}-{kind}-eps{d['epsilon']:g}.csv"
