"""Large uploads stay on disk and paged: streamed to a temporary file, parsed in blocks into Parquet,
and the dataset, columns and result pages read only the row groups they show."""

import io

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from anonymizer_helpers import DEMO_DIR, run_jobs_synchronously
from django.core.files.uploadedfile import SimpleUploadedFile

from anonymizer_app import engine
from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import datasets, ingestion, results, storage

pytestmark = pytest.mark.django_db
ROWS = 200_000


@pytest.fixture(scope="module")
def big_csv() -> bytes:
    adult = pd.read_csv(DEMO_DIR / "adult" / "adult.csv", sep=";", dtype=str)
    rng = np.random.default_rng(0)
    frame = adult.iloc[rng.integers(0, len(adult), ROWS)].reset_index(drop=True)
    frame.insert(0, "id", [f"r{i}" for i in range(ROWS)])
    return frame.to_csv(sep=";", index=False).encode()


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(ingestion, "STREAM_THRESHOLD", 1024 * 1024)
    monkeypatch.setattr(ingestion, "STREAM_BLOCK", 2 * 1024 * 1024)


def forbid_whole_table(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a page loaded the whole table")
    monkeypatch.setattr(datasets, "load_frame", refuse)
    monkeypatch.setattr(results, "load_output", refuse)


def test_a_large_upload_stays_paged(client_alice, user, big_csv, small_blocks, monkeypatch):
    assert len(big_csv) > 10 * 1024 * 1024  # above FILE_UPLOAD_MAX_MEMORY_SIZE: a temporary file upload
    forbid_whole_table(monkeypatch)
    r = client_alice.post("/datasets/upload/", {"file": SimpleUploadedFile("big.csv", big_csv)})
    ds = Dataset.objects.get()
    assert r.status_code == 302 and r["Location"] == f"/datasets/{ds.pk}/"
    assert (ds.n_rows, ds.n_columns, ds.delimiter, ds.size_bytes) == (ROWS, 10, ";", len(big_csv))
    pf = pq.ParquetFile(storage.table_path(ds))
    assert pf.metadata.num_rows == ROWS and pf.metadata.num_row_groups > 3
    expected = pd.read_csv(io.BytesIO(big_csv), sep=";", dtype=str)
    cols = {c.name: c for c in ds.columns.all()}
    assert (cols["id"].role, cols["id"].distinct_count) == ("identifying", ROWS)
    assert (cols["age"].type, cols["age"].distinct_count) == ("integer", expected["age"].nunique())
    assert cols["sex"].distinct_count == 2 and cols["sex"].type == "string"

    html = client_alice.get(f"/datasets/{ds.pk}/").content.decode()
    assert "first 20 of 200,000 rows" in html
    assert f'<td class="nowrap">{expected.iloc[19]["id"]}</td>' in html and ">r20<" not in html
    html = client_alice.get(f"/datasets/{ds.pk}/columns/").content.decode()
    assert "Male" in html and "Female" in html
    # a type change is checked on the distinct values of the stored column
    data = {f"{f}:{c}": getattr(cols[c], f) for c in cols for f in ("type", "role")}
    r = client_alice.post(f"/datasets/{ds.pk}/columns/", {**data, "type:sex": "integer"})
    assert "column &#x27;sex&#x27;: &#x27;" in r.content.decode()

    # a run loads the whole table (the worker's job); its result page reads one page of rows
    monkeypatch.undo()
    for c in ds.columns.all():
        c.role = {"age": "quasi-identifying", "sex": "quasi-identifying", "race": "quasi-identifying",
                  "occupation": "sensitive", "id": "identifying"}.get(c.name, "insensitive")
        c.save()
    run_jobs_synchronously(monkeypatch)
    client_alice.post(f"/datasets/{ds.pk}/run/", {"algorithm": "mondrian", "k": 5, "suppression_percent": 0,
                                                 "sensitive": "occupation"})
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    assert pq.ParquetFile(job.result.output.path).metadata.num_row_groups > 1
    forbid_whole_table(monkeypatch)
    html = client_alice.get(f"/jobs/{job.pk}/result/?page=2001").content.decode()
    assert "Rows 100,001–100,050 of 200,000 · page 2,001 of 4,000" in html
    assert '<td class="num muted">100001</td>' in html
    assert "Counted over all 200,000 records." in html
    assert f'<td class="struck">{expected.iloc[100000]["id"]}</td>' in html


def test_blocks_report_line_numbers_of_the_whole_file(tmp_path):
    lines = ["a,b,c"] + [f"{i},{i},{i}" for i in range(50_000)]
    lines[40_000] = "1,2"
    path = tmp_path / "ragged.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(engine.InputError, match=r"^ragged.csv, line 40001: 2 field\(s\) where the first line has 3$"):
        _stream(path)


def _stream(path):
    old = ingestion.STREAM_THRESHOLD
    ingestion.STREAM_THRESHOLD = 0
    try:
        return [f for f, _ in ingestion.iter_table_file(path, block_bytes=64 * 1024)]
    finally:
        ingestion.STREAM_THRESHOLD = old


@pytest.mark.parametrize("text", [
    "a;b\n" + "".join(f"{i};x{i}\n" for i in range(30_000)),
    "a,b\n" + "".join(f'{i},"multi\nline {i}, quoted"\n' for i in range(20_000)),
])
def test_streamed_reading_equals_the_engine_reader(tmp_path, text):
    path = tmp_path / "t.csv"
    path.write_text(text)
    streamed = pd.concat(_stream(path), ignore_index=True)
    whole, _ = engine.read_table(path)
    pd.testing.assert_frame_equal(streamed, whole)
