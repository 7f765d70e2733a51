"""DICOM in the API: upload a zip or files (the web's checks), run through /api/v1/runs/ as any dataset
(here the services' run, as test_api_sql.py does), download the de-identified files."""

from __future__ import annotations

import io
import zipfile

import pydicom
import pytest
from anonymizer_helpers import finished_job, make_dataset
from api_helpers import api_for
from dicom_helpers import SAMPLES, file_uploads, zip_upload

from anonymizer_app.models import Column, Dataset

pytestmark = pytest.mark.django_db


def test_upload_zip_run_download(user, other_user):
    api = api_for(user)
    r = api.post("/api/v1/dicom/datasets/", {"archive": zip_upload(), "level": "study",
                                             "attributes": ["PatientSex", "StudyDate", "StudyInstanceUID"]}, json=False)
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["n_rows"] == 7 and body["dicom"]["files"] == len(SAMPLES) and body["dicom"]["level"] == "study"
    dataset = Dataset.objects.get(pk=body["id"], owner=user)
    assert dict(Column.objects.filter(dataset=dataset).values_list("name", "role")) == {
        "PatientSex": "quasi-identifying", "StudyDate": "quasi-identifying", "StudyInstanceUID": "identifying"}
    job = finished_job(dataset, k=2)
    r = api.get(f"/api/v1/dicom/runs/{job.pk}/download/")
    assert r.status_code == 200 and r["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(b"".join(r.streaming_content))) as z:
        files = [pydicom.dcmread(io.BytesIO(z.read(n))) for n in z.namelist()]
    assert len(files) == len(SAMPLES) and all(f.PatientIdentityRemoved == "YES" for f in files)
    assert api_for(other_user).get(f"/api/v1/dicom/runs/{job.pk}/download/").status_code == 404


def test_upload_files_default_attributes(user):
    r = api_for(user).post("/api/v1/dicom/datasets/", {"files": file_uploads(), "level": "file"}, json=False)
    assert r.status_code == 201, r.content
    assert [c["name"] for c in r.json()["columns"]][:3] == ["PatientID", "PatientName", "PatientBirthDate"]


def test_non_dicom_refused_by_name(user):
    r = api_for(user).post("/api/v1/dicom/datasets/", {"archive": zip_upload(extra={"scans/a.txt": b"hello"}),
                                                       "level": "file"}, json=False)
    assert r.status_code == 400 and r.json()["detail"].startswith("scans/a.txt: not a DICOM file")
    assert not Dataset.objects.filter(owner=user).exists()


def test_table_dataset_has_no_dicom_download(user):
    job = finished_job(make_dataset(user), k=2)
    assert api_for(user).get(f"/api/v1/dicom/runs/{job.pk}/download/").status_code == 404


def test_upload_above_the_limit(user, settings):
    settings.ANONYMIZER_MAX_UPLOAD_MB = 0
    r = api_for(user).post("/api/v1/dicom/datasets/", {"archive": zip_upload(), "level": "file"}, json=False)
    assert r.status_code == 413 and "more than the limit of 0 MB" in r.json()["detail"]
