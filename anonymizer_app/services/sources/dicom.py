"""DICOM files (a zip or a folder): their header attributes become a table, one row per file, series or study
(services/dicom.py; the web page, ``POST /api/v1/dicom/datasets/``; ``manage.py anonymize_dicom`` runs on the
files themselves)."""

from __future__ import annotations

from .base import Source, register

register(Source(
    name="dicom",
    label="DICOM files",
    summary="A zip or a folder of DICOM files: the chosen header attributes as a table, one row per file, "
            "series or study; the files themselves published with the anonymized values.",
    offer="Upload DICOM files (zip or folder)…",
    page="anonymizer:upload_dicom",
    link_id="upload-dicom-link",
    api="dicom/datasets/",
    command="anonymize_dicom",
))
