"""A job reads its dataset's stored Parquet dictionary-encoded (storage.read_frame(dictionary=True)): its
Table must equal the one built from the plain text columns every other reader gets (frame values, types,
QI codes, sensitive codes) and the run must publish the same rows and report."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from anonymizer_helpers import make_dataset, people_dataset

from anonymizer_app.engine import Role
from anonymizer_app.engine.run import pipeline
from anonymizer_app.services import datasets, jobs, runs, storage

pytestmark = pytest.mark.django_db

TIMING_FIELDS = (("seconds",), ("search", "search_seconds"))


def _without_timing(report: dict) -> dict:
    report = {k: (dict(v) if isinstance(v, dict) else v) for k, v in report.items()}
    for path in TIMING_FIELDS:
        holder = report
        for key in path[:-1]:
            holder = holder.get(key) or {}
        holder.pop(path[-1], None)
    return report


class FrameSink:
    def __init__(self):
        self.frames, self.suppressed, self.rows = [], [], []

    def write(self, frame, suppressed, rows):
        self.frames.append(frame)
        self.suppressed.append(np.asarray(suppressed))
        self.rows.append(np.asarray(rows))


def test_read_frame_dictionary_holds_the_same_text(tmp_path):
    rng = np.random.default_rng(3)
    n = 5_000
    a = rng.choice(np.array(["x", "yy", "", "?", "NULL", "é"], dtype=object), n)
    b = rng.integers(0, 40, n).astype(str).astype(object)
    c = rng.choice(np.array(["p", "q"], dtype=object), n).copy()
    c[::7] = None  # a null: the column comes as to_frame makes it
    path = tmp_path / "t.parquet"
    with storage.AtomicParquet(path) as out:  # several row groups, each with its own dictionary
        for lo in range(0, n, 1_500):
            out.write(pa.table({"a": pa.array(a[lo:lo + 1500], pa.string()), "b": pa.array(b[lo:lo + 1500], pa.string()),
                                "c": pa.array(c[lo:lo + 1500], pa.string())}))
        out.commit()
    assert pq.ParquetFile(path).metadata.num_row_groups == 4
    plain = storage.read_frame(path)
    coded = storage.read_frame(path, dictionary=True)
    assert list(coded.columns) == ["a", "b", "c"] and isinstance(coded.index, pd.RangeIndex)
    for col in ("a", "b"):
        assert isinstance(coded[col].dtype, pd.CategoricalDtype)
        assert all(type(v) is str for v in coded[col].cat.categories)
        assert coded[col].astype(object).tolist() == plain[col].tolist() == pd.Series(
            a if col == "a" else b).tolist()
    assert coded["c"].dtype == object and coded["c"].tolist() == plain["c"].tolist()
    assert plain["c"][0] is None
    sub = storage.read_frame(path, ["b"], dictionary=True)
    assert list(sub.columns) == ["b"] and sub["b"].astype(object).tolist() == b.tolist()
    # an empty stored table
    empty = tmp_path / "e.parquet"
    with storage.AtomicParquet(empty) as out:
        out.commit(pa.schema([("a", pa.string())]))
    assert storage.read_frame(empty, dictionary=True).shape == (0, 1)


TIES_ROLES = {"id": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
              "sex": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}


def _ties_csv(n: int = 400, seed: int = 0) -> str:
    """A tie-heavy table: few distinct values per column, missing markers among them."""
    rng = np.random.default_rng(seed)
    lines = ["id,age,zip,sex,disease,note"]
    for i in range(n):
        age = rng.choice(["21", "22", "35", "36", "?", "70"])
        zip_ = rng.choice(["10115", "10117", "20095", "", "NULL"])
        sex = rng.choice(["F", "M"])
        disease = rng.choice(["flu", "cold", "asthma", "NA"])
        lines.append(f"{i},{age},{zip_},{sex},{disease},{rng.choice(['a', 'b', '=x'])}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("kind", ["people", "ties"])
@pytest.mark.parametrize("algorithm,k,suppression,options", [
    ("datafly", 3, 0.0, {}),
    ("flash", 2, 0.1, {}),
    ("mondrian", 3, 0.0, {}),
])
def test_a_jobs_table_from_the_dictionary_equals_the_plain_one(user, kind, algorithm, k, suppression, options):
    dataset = people_dataset(user) if kind == "people" else make_dataset(user, _ties_csv(), "ties.csv",
                                                                        roles=TIES_ROLES)
    job = jobs.create_job(dataset, algorithm, k, suppression, "disease", options=options)
    spec = runs.job_spec(job)  # the job's path: the dictionary-encoded frame
    table = spec.table
    # the reference reads every row (a Table dictionary-encodes text object columns too: encode_objects=False)
    plain = replace(datasets.table_from_config(datasets.load_frame(dataset), job.config, dataset.name),
                    encode_objects=False)
    assert set(table.dictionaries) >= set(table.qi)  # the QIs were encoded from the codes
    assert not plain.dictionaries
    assert table.frame.equals(plain.frame) and table.types == plain.types and table.roles == plain.roles
    assert table.holding_missing == plain.holding_missing
    hierarchies = table.hierarchies(spec.hierarchies)
    assert np.array_equal(table.encode(hierarchies), plain.encode(plain.hierarchies(spec.hierarchies)))

    coded_sink, plain_sink = FrameSink(), FrameSink()
    coded = pipeline.run(spec, sink=coded_sink)
    again = pipeline.run(replace(spec, table=plain), sink=plain_sink)
    assert pd.concat(coded_sink.frames).equals(pd.concat(plain_sink.frames))
    assert np.array_equal(np.concatenate(coded_sink.suppressed), np.concatenate(plain_sink.suppressed))
    assert np.array_equal(np.concatenate(coded_sink.rows), np.concatenate(plain_sink.rows))
    assert _without_timing(coded.report) == _without_timing(again.report)
