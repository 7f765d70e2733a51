"""The disk-based hybrid (seed 003 chapter 3) with a memory limit far below the table size."""

from __future__ import annotations

from anonymizer_app.engine import anonymize
from anonymizer_app.engine.algorithms.disk_clustering import bucket_size

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
