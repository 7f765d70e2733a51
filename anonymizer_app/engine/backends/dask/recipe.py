"""What the workers need to write their partitions (:class:`.partitions.Recipe`), built on the driver from the
run core's result over the weighted rows: a full-domain recoding's suppressed and listed classes as generalized
QI codes, or a cell recoding's cells per distinct QI tuple."""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...model.hierarchy import Hierarchy
from ...model.table import group_rows
from ...run.weighted import ResultClasses, WeightedRows
from ...search.lattice import generalize_codes
from . import partitions


def level_classes(rows: WeightedRows, result: ResultClasses, hierarchies: list[Hierarchy], levels: list[int],
                  targets: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """A full-domain recoding's classes as the workers find them (generalized QI codes at ``levels``): those
    whose records are suppressed, and the ``targets`` (classes whose rows the attack report lists, each by the
    codes of its first weighted row)."""
    none = np.zeros((0, len(hierarchies)), np.int64)
    generalized = generalize_codes(rows.qi_codes.astype(np.int64), hierarchies, levels)
    gs = generalized[result.suppressed]
    suppressed_classes = gs[group_rows(gs)[0]] if len(gs) else none
    first_row = np.full(len(result.sizes), -1, dtype=np.int64)
    kept = np.flatnonzero(result.row_class >= 0)
    first_row[result.row_class[kept][::-1]] = kept[::-1]
    return suppressed_classes, generalized[first_row[targets]] if targets else none


def tuple_cells(rows: WeightedRows, result: ResultClasses, hierarchies: list[Hierarchy],
                targets: list[int]) -> partitions.TupleCells:
    """Each distinct QI tuple's cells (one partition per tuple: the strict variant), whether it is suppressed and
    which target class it is in, for the workers."""
    radices = np.array([len(h.leaves) for h in hierarchies], dtype=np.int64)
    if not partitions.tuple_key_fits(radices):
        raise InputError("the QIs' hierarchies have too many leaves together for a cluster run of Mondrian "
                         "(their product must stay below 2^62)")
    freq = rows.freq
    assert result.cells is not None
    first = np.full(len(freq.counts), -1, dtype=np.int64)
    first[freq.inverse[::-1]] = np.arange(len(freq.inverse))[::-1]  # a weighted row of each tuple
    key = np.zeros(len(freq.counts), dtype=np.int64)
    for j in range(len(hierarchies)):
        key = key * int(radices[j]) + freq.codes[:, j].astype(np.int64)
    target = np.full(len(freq.counts), -1, dtype=np.int64)
    index = {c: i for i, c in enumerate(targets)}
    cls = result.row_class[first]
    for t in np.flatnonzero(cls >= 0).tolist():
        target[t] = index.get(int(cls[t]), -1)
    order = np.argsort(key)
    codes, labels = result.cells
    return partitions.TupleCells(radices, key[order], codes[first][order].astype(np.int32), labels,
                                 result.suppressed[first][order], target[order])
