"""The disk-based hybrid (seed 003 chapter 3) with a memory limit far below the table size."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonymizer_app.engine import anonymize
from anonymizer_app.engine.algorithms.disk_clustering import ClusterStore, _global_embedding, bucket_size
from anonymizer_app.engine.search.distance import Encoded, zkey

from ._local import mixed_table


def test_small_memory_limit_gives_a_valid_result():
    table, given = mixed_table(20_000, 11)
    table_mb = table.frame.memory_usage(deep=True).sum() / 2**20
    phases = []
    result = anonymize(table, given, algorithm="disk-clustering", k=5, options={"memory_mb": 1},
                       progress=lambda f, p: phases.append(p))
    assert table_mb > 1
    assert result.verified
    assert result.search["buckets"] > 1
    assert result.search["bucket_records"] == bucket_size(1, 2, 5) < table.n
    assert 5 <= result.search["smallest_cluster"] and result.search["largest_cluster"] <= 9
    assert any(p.startswith("storing the table on disk") for p in phases)
    assert any(p.startswith("clustering bucket 2 of") for p in phases)


def test_memory_option_is_a_cli_flag():
    from anonymizer_app.engine import get_algorithm

    flags = [p.flag for p in get_algorithm("disk-clustering").options]
    assert "--memory-mb" in flags


def test_rank_counts_the_splitters_below_each_record():
    from anonymizer_app.engine.algorithms.disk_clustering import _rank

    rng = np.random.default_rng(3)
    cut = np.column_stack([rng.integers(0, 6, 40), rng.integers(0, 500, 40)])  # many splitters share a z
    cut = cut[np.lexsort((cut[:, 1], cut[:, 0]))]
    z, ids = rng.integers(-1, 8, 5_000), rng.integers(0, 500, 5_000)
    expected = [sum((cz, ci) < (a, b) for cz, ci in cut.tolist()) for a, b in zip(z.tolist(), ids.tolist())]
    assert _rank(cut, z, ids).tolist() == expected
    assert _rank(cut[:0], z, ids).tolist() == [0] * len(z)


def _store(table, given, k, **kw):
    from anonymizer_app.engine.search.clustering import space_of

    from ._local import problem_of

    problem = problem_of(table, given, k)
    return problem, ClusterStore(space_of(problem), k, 1, np.random.default_rng(0), **kw)


def test_the_external_sort_gives_key_order_across_many_partitions():
    """Tie-heavy keys (72 ages x 6 zones) over ~40 partitions: the records come back in (z, row) order."""
    table, given = mixed_table(20_000, 5)
    problem, store = _store(table, given, 5)
    with store:
        store.part_bytes = 4096
        for s in range(0, table.n, 3_000):
            store.add(problem.codes[s:s + 3_000])
        parts, take = store._sorted()
        got = np.concatenate([take(p) for p in range(parts)])
        assert parts > 30
    z = zkey(_global_embedding(store.space, Encoded(store.space, problem.codes.astype(np.int64)),
                               problem.codes.astype(np.int64)))
    order = np.lexsort((np.arange(table.n), z))
    assert np.array_equal(got[:, 1], order) and np.array_equal(got[:, 0], z[order])
    assert np.array_equal(got[:, 2:], problem.codes[order])


def test_partition_sizes_do_not_change_the_result(monkeypatch):
    """Small sort and result partitions (many files, row ranges read across two of them) publish the same
    cells as the default sizes."""
    table, given = mixed_table(20_000, 6)
    expected = anonymize(table, given, algorithm="disk-clustering", k=5, options={"memory_mb": 1})
    init = ClusterStore.__init__

    def small(self, *args, **kw):
        init(self, *args, **kw)
        self.part_bytes = 3_000

    monkeypatch.setattr(ClusterStore, "__init__", small)
    got = anonymize(table, given, algorithm="disk-clustering", k=5, options={"memory_mb": 1})
    assert got.output.equals(expected.output)
    assert got.search == expected.search


def test_labels_and_groups_read_back_by_row_range():
    table, given = mixed_table(5_000, 7)
    problem, store = _store(table, given, 4, keep_labels=True)
    with store:
        store.part_bytes = 2_000
        store.add(problem.codes)
        store.cluster()
        groups = np.concatenate([store.groups(s, min(s + 333, table.n)) for s in range(0, table.n, 333)])
        labels = [np.concatenate(parts) for parts in
                  zip(*[store.labels(s, min(s + 701, table.n)) for s in range(0, table.n, 701)])]
    assert np.bincount(groups).min() >= 4
    for j in range(2):  # every cluster publishes one label per QI, and it covers the cluster's records
        per_cluster = pd.DataFrame({"g": groups, "label": labels[j]}).groupby("g")["label"].nunique()
        assert (per_cluster == 1).all()
