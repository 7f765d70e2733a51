"""pydicom's own sample files (shipped inside the package) as uploads for the DICOM pages' tests."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile
from pydicom.data import get_testdata_file

SAMPLES = ["CT_small.dcm", "MR_small.dcm", "MR_small_implicit.dcm", "JPEG2000.dcm", "SC_rgb_rle.dcm",
           "examples_overlay.dcm", "rtplan.dcm", "liver_1frame.dcm"]


def sample_bytes(name: str) -> bytes:
    return Path(get_testdata_file(name)).read_bytes()


def zip_bytes(names=SAMPLES, extra: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name in names:
            z.writestr(f"scans/{name}", sample_bytes(name))
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return buffer.getvalue()


def zip_upload(names=SAMPLES, extra=None, filename: str = "scans.zip") -> SimpleUploadedFile:
    return SimpleUploadedFile(filename, zip_bytes(names, extra), content_type="application/zip")


def file_uploads(names=SAMPLES) -> list[SimpleUploadedFile]:
    return [SimpleUploadedFile(n, sample_bytes(n), content_type="application/dicom") for n in names]
