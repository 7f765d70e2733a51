"""services.ingestion.store_table_file reads text files as Categoricals (dictionary=True) and writes them to
Parquet from their codes: every stored cell is the file's field as Python's csv module reads it (empty fields,
NA-like texts, quoted delimiters and quotes, non-ASCII), whole-file and streamed in blocks."""

from __future__ import annotations

import csv
import random

import pyarrow.parquet as pq
import pytest

from anonymizer_app.services import datasets, ingestion


def write_table(path, delimiter: str, n: int, quoted: bool) -> list[list[str]]:
    rng = random.Random(3)
    rows = [["a", "b", "c", "d"]]
    texts = ["q" + delimiter + "1", "plain", 'he said "hi"', ""] if quoted else ["plain", "two words", ""]
    for _ in range(n):
        rows.append([rng.choice(["", "NA", "x", "1.5", "nan", "N/A"]), str(rng.randrange(100)),
                     rng.choice(texts), rng.choice(["é", "ü", "z"])])
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, delimiter=delimiter, lineterminator="\n").writerows(rows)
    return rows


@pytest.mark.parametrize("quoted", [False, True])
@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("delimiter", [",", ";"])
def test_stored_cells_are_the_files_fields(tmp_path, monkeypatch, streamed, delimiter, quoted):
    path = tmp_path / "t.csv"
    rows = write_table(path, delimiter, 3000, quoted)
    options = datasets._limits()
    if streamed:  # blocks of 8 KiB: the file is read in many pieces, each a frame of its own
        monkeypatch.setattr(ingestion, "STREAM_THRESHOLD", 1024)
        options["block_bytes"] = 8192
    target = tmp_path / "t.parquet"
    _, n, columns = ingestion.store_table_file(path, "t.csv", None, target, **options)
    with open(path, newline="", encoding="utf-8") as f:
        expected = list(csv.reader(f, delimiter=delimiter))
    stored = pq.read_table(target)
    assert (n, columns, stored.column_names) == (3000, expected[0], expected[0])
    for i, name in enumerate(expected[0]):
        assert stored.column(name).to_pylist() == [r[i] for r in expected[1:]], name
    assert rows == expected
