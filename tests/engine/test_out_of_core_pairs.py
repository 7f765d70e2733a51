"""The disk hybrid's write stage checks each distinct (input text, output cell) pair once for the whole table
(engine/backends/out_of_core._check_written) and looks each distinct text up once (_Lookup): a wrong cell in any
chunk, not only the first, is still caught and named by its row, and the lookups give what computing every value
directly gives."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import VerificationError
from anonymizer_app.engine.algorithms import disk_clustering
from anonymizer_app.engine.backends.out_of_core import _Lookup, anonymize_out_of_core

from ._local import mixed_table


def _chunked(frame: pd.DataFrame, size: int):
    def chunks():
        for s in range(0, len(frame), size):
            yield frame.iloc[s:s + size]
    return chunks


def _tamper_at(monkeypatch, first_row: int, edit):
    """The store returns the labels of the chunk starting at ``first_row`` changed by ``edit(cells)`` (per QI,
    then per row of the chunk), as ids into label tables extended with the edited cells."""
    label_ids = disk_clustering.ClusterStore.label_ids
    label_values = disk_clustering.ClusterStore.label_values
    tables: dict[int, np.ndarray] = {}

    def tampered_ids(self, start, stop):
        ids = label_ids(self, start, stop).copy()
        if start == first_row:
            cells = [label_values(self, j)[ids[:, j]].copy() for j in range(ids.shape[1])]
            edit(cells)
            for j, column in enumerate(cells):
                values = label_values(self, j)
                known = set(values.tolist())
                extra = [v for v in dict.fromkeys(column.tolist()) if v not in known]
                tables[j] = np.concatenate([values, np.array(extra, dtype=object)])
                ids[:, j] = [tables[j].tolist().index(v) for v in column.tolist()]
        return ids

    monkeypatch.setattr(disk_clustering.ClusterStore, "label_ids", tampered_ids)
    monkeypatch.setattr(disk_clustering.ClusterStore, "label_values",
                        lambda self, j: tables[j] if j in tables else label_values(self, j))


def _run(table, given):
    # memory_mb=1: chunks of 1,000 rows; the caller's of 997 (rows 0-996, 997-1993, 1994-1999)
    return anonymize_out_of_core(_chunked(table.frame, 997), table.roles, given, 5, lambda f: None,
                                 options={"memory_mb": 1})


def test_a_wrong_category_in_a_later_chunk_is_named(monkeypatch):
    table, given = mixed_table(2_000, 1)
    zone = table.frame["zone"].iloc[997 + 10]

    def wrong(cells):
        cells[1][10] = "b" if zone.startswith("a") else "a"  # QI 1 is zone (age, zone)

    _tamper_at(monkeypatch, 997, wrong)
    with pytest.raises(VerificationError, match=f"row 11, column 'zone': output '.' is not a generalization "
                                                f"of '{zone}'"):
        _run(table, given)


def test_a_wrong_range_in_a_later_chunk_is_named(monkeypatch):
    table, given = mixed_table(2_000, 2)
    age = table.frame["age"].iloc[997 + 20]

    def wrong(cells):
        cells[0][20] = "[200-300]"  # a range, but not around any age of the table (18..89)

    _tamper_at(monkeypatch, 997, wrong)
    with pytest.raises(VerificationError, match=rf"row 21, column 'age': output '\[200-300\]' is not a "
                                                rf"generalization of '{age}'"):
        _run(table, given)


def test_the_same_run_untampered_passes():
    table, given = mixed_table(2_000, 1)
    assert _run(table, given).verified


def test_lookup_computes_each_value_once_and_numbers_them_as_first_seen():
    calls: list[list[str]] = []

    def compute(values: np.ndarray) -> np.ndarray:
        calls.append(list(values))
        return np.array([len(v) * 10 + ord(v[0]) % 7 for v in values], dtype=np.int64)

    lookup = _Lookup(compute)
    batches = [["ab", "c", "dddd"], ["c", "e", "ab"], [], ["dddd"], ["f", "e", "gg", "c"]]
    numbers: dict[str, int] = {}
    for batch in batches:
        values = np.array(batch, dtype=object)
        got = lookup(values)
        expected = [len(v) * 10 + ord(v[0]) % 7 for v in batch]
        assert got.tolist() == expected
        for v in batch:
            numbers.setdefault(v, len(numbers))
        assert lookup.positions(values).tolist() == [numbers[v] for v in batch]
    computed = [v for call in calls for v in call]
    assert sorted(computed) == sorted(set(computed))  # no value computed twice
    assert set(computed) == {"ab", "c", "dddd", "e", "f", "gg"}


def test_lookup_past_its_limit_computes_without_keeping():
    lookup = _Lookup(lambda values: np.array([v.upper() for v in values], dtype=object), limit=3)
    assert lookup(np.array(["a", "b", "c", "d"], dtype=object)).tolist() == ["A", "B", "C", "D"]
    assert lookup(np.array(["e", "a"], dtype=object)).tolist() == ["E", "A"]
    assert set(lookup.numbers) == {"a", "b", "c", "d"}  # past the limit nothing more is kept
    assert lookup(np.zeros(0, dtype=object)).tolist() == []


def test_class_counter_with_4_byte_cells_counts_what_brute_force_counts(tmp_path):
    from collections import Counter

    from anonymizer_app.engine.backends.out_of_core import ClassCounter

    rng = np.random.default_rng(3)
    keys = rng.integers(0, 4, size=(5_000, 3))
    counter = ClassCounter(str(tmp_path / "c"), 3, 0, 3, np.int32)
    for s in range(0, 5_000, 1_700):
        counter.add(keys[s:s + 1_700], [], np.arange(s, min(s + 1_700, 5_000)))
    classes = counter.classes([])
    sizes = Counter(Counter(map(tuple, keys.tolist())).values())
    assert dict(zip(classes.size.tolist(), classes.count.tolist())) == dict(sizes)
    assert classes.smallest == min(Counter(map(tuple, keys.tolist())).values())
    rows = np.concatenate([block[:, -1] for block in counter.partitions()])
    assert sorted(rows.tolist()) == list(range(5_000))  # every row once, read back as int64
    with pytest.raises(ValueError, match="does not fit"):
        counter.add(np.array([[2**31, 0, 0]]), [], np.array([0]))
