"""A changed SECRET_KEY loses nothing that cannot be rebuilt (issue 25, "Secrets"): a DICOM dataset's files are
found under the folder they were stored in, a parsed table is rebuilt under the new name, and deleting the
dataset removes the files named under either key."""

from __future__ import annotations

import pytest
from anonymizer_helpers import make_dataset
from dicom_helpers import SAMPLES, zip_upload

from anonymizer_app.services import datasets, dicom, storage

OLD_KEY = "old-secret-key-" + "x" * 40
NEW_KEY = "new-secret-key-" + "y" * 40
VAULT_KEY = "0" * 43 + "="  # a valid Fernet key of its own: the vault never depends on SECRET_KEY


@pytest.fixture(autouse=True)
def vault_key(settings):
    settings.ANONYMIZER_VAULT_KEY = VAULT_KEY


@pytest.mark.django_db
def test_dicom_files_survive_a_new_secret_key(settings, user, django_capture_on_commit_callbacks):
    settings.SECRET_KEY = OLD_KEY
    dataset = dicom.create_dicom_dataset(user, [zip_upload()], "file", ["PatientID", "PatientSex", "StudyDate"])
    folder = storage.dicom_name(dataset)
    before = dicom.manifest(dataset)
    settings.SECRET_KEY = NEW_KEY
    assert storage.dicom_name(dataset) == folder  # found, not recomputed from the key
    assert dicom.manifest(dataset) == before
    assert len(before["file_rows"]) == len(SAMPLES)
    names = storage.dataset_files(dataset)
    assert folder in names
    with django_capture_on_commit_callbacks(execute=True):
        dataset.delete()
    assert not (storage.media_root() / folder).exists()


@pytest.mark.django_db
def test_tables_under_an_old_key_are_rebuilt_and_erased(settings, user, django_capture_on_commit_callbacks):
    settings.SECRET_KEY = OLD_KEY
    dataset = make_dataset(user)
    old_table = storage.table_name(dataset)
    datasets.stored_table(dataset)
    assert (storage.media_root() / old_table).is_file()
    settings.SECRET_KEY = NEW_KEY
    new_table = storage.table_name(dataset)
    assert new_table != old_table
    rebuilt = datasets.stored_table(dataset)  # rebuilt under the new name from the original upload
    assert rebuilt == storage.table_path(dataset) and rebuilt.is_file()
    names = storage.dataset_files(dataset)
    assert old_table in names and new_table in names
    with django_capture_on_commit_callbacks(execute=True):
        dataset.delete()
    assert not (storage.media_root() / old_table).exists()
    assert not (storage.media_root() / new_table).exists()
