"""A file uploaded from the browser or through the API (CSV, TSV, TXT or XLSX): the datasets page's own form,
``POST /api/v1/datasets/`` (services/datasets.py and services/ingestion.py do the reading)."""

from __future__ import annotations

from .base import Source, register

register(Source(
    name="upload",
    label="Uploaded file",
    summary="A CSV, TSV, TXT or XLSX file: its delimiter, encoding and header row detected, read under the "
            "upload's limits.",
    api="datasets/",
))
