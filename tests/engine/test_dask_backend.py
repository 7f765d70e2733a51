"""The Dask backend (engine.backends.dask) publishes exactly what the single-process pipeline publishes.

A LocalCluster of 2 worker processes reads a generated 20,000-row table as Parquet in 7 partitions
(row groups of 3,000 rows); Flash with k-anonymity, distinct 3-diversity and suppression runs on the
merged frequency set. The published rows (input rows and cells), the CSV written from them (byte for
byte) and the report (every key but the timings) equal the in-memory run's. A partition tampered with
after it was written is refused by the gate, naming the partition.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from anonymizer_app.engine import Cancelled, InputError, Table, VerificationError
from anonymizer_app.engine.backends.dask import ParquetTable
from anonymizer_app.engine.model.table import Role
from anonymizer_app.engine.privacy import (
    AlphaKAnonymity,
    BetaLikeness,
    DeltaDisclosure,
    DistinctLDiversity,
    KMap,
    TCloseness,
)
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec

from ._dask_table import ROLES, hierarchies, people

distributed = pytest.importorskip("distributed")
backend = pytest.importorskip("anonymizer_app.engine.backends.dask.backend")
partitions = pytest.importorskip("anonymizer_app.engine.backends.dask.partitions")

TIMINGS = {"seconds", "search_seconds"}


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0",
                                       silence_logs=50)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    frame = people()
    path = tmp_path_factory.mktemp("dask") / "people.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=3_000)
    assert pq.ParquetFile(path).num_row_groups == 7
    return frame, str(path)


class CsvSink:
    """The published rows as CSV text and their input rows, chunk by chunk."""

    def __init__(self):
        self.text, self.rows, self.flags, self.started = io.StringIO(), [], [], False

    def write(self, frame, suppressed, rows):
        self.text.write(frame.to_csv(index=False, header=not self.started, sep=";", lineterminator="\n"))
        self.started = True
        self.rows.append(np.asarray(rows))
        self.flags.append(np.asarray(suppressed))


def _same(a, b, path=""):
    """Equal reports: the same keys and values, floats to 1e-12 (sums over rows vs weighted rows)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), f"{path}: keys {list(a)} != {list(b)}"
        for key in a:
            if key not in TIMINGS:
                _same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{path}: {len(a)} != {len(b)} entries"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12), f"{path}: {a} != {b}"
    else:
        assert a == b and type(a) is type(b), f"{path}: {a!r} != {b!r}"


def _both(client, stored, models, k, suppression, suppressed_rows="remove", algorithm="flash"):
    frame, path = stored
    given = hierarchies()
    single, on_cluster = CsvSink(), CsvSink()
    a = pipeline.run(RunSpec.build(Table(frame, dict(ROLES)), given, algorithm, k=k, models=models,
                                   suppression_limit=suppression, suppressed_rows=suppressed_rows), sink=single)
    source = ParquetTable(path, {c: Role.parse(r) for c, r in ROLES.items()}, name="people")
    b = backend.run_on_cluster(RunSpec.build(source, given, algorithm, k=k, models=models,
                                             suppression_limit=suppression, suppressed_rows=suppressed_rows),
                               sink=on_cluster, client=client)
    return a, b, single, on_cluster


@pytest.mark.parametrize("suppressed_rows", ["remove", "keep"])
def test_flash_with_l_diversity_and_suppression_publishes_what_one_process_publishes(client, stored, suppressed_rows):
    a, b, single, on_cluster = _both(client, stored, [DistinctLDiversity(3)], 5, 0.01, suppressed_rows)
    assert a.report["suppressed"] == 115  # the run suppresses: the suppression path is exercised
    assert a.report["publishing"]["published_records"] == (19_885 if suppressed_rows == "remove" else 20_000)
    assert single.text.getvalue() == on_cluster.text.getvalue()  # byte for byte
    assert np.array_equal(np.concatenate(single.rows), np.concatenate(on_cluster.rows))
    assert np.array_equal(np.concatenate(single.flags), np.concatenate(on_cluster.flags))
    _same(a.report, b.report)
    assert b.report["attack"]["disease"]["homogeneous"] == a.report["attack"]["disease"]["homogeneous"]


def test_plain_k_anonymity_without_suppression(client, stored):
    a, b, single, on_cluster = _both(client, stored, [], 3, 0.0)
    assert a.report["suppressed"] == 0 and any(a.report["transformation"].values())
    assert single.text.getvalue() == on_cluster.text.getvalue()
    _same(a.report, b.report)


