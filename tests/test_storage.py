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


# ---- reading pages of a stored table -----------------------------------------------------------------------
def _stored(tmp_path, n: int, row_group: int):
    """A stored table of n rows in row groups of ``row_group``: column "i" holds the row number as text,
    column "v" a value that repeats (row mod 7, empty every 5th row)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    table = pa.table({"i": [str(r) for r in range(n)], "v": ["" if r % 5 == 0 else f"v{r % 7}" for r in range(n)]})
    pq.write_table(table, path, row_group_size=row_group)
    return path


@pytest.mark.parametrize("start, stop", [(0, 20), (0, 1), (5, 50), (990, 1010), (1000, 1020), (1995, 2010),
                                         (0, 3000), (2990, 3000), (3000, 3000), (100, 90)])
def test_read_rows_gives_exactly_the_rows_asked(tmp_path, monkeypatch, start, stop):
    """The rows are the same whether a range is decoded from the start of its row group (near the top) or
    its row groups are read whole; ranges across groups and past the end included."""
    monkeypatch.setattr(storage, "HEAD_ROWS", 100)
    path = _stored(tmp_path, 3000, 1000)
    frame = storage.read_rows(path, start, stop)
    expected = [str(r) for r in range(start, min(stop, 3000))]
    assert frame["i"].tolist() == expected and list(frame.columns) == ["i", "v"]
    assert storage.read_rows(path, start, stop, columns=["v"])["v"].tolist() == [
        "" if r % 5 == 0 else f"v{r % 7}" for r in range(start, min(stop, 3000))]


def test_first_distinct_reads_until_every_column_has_its_values(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    # "late" holds one value until row 9,000, then two more: found only in later batches
    late = ["a"] * 9000 + ["", "b", "a", "c"] + ["c"] * 996
    pq.write_table(pa.table({"late": late, "few": ["x", " ", "y"] * 3333 + ["x"],
                             "n": [str(r) for r in range(10000)]}), path, row_group_size=4000)
    found = storage.first_distinct(path, ["late", "few", "n"], 3, batch_size=1000)
    assert found == {"late": ["a", "b", "c"], "few": ["x", "y"], "n": ["0", "1", "2"]}
    assert storage.first_distinct(path, ["n"], 5) == {"n": ["0", "1", "2", "3", "4"]}
    assert storage.first_distinct(path, [], 5) == {}
