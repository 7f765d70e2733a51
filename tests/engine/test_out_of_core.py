"""The disk hybrid streamed end to end (engine/backends/out_of_core.py): the same result as the in-memory run,
checked from the written cells, with the table read in chunks and the classes counted on disk."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import HierarchyError, InputError, VerificationError, anonymize
from anonymizer_app.engine.algorithms import disk_clustering
from anonymizer_app.engine.backends.out_of_core import anonymize_out_of_core, supports
from anonymizer_app.engine.measure.metrics import class_figures, class_figures_from_histogram
from anonymizer_app.engine.privacy import make_model

from ._local import mixed_table


def _chunked(frame: pd.DataFrame, size: int):
    def chunks():
        for s in range(0, len(frame), size):
            yield frame.iloc[s:s + size]
    return chunks


def _run(table, given, k=5, size=997, memory_mb=1, **kw):
    written = []
    result = anonymize_out_of_core(_chunked(table.frame, size), table.roles, given, k, written.append,
                                   options={"memory_mb": memory_mb}, **kw)
    return result, pd.concat(written, ignore_index=True)


def test_same_cells_and_figures_as_the_in_memory_run():
    table, given = mixed_table(12_000, 3)
    expected = anonymize(table, given, algorithm="disk-clustering", k=5, options={"memory_mb": 1})
    result, output = _run(table, given)
    assert output.equals(expected.output.reset_index(drop=True))
    a, b = expected.report(), result.report
    assert b["verified"] and b["search"]["out_of_core"] is True
    assert b["search"]["buckets"] > 1 and b["search"]["partitions"] > 1  # memory far below the table
    for key in ("k_achieved", "equivalence_classes", "min_class_size", "suppressed", "records",
                "class_size_histogram", "metrics", "metrics_before", "quasi_identifiers", "sensitive"):
        assert a[key] == pytest.approx(b[key]), key
    # the attack report: the same figures (class ids are numbered per run)
    x, y = a["attack"]["disease"], b["attack"]["disease"]
    for key in ("records", "equivalence_classes", "homogeneous_classes", "records_in_homogeneous_classes",
                "entropy_min", "table_distribution"):
        assert x[key] == pytest.approx(y[key]), key
    assert x["entropy_mean"] == pytest.approx(y["entropy_mean"])
    assert x["worst_emd_equal"]["emd"] == pytest.approx(y["worst_emd_equal"]["emd"])
    assert {v: p["highest"] for v, p in x["posterior"].items()} == pytest.approx(
        {v: p["highest"] for v, p in y["posterior"].items()})
    assert sorted(e["entropy"] for e in x["entropy"]) == pytest.approx(sorted(e["entropy"] for e in y["entropy"]))


def test_every_class_recounted_from_the_written_rows():
    table, given = mixed_table(5_000, 8)
    result, output = _run(table, given, k=7, size=613)
    sizes = output.groupby(["age", "zone"]).size()
    assert sizes.min() >= 7
    assert result.report["equivalence_classes"] == len(sizes)
    assert result.report["metrics"]["discernibility"] == int((sizes.astype(np.int64) ** 2).sum())
    assert (output["disease"] == table.frame["disease"]).all()
    counts = result.report["value_counts"]["zone"]
    assert counts["before"]["counts"][0] == table.frame["zone"].value_counts().iloc[0]
    assert counts["after"]["distinct"] == output["zone"].nunique()
    assert sum(counts["after"]["counts"]) <= 5_000 and counts["after"]["rows"] == 5_000


def test_the_histogram_gives_the_class_figures():
    sizes = np.array([5, 5, 6, 9, 5, 12])
    values, counts = np.unique(sizes, return_counts=True)
    assert class_figures_from_histogram(values, counts, 60, 18, 5) == class_figures(sizes, 60, 18, 5)


def _tamper(monkeypatch, edit):
    """The store returns the first chunk's labels changed by ``edit(cells)`` (per QI, then per row): the write
    stage reads label ids and the label tables, so the edited cells become ids into tables that hold them."""
    label_ids = disk_clustering.ClusterStore.label_ids
    label_values = disk_clustering.ClusterStore.label_values
    tables: dict[int, np.ndarray] = {}

    def tampered_ids(self, start, stop):
        ids = label_ids(self, start, stop).copy()
        if start == 0:
            cells = [label_values(self, j)[ids[:, j]].copy() for j in range(ids.shape[1])]
            edit(cells)
            for j, column in enumerate(cells):
                values = label_values(self, j)
                extra = [v for v in pd.unique(column) if v not in set(values.tolist())]
                tables[j] = np.concatenate([values, np.array(extra, dtype=object)])
                ids[:, j] = pd.Index(tables[j]).get_indexer(column)
        return ids

    monkeypatch.setattr(disk_clustering.ClusterStore, "label_ids", tampered_ids)
    monkeypatch.setattr(disk_clustering.ClusterStore, "label_values",
                        lambda self, j: tables[j] if j in tables else label_values(self, j))


def test_a_wrong_cell_fails_verification(monkeypatch):
    table, given = mixed_table(2_000, 1)
    first_zone = table.frame["zone"].iloc[0]

    def wrong_zone(cells):
        cells[1][0] = "b" if first_zone.startswith("a") else "a"

    _tamper(monkeypatch, wrong_zone)
    with pytest.raises(VerificationError, match="row 1, column 'zone'"):
        _run(table, given)


def test_a_class_below_k_fails_verification(monkeypatch):
    table, given = mixed_table(2_000, 2)
    def lone_range(cells):
        cells[0][0] = "[0-1000]"  # a range no other record has: a valid cell, but a class of one

    _tamper(monkeypatch, lone_range)
    with pytest.raises(VerificationError, match="k-anonymity"):
        _run(table, given)


def test_bad_input_is_named():
    table, given = mixed_table(1_000, 4)
    frame = table.frame.copy()
    frame.loc[617, "zone"] = "z9"
    with pytest.raises(HierarchyError, match="column 'zone'.*'z9'"):
        anonymize_out_of_core(_chunked(frame, 100), table.roles, given, 5, lambda f: None)
    with pytest.raises(InputError, match="k=2000 is larger than the table's 1000 records"):
        anonymize_out_of_core(_chunked(frame, 100), table.roles, given, 2000, lambda f: None)
    with pytest.raises(InputError, match="unknown column 'nope'"):
        anonymize_out_of_core(_chunked(frame, 100), {"nope": "qi"}, given, 5, lambda f: None)


def test_only_k_anonymity_goes_out_of_core():
    assert supports("disk-clustering", [])
    assert not supports("disk-clustering", [make_model("distinct-l-diversity", l=2, column="disease")])
    assert not supports("oka", [])


def test_distinct_text_is_pandas_unique_of_the_text():
    from anonymizer_app.engine.backends.out_of_core import _distinct_text

    rng = np.random.default_rng(4)
    pool = np.array(["b", "a", "", "10", "c", "a"], dtype=object)
    for cells in (pool[rng.integers(0, len(pool), 9_000)],
                  np.array([1, "1", 2.5, "x", 1, "2.5"] * 1_000, dtype=object),
                  np.array(["x", None, np.nan, "y", "None"] * 1_000, dtype=object)):
        series = pd.Series(cells, dtype=object)
        assert _distinct_text(series).tolist() == pd.unique(series.astype(str)).tolist()