def test_mondrian_cuts_on_the_cluster_and_publishes_what_one_process_publishes(client, stored):
    a, b, single, on_cluster = _both(client, stored, [DistinctLDiversity(3)], 5, 0.01, algorithm="mondrian")
    assert a.report["recoding"] == "multidimensional" and a.report["search"]["partitions"] > 1000
    assert single.text.getvalue() == on_cluster.text.getvalue()
    assert np.array_equal(np.concatenate(single.rows), np.concatenate(on_cluster.rows))
    _same(a.report, b.report)  # the cuts per QI and the partition count included


def test_mondrian_k_only_cuts_from_the_partitions_histograms(client, stored, monkeypatch):
    """k-anonymity alone: the top cuts come from box histograms counted on the workers; the driver's
    frequency-set cutting (top_cuts) is not called, and the output is byte for byte one process's."""
    from anonymizer_app.engine.backends.dask import mondrian as dmondrian

    def refuse(*args, **kwargs):
        raise AssertionError("top cuts made on the driver's frequency set")

    seen: list[int] = []
    counted = backend.ClusterRun.box_histograms

    def spy(self, boxes):
        got = counted(self, boxes)
        if not seen:  # the whole table: the merged histograms equal the frequency set's counts
            for j, h in enumerate(self.hierarchies):
                expected = np.bincount(self.freq.codes[:, j], weights=self.freq.counts, minlength=len(h.leaves))
                assert np.array_equal(got[j][0], expected.astype(np.int64))
        seen.append(len(boxes))
        return got

    monkeypatch.setattr(dmondrian, "top_cuts", refuse)
    monkeypatch.setattr(backend.ClusterRun, "box_histograms", spy)
    a, b, single, on_cluster = _both(client, stored, [], 5, 0.0, algorithm="mondrian")
    assert len(seen) > 1 and a.report["search"]["partitions"] > 1000
    assert single.text.getvalue() == on_cluster.text.getvalue()
    assert np.array_equal(np.concatenate(single.rows), np.concatenate(on_cluster.rows))
    _same(a.report, b.report)


def test_a_table_without_sensitive_columns(client, stored):
    """No sensitive column: nothing is attacked, and the empty list of attacked columns is not scattered
    (distributed refuses to scatter an empty list)."""
    frame, path = stored
    roles = dict(ROLES, disease="insensitive")
    single, on_cluster = CsvSink(), CsvSink()
    a = pipeline.run(RunSpec.build(Table(frame, roles), hierarchies(), "mondrian", k=5), sink=single)
    source = ParquetTable(path, {c: Role.parse(r) for c, r in roles.items()}, name="people")
    b = backend.run_on_cluster(RunSpec.build(source, hierarchies(), "mondrian", k=5), sink=on_cluster, client=client)
    assert single.text.getvalue() == on_cluster.text.getvalue()
    _same(a.report, b.report)


def test_the_other_models_on_sensitive_values(client, stored):
    models = [AlphaKAnonymity(alpha=0.5, k=5), BetaLikeness(beta=1.0), DeltaDisclosure(delta=1.5)]
    a, b, single, on_cluster = _both(client, stored, models, 5, 0.02)
    assert a.report["suppressed"] > 0
    assert single.text.getvalue() == on_cluster.text.getvalue()
    _same(a.report, b.report)


def _written_run(client, stored, tmp_path):
    _, path = stored
    source = ParquetTable(path, {c: Role.parse(r) for c, r in ROLES.items()}, name="people")
    spec = RunSpec.build(source, hierarchies(), "flash", k=5, models=[DistinctLDiversity(3)], suppression_limit=0.01)
    run = backend.ClusterRun(spec, client, folder=str(tmp_path / "out"))
    run.scan()
    run.frequency()
    run.search()
    run.write()
    return run


def _tamper(run, index, change):
    target = partitions.part_path(run.folder, index)
    frame = pq.read_table(target).to_pandas()
    change(frame)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), target)


def test_the_gate_refuses_a_partition_whose_qi_cell_was_put_back(client, stored, tmp_path):
    run = _written_run(client, stored, tmp_path)
    raw = stored[0]["age"].iloc[3 * 3_000]  # the first row of partition 3 (not suppressed)

    def ungeneralize(frame):
        frame.loc[0, "age"] = raw
    _tamper(run, 3, ungeneralize)
    with pytest.raises(VerificationError, match=r"partition 3.*|row 1, column 'age'"):
        run.verify()


