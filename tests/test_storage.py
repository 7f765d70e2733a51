"""services.storage: the files of a job and of a dataset, found and deleted through Django's storage."""

import pytest
from anonymizer_helpers import finished_job, make_dataset, people_dataset
from django.core.files.storage import default_storage

from anonymizer_app.engine import Role
from anonymizer_app.services import jobs, storage

pytestmark = pytest.mark.django_db


def _lattice_cache(job):
    folder = storage.lattice_cache_dir(job)
    storage.write_json(folder / "lattice.json", {"version": 1})
    storage.write_json(folder / "node-0-0-0.json", {"version": 1})
    return folder


def test_delete_job_files_removes_the_output_and_the_lattice_cache(user):
    dataset = make_dataset(user)
    job, other = finished_job(dataset), finished_job(dataset)
    output = storage.result_path(job)
    assert output.is_file() and job.result.output.name == storage.result_name(job)
    folder = _lattice_cache(job)
    storage.delete_job_files(job)
    assert not output.exists() and not folder.exists()
    assert storage.result_path(other).is_file()  # another job of the dataset keeps its files
    assert storage.table_path(dataset).is_file() and default_storage.exists(dataset.original.name)
    storage.delete_job_files(job)  # nothing left to delete: no error


def test_delete_job_files_removes_an_anatomy_sensitive_table(user):
    dataset = people_dataset(user, hierarchies=False)
    job = jobs.run_job(jobs.create_job(dataset, "anatomy", 2, 0.0, "disease",
                                       models=[{"model": "distinct-l-diversity", "l": 2, "column": "disease"}]))
    st = storage.sensitive_table_path(storage.result_path(job))
    assert job.status == "succeeded" and st.is_file()
    storage.delete_job_files(job)
    assert not st.exists() and not storage.result_path(job).exists()


def test_delete_dataset_files_removes_the_original_the_table_and_the_jobs_files(user):
    dataset = make_dataset(user)
    job = finished_job(dataset)
    folder = _lattice_cache(job)
    kept = make_dataset(user, name="Another", roles={"age": Role.QUASI_IDENTIFYING})
    original = dataset.original.name
    assert default_storage.exists(original) and storage.table_path(dataset).is_file()
    storage.delete_dataset_files(dataset)
    assert not default_storage.exists(original)
    assert not storage.table_path(dataset).exists()
    assert not storage.result_path(job).exists() and not folder.exists()
    assert default_storage.exists(kept.original.name) and storage.table_path(kept).is_file()


def test_a_job_without_a_result_has_nothing_to_delete(user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    storage.delete_job_files(job)
    assert not storage.result_path(job).exists()
