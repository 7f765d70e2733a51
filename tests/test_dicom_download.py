"""The 'Download DICOM (zip)' view (views/dicom.download): de-identified copies built from the published
rows only; owner-only; deleting the dataset removes its DICOM files."""

from __future__ import annotations

import io
import zipfile

import pydicom
import pytest
from anonymizer_helpers import finished_job, make_dataset
from dicom_helpers import SAMPLES, zip_upload
from django.urls import reverse
from pydicom.data import get_testdata_file

from anonymizer_app.engine import Role
from anonymizer_app.engine import dicom as dicom_engine
from anonymizer_app.services import dicom, exports, storage, vault


def make_dicom_dataset(owner, level="file"):
    dataset = dicom.create_dicom_dataset(owner, [zip_upload()], level,
                                         ["PatientID", "PatientSex", "StudyDate", "Modality", "StudyInstanceUID"])
    for column in dataset.columns.all():  # two QIs, the rest as the profile proposed
        if column.name in ("PatientSex", "StudyDate"):
            column.role = Role.QUASI_IDENTIFYING.value
            column.save()
    return dataset


def read_zip(content: bytes) -> list[pydicom.Dataset]:
    with zipfile.ZipFile(io.BytesIO(content)) as z:
        return [pydicom.dcmread(io.BytesIO(z.read(n))) for n in z.namelist()]


@pytest.mark.django_db
def test_download_holds_the_published_rows(client, user):
    dataset = make_dicom_dataset(user)
    job = finished_job(dataset, k=2)
    client.force_login(user)
    page = client.get(reverse("anonymizer:result", args=[job.pk])).content.decode()
    assert 'id="download-dicom"' in page
    response = client.get(reverse("anonymizer:download_dicom", args=[job.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    files = read_zip(b"".join(response.streaming_content))
    published = exports.result_frame(job.result, drop_suppressed=True)
    assert len(files) == len(published) == len(SAMPLES)  # k=2 reached without suppression
    assert "PatientID" not in published.columns and "StudyInstanceUID" not in published.columns
    key = bytes.fromhex(vault.decrypt_text(dicom.manifest(dataset)["uid_key"]))
    members = sorted(f"scans/{n}" for n in SAMPLES)
    for member, ds, (_, row) in zip(members, files, published.iterrows(), strict=True):
        original = pydicom.dcmread(get_testdata_file(member.split("/")[1]))
        assert str(ds.PatientSex) == row["PatientSex"] and str(ds.StudyDate) == row["StudyDate"]
        assert str(ds.Modality) == row["Modality"] == original.Modality
        assert ds.StudyInstanceUID == dicom_engine.pseudonym_uid(original.StudyInstanceUID, key)
        assert not ds.get("PatientID")  # identifier: Z/D resolved to Z
        assert ds.PatientIdentityRemoved == "YES"
        if "PixelData" in original:
            assert ds.PixelData == original.PixelData
    assert not list((storage.media_root() / "tables").glob("dicom-*"))  # the temporary zip is gone


@pytest.mark.django_db
def test_suppressed_rows_files_left_out(client, user):
    dataset = make_dicom_dataset(user)
    job = finished_job(dataset, k=3, suppression_limit=0.4)
    client.force_login(user)
    files = read_zip(b"".join(client.get(reverse("anonymizer:download_dicom", args=[job.pk])).streaming_content))
    published = exports.result_frame(job.result, drop_suppressed=True)
    assert len(files) == len(published) == 7  # 1 of the 8 rows suppressed: its file is not in the zip
    assert [(str(f.PatientSex), str(f.StudyDate)) for f in files] == list(
        zip(published["PatientSex"], published["StudyDate"], strict=True))


@pytest.mark.django_db
def test_other_users_get_404(client, user, other_user):
    job = finished_job(make_dicom_dataset(user), k=2)
    client.force_login(other_user)
    assert client.get(reverse("anonymizer:download_dicom", args=[job.pk])).status_code == 404


@pytest.mark.django_db
def test_a_table_dataset_has_no_dicom_download(client, user):
    job = finished_job(make_dataset(user), k=2)
    client.force_login(user)
    assert client.get(reverse("anonymizer:download_dicom", args=[job.pk])).status_code == 404
    assert 'id="download-dicom"' not in client.get(reverse("anonymizer:result", args=[job.pk])).content.decode()


@pytest.mark.django_db(transaction=True)
def test_deleting_the_dataset_removes_the_files(user):
    dataset = make_dicom_dataset(user)
    folder = storage.dicom_dir(dataset)
    assert (folder / "files.zip").is_file()
    dataset.delete()
    assert not folder.exists()


@pytest.mark.django_db
def test_a_uid_column_can_only_be_identifying(user):
    from anonymizer_app.services import preflight

    dataset = make_dicom_dataset(user)
    assert preflight.check_run(dataset, "datafly", 2, 0.0) == []
    column = dataset.columns.get(name="StudyInstanceUID")
    column.role = Role.INSENSITIVE.value
    column.save()
    problems = [p.message for p in preflight.check_run(dataset, "datafly", 2, 0.0)]
    assert problems == ["StudyInstanceUID: a UID the profile replaces by a pseudonym; it can only be identifying"]
    assert preflight.check_run(make_dataset(user), "datafly", 2, 0.0) == []


@pytest.mark.django_db
def test_the_orphan_sweep_keeps_a_datasets_files_and_removes_a_lost_folder(user):
    from anonymizer_app.services import erasure

    dataset = make_dicom_dataset(user)
    lost = storage.media_root() / "dicom" / "dataset-999999-0123456789abcdef01234567"
    lost.mkdir(parents=True)
    (lost / "files.zip").write_bytes(b"left by a crash")
    orphans = erasure.orphan_files(grace_seconds=0)
    assert "dicom/dataset-999999-0123456789abcdef01234567/files.zip" in orphans
    assert not any(name.startswith(storage.dicom_name(dataset)) for name in orphans)