def test_the_gate_refuses_a_partition_whose_sensitive_value_changed(client, stored, tmp_path):
    run = _written_run(client, stored, tmp_path)

    def change(frame):
        frame.loc[5, "disease"] = "flu" if frame.loc[5, "disease"] != "flu" else "cold"
    _tamper(run, 6, change)
    with pytest.raises(VerificationError, match="partition 6: column 'disease' is not a QI but was changed"):
        run.verify()


def test_the_gate_refuses_a_partition_with_a_row_dropped(client, stored, tmp_path):
    run = _written_run(client, stored, tmp_path)
    _tamper(run, 0, lambda frame: frame.drop(frame.index[-1], inplace=True))
    with pytest.raises(VerificationError, match="partition 0: .* published rows but .* row numbers"):
        run.verify()


def test_models_the_cluster_cannot_check_are_refused_by_name(client, stored):
    _, path = stored
    source = ParquetTable(path, {c: Role.parse(r) for c, r in ROLES.items()})
    with pytest.raises(InputError, match="on a Dask cluster the algorithms are flash, mondrian, not datafly"):
        backend.run_on_cluster(RunSpec.build(source, hierarchies(), "datafly", k=5), client=client)
    with pytest.raises(InputError, match="unknown column 'nope'"):
        backend.run_on_cluster(RunSpec.build(ParquetTable(path, {"nope": Role.QUASI_IDENTIFYING}), {}, "flash", k=5),
                               client=client)
    for model in (TCloseness(0.2), KMap(kmap_k=3)):  # another encoding of the column; a population estimate
        with pytest.raises(InputError, match=f"on a Dask cluster the privacy models are .*not {model.name}"):
            backend.run_on_cluster(RunSpec.build(ParquetTable(path, {c: Role.parse(r) for c, r in ROLES.items()}),
                                                 hierarchies(), "flash", k=5, models=[model]), client=client)


def test_a_cancelled_run_stops_and_leaves_no_partition(client, stored, tmp_path):
    _, path = stored
    source = ParquetTable(path, {c: Role.parse(r) for c, r in ROLES.items()})
    spec = RunSpec.build(source, hierarchies(), "flash", k=5, models=[DistinctLDiversity(3)], suppression_limit=0.01)
    phases = []

    def progress(fraction, phase):
        phases.append(phase)
        return not phase.startswith("writing the output")  # the user cancels while the workers write

    folder = tmp_path / "written"
    run = backend.ClusterRun(spec, client, progress)
    run.folder = str(folder)
    run._own_folder = True  # as when the run makes its folder beside the input: removed whatever happens
    with pytest.raises(Cancelled):
        run.run(sink=CsvSink())
    assert any(p.startswith("writing the output") for p in phases)
    assert not folder.exists()


def test_a_parquet_column_that_is_not_text_is_refused_by_name(client, tmp_path):
    frame = people(200)
    frame["income"] = frame["income"].astype(float)
    path = tmp_path / "typed.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    source = ParquetTable(str(path), {c: Role.parse(r) for c, r in ROLES.items()})
    with pytest.raises(InputError, match="column 'income' of the Parquet table is float64: a cluster run reads text"):
        backend.run_on_cluster(RunSpec.build(source, hierarchies(), "flash", k=2), client=client)


@pytest.mark.parametrize(("algorithm", "diverse"), [("flash", True), ("mondrian", True), ("mondrian", False)])
def test_missing_values_are_read_as_one_process_reads_them(client, tmp_path, algorithm, diverse):
    models = [DistinctLDiversity(2)] if diverse else []  # without: Mondrian cuts from the box histograms
    frame = people(6_000, seed=4)
    rng = np.random.default_rng(4)
    for column, markers in (("age", ["", "?", "NA"]), ("zone", ["N/A", "null"]), ("disease", ["?", ""])):
        rows = rng.choice(len(frame), 60, replace=False)
        frame.loc[rows, column] = rng.choice(markers, len(rows))
    path = tmp_path / "missing.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=1_000)
    given = hierarchies()
    single, on_cluster = CsvSink(), CsvSink()
    a = pipeline.run(RunSpec.build(Table(frame, dict(ROLES)), given, algorithm, k=4, models=models,
                                   suppression_limit=0.02), sink=single)
    source = ParquetTable(str(path), {c: Role.parse(r) for c, r in ROLES.items()})
    b = backend.run_on_cluster(RunSpec.build(source, given, algorithm, k=4, models=models,
                                             suppression_limit=0.02), sink=on_cluster, client=client)
    assert "(null)" in single.text.getvalue() or algorithm == "mondrian"  # the missing leaf's path is published
    assert single.text.getvalue() == on_cluster.text.getvalue()
    _same(a.report, b.report)
