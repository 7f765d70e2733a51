"""The DICOM upload page (views/dicom.upload): a zip or a folder's files become a dataset with the
profile's roles, the level said on screen; a non-DICOM file is named and nothing is stored."""

from __future__ import annotations

import io

import pydicom
import pytest
from dicom_helpers import SAMPLES, file_uploads, zip_upload
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from pydicom.data import get_testdata_file

from anonymizer_app.models import Dataset
from anonymizer_app.services import dicom, storage

URL = reverse("anonymizer:upload_dicom")
ATTRS = ["PatientID", "PatientSex", "PatientBirthDate", "StudyDate", "Modality", "StudyInstanceUID"]


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_login_required(client):
    assert client.get(URL).status_code == 302


@pytest.mark.django_db
def test_form_offers_levels_and_attributes(logged_in):
    page = logged_in.get(URL).content.decode()
    assert 'webkitdirectory' in page and 'name="folder"' in page
    assert "one row per study (the files of a study share it)" in page
    assert 'value="PatientBirthDate"' in page


@pytest.mark.django_db
def test_zip_upload_makes_a_dataset_with_proposed_roles(logged_in, user):
    response = logged_in.post(URL, {"archive": zip_upload(), "level": "study", "attributes": ATTRS,
                                    "name": "Scans"})
    dataset = Dataset.objects.get(owner=user)
    assert response.status_code == 302 and response.url == reverse("anonymizer:columns", args=[dataset.pk])
    # 8 files in 7 studies (MR_small and its implicit copy share one)
    assert (dataset.name, dataset.n_rows, dataset.n_columns) == ("Scans", 7, 6)
    roles = {c.name: c.role for c in dataset.columns.all()}
    assert roles == {"PatientID": "identifying", "PatientSex": "quasi-identifying",
                     "PatientBirthDate": "quasi-identifying", "StudyDate": "quasi-identifying",
                     "Modality": "insensitive", "StudyInstanceUID": "identifying"}
    info = dicom.describe(dataset)
    assert info["files"] == len(SAMPLES) and info["level"] == "study"
    # the date column got its DICOM hierarchy (year-month, year, decade), bound and in the owner's library
    h = dataset.columns.get(name="StudyDate").hierarchy
    assert h.owner == user and h.name == "Scans: StudyDate"
    assert "20040826;2004-08;2004;2000-2009;*" in h.content.splitlines()
    assert dataset.columns.get(name="PatientBirthDate").hierarchy is None  # empty dates: the default
    page = logged_in.get(reverse("anonymizer:columns", args=[dataset.pk])).content.decode()
    assert "one row per study" in page and "8 files" in page  # the screen says what a row is


@pytest.mark.django_db
def test_folder_upload_same_table_as_zip(logged_in, user):
    logged_in.post(URL, {"folder": file_uploads(), "level": "file", "attributes": ["PatientSex", "StudyDate"]})
    dataset = Dataset.objects.get(owner=user)
    assert dataset.n_rows == len(SAMPLES)
    assert dicom.manifest(dataset)["file_rows"]["00001-CT_small.dcm"] == 0


@pytest.mark.django_db
def test_non_dicom_file_named_nothing_stored(logged_in, user):
    before = storage.media_files()
    response = logged_in.post(URL, {"archive": zip_upload(extra={"scans/<b>notes</b>.txt": b"John Smith"}),
                                    "level": "file", "attributes": ["PatientSex"]})
    assert response.status_code == 400
    page = response.content.decode()
    assert "scans/&lt;b&gt;notes&lt;/b&gt;.txt: not a DICOM file" in page  # named, escaped
    assert not Dataset.objects.filter(owner=user).exists()
    assert storage.media_files() == before


@pytest.mark.django_db
def test_disagreeing_attribute_named(logged_in, user):
    ds = pydicom.dcmread(get_testdata_file("MR_small.dcm"))
    ds.PatientAge = "033Y"
    changed = io.BytesIO()
    ds.save_as(changed)
    response = logged_in.post(URL, {"archive": zip_upload(["MR_small.dcm"], {"scans/b.dcm": changed.getvalue()}),
                                    "level": "study", "attributes": ["PatientSex"], "other": "PatientAge"})
    assert response.status_code == 400
    assert ("attribute PatientAge differs within one study: scans/MR_small.dcm has &#x27;&#x27;, scans/b.dcm has "
            "&#x27;033Y&#x27;") in response.content.decode()
    assert not Dataset.objects.filter(owner=user).exists()


@pytest.mark.django_db
def test_nothing_chosen(logged_in):
    response = logged_in.post(URL, {"level": "file", "attributes": ["PatientSex"]})
    assert response.status_code == 400 and "Choose a zip file or a folder" in response.content.decode()


@pytest.mark.django_db
def test_a_long_extraction_streams_its_progress(logged_in, user, monkeypatch):
    from anonymizer_app.views import dicom as dicom_views

    monkeypatch.setattr(dicom_views, "STREAM_FILES", 3)  # 8 files: the streamed path
    response = logged_in.post(URL, {"archive": zip_upload(), "level": "file", "attributes": ["PatientSex"]})
    assert response.status_code == 200 and response.streaming
    page = b"".join(response.streaming_content).decode()
    dataset = Dataset.objects.get(owner=user)
    assert "checking file 8 of 8" in page and "reading the headers: file 8 of 8" in page
    assert "[ 90%]" in page  # the share of the extraction
    assert "Read 8 DICOM files into 8 rows (one row per file)" in page
    assert f'url={reverse("anonymizer:columns", args=[dataset.pk])}' in page
    assert not list((storage.media_root() / "tables").glob("staging-*.zip"))


@pytest.mark.django_db
def test_a_streamed_refusal_names_the_file_and_stores_nothing(logged_in, user, monkeypatch):
    from anonymizer_app.views import dicom as dicom_views

    monkeypatch.setattr(dicom_views, "STREAM_FILES", 0)
    before = storage.media_files()
    response = logged_in.post(URL, {"folder": file_uploads(["CT_small.dcm"]) + [
        SimpleUploadedFile("<i>x</i>.txt", b"hello")], "level": "file", "attributes": ["PatientSex"]})
    page = b"".join(response.streaming_content).decode()
    # (Django keeps only the safe part of an uploaded file's name)
    assert "00002-i&gt;.txt: not a DICOM file" in page and "<i>" not in page
    assert not Dataset.objects.filter(owner=user).exists()
    assert storage.media_files() == before


@pytest.mark.django_db
def test_an_upload_above_the_limit_is_refused_with_the_reason(logged_in, user, settings):
    settings.ANONYMIZER_MAX_UPLOAD_MB = 0
    response = logged_in.post(URL, {"archive": zip_upload(), "level": "file", "attributes": ["PatientSex"]})
    assert response.status_code == 413
    assert "more than the limit of 0 MB; nothing was stored" in response.content.decode()
    assert not Dataset.objects.filter(owner=user).exists()
