"""storage.column_distinct: a stored column's distinct values in order of first appearance, read a row group at
a time from Parquet's dictionary codes; checked against a plain first-seen scan of the cells, over several row
groups (each with its own dictionary), nulls, a column whose values change dictionary between groups, and a
column with more distinct values than a row group."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq

from anonymizer_app.services import storage


def first_seen(cells: list) -> list:
    seen, out = set(), []
    for cell in cells:
        if cell not in seen:
            seen.add(cell)
            out.append(cell)
    return out


def test_distinct_values_in_first_seen_order(tmp_path):
    rng = random.Random(7)
    n = 5000
    columns = {
        "few": [rng.choice(["b", "a", "c", "", "=1+1"]) for _ in range(n)],
        "nulls": [None if rng.random() < 0.1 else rng.choice(["x", "y", "z"]) for _ in range(n)],
        # values that only appear in later row groups (a group's dictionary differs from the first's)
        "drift": [f"v{i // 700}-{rng.randrange(3)}" for i in range(n)],
        "many": [str(rng.randrange(4000)) for _ in range(n)],
    }
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({k: pa.array(v, type=pa.string()) for k, v in columns.items()}), path,
                   row_group_size=600)
    assert pq.ParquetFile(path).metadata.num_row_groups == 9
    for name, cells in columns.items():
        got = storage.column_distinct(path, name)
        assert got.type == pa.string()
        assert got.to_pylist() == first_seen(cells), name


def test_empty_table(tmp_path):
    path = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"a": pa.array([], type=pa.string())}), path)
    assert storage.column_distinct(path, "a").to_pylist() == []
