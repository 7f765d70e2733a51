"""Weighted frequency data, shaped so that the engine's own code runs on it: the run core's rows when the table
is not in one place (a cluster run's merged partitions).

The workers send, per partition, the distinct combinations of (QI leaf codes, codes of the attacked
sensitive columns) with their counts; merged, these "weighted rows" stand for the N records. The
algorithms read a table only through the frequency set (distinct QI tuples with counts), the sensitive
histograms of those tuples and ``table.n``/``qi``/``is_numeric``: :class:`FrequencyTable` and
:class:`WeightedDomain` give exactly those, so the lattice search runs unchanged and sees the figures a
single-process run sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..algorithms.base import CellRecoding, FullDomainRecoding
from ..model.hierarchy import Hierarchy
from ..model.table import NUMERIC_TYPES, FrequencySet, Role, Table, group_rows
from ..privacy import PrivacyModel
from ..privacy.distributions import SensitiveDomain


@dataclass
class FrequencyTable(Table):
    """A Table whose rows are distinct combinations, each standing for ``weights[i]`` records."""

    weights: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def n(self) -> int:
        return int(self.weights.sum())


def frequency_table(columns: list[str], qi: list[str], hierarchies: list[Hierarchy], qi_codes: np.ndarray,
                    attacked: list[str], domain_values: list[np.ndarray], sens_codes: np.ndarray,
                    roles: dict[str, Role], types: dict[str, str], name: str, na_values: tuple,
                    weights: np.ndarray) -> FrequencyTable:
    """The weighted rows as a table: each QI's leaf and each attacked column's value decoded, in the
    table's column order (the other columns are not read by a search)."""
    frame = {}
    for c in columns:
        if c in qi:
            j = qi.index(c)
            frame[c] = np.asarray(hierarchies[j].leaves, dtype=object)[qi_codes[:, j]]
        elif c in attacked:
            i = attacked.index(c)
            frame[c] = domain_values[i][sens_codes[:, i]]
    kept = list(frame)
    return FrequencyTable(pd.DataFrame(frame, columns=kept), {c: roles[c] for c in kept},
                          {c: types[c] for c in kept}, name, na_values=na_values, weights=weights)


@dataclass
class WeightedDomain(SensitiveDomain):
    """A sensitive domain whose ``codes`` are per weighted row: every histogram counts the weights."""

    weights: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def row_weights(self, kept: np.ndarray | None = None) -> np.ndarray | None:
        return self.weights if kept is None else self.weights[kept]


def weighted_domains(columns: list[str], values: list[np.ndarray], numeric: list[bool], codes: np.ndarray,
                     weights: np.ndarray) -> dict[str, WeightedDomain]:
    """Each attacked column's domain over the weighted rows (``codes``: per row, one value code per column),
    its whole-table distribution counted from the weights."""
    return {c: WeightedDomain(c, values[i], codes[:, i],
                              np.bincount(codes[:, i], weights=weights, minlength=len(values[i])).astype(np.int64),
                              numeric[i], weights=weights)
            for i, c in enumerate(columns)}


def weighted_classes(cells: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The classes of weighted rows (identical ``cells``: one row of codes each): row -> class and each class's
    records (the weights summed)."""
    if not len(cells):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    _, class_of, _ = group_rows(cells.astype(np.int64))
    return class_of, np.bincount(class_of, weights=weights).astype(np.int64)


def merge_combinations(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
                       width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of several (combinations, counts, first rows) triples: counts summed, the first row
    (in the whole table) the smallest, in key order."""
    parts = [p for p in parts if len(p[1])]
    if not parts:
        return np.zeros((0, width), dtype=np.int32), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    combos = np.concatenate([p[0] for p in parts]) if len(parts) > 1 else parts[0][0]
    counts = np.concatenate([p[1] for p in parts]) if len(parts) > 1 else parts[0][1]
    rows = np.concatenate([p[2] for p in parts]) if len(parts) > 1 else parts[0][2]
    first, inverse, _ = group_rows(combos.astype(np.int64))
    total = np.bincount(inverse, weights=counts, minlength=len(first)).astype(np.int64)
    earliest = np.full(len(first), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(earliest, inverse, rows)
    return combos[first], total, earliest


def tuple_frequency_set(qi_codes: np.ndarray, weights: np.ndarray, leaf_counts: np.ndarray) -> FrequencySet:
    """The frequency set of the weighted rows: distinct QI tuples in the order table.frequency_set gives
    them (the same mixed-radix key), counts summed from the weights, ``inverse``: weighted row -> tuple."""
    first, inverse, _ = group_rows(qi_codes, leaf_counts)
    counts = np.bincount(inverse, weights=weights, minlength=len(first)).astype(np.int64)
    return FrequencySet(qi_codes[first], counts, inverse)


def merge_first_seen(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Values with counts from partitions in input order: the values in order of first appearance in the
    whole table, the counts summed (the report's value counts are report.counted_values over them)."""
    if not parts:
        return np.zeros(0, dtype=object), np.zeros(0, dtype=np.int64)
    values = np.concatenate([p[0] for p in parts]).astype(object)
    counts = np.concatenate([p[1] for p in parts]).astype(np.int64)
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), sort=False)
    return np.asarray(uniques, dtype=object), np.bincount(codes, weights=counts, minlength=len(uniques)).astype(np.int64)


# ---- the figures of a run over weighted rows, one small bundle per stage ---------------------------------------
@dataclass(frozen=True)
class ColumnPlan:
    """The table's columns as the run reads them: their roles, the QIs, the sensitive column, the models bound
    to their columns and the columns the attack report covers (the sensitive ones and the models')."""

    columns: list[str]
    roles: dict[str, Role]
    qi: list[str]
    sensitive: str | None
    models: list[PrivacyModel]
    attacked: list[str]

    @property
    def identifying(self) -> list[str]:
        """Removed from the output."""
        return [c for c in self.columns if self.roles[c] == Role.IDENTIFYING]

    @property
    def published(self) -> list[str]:
        return [c for c in self.columns if self.roles[c] != Role.IDENTIFYING]

    @property
    def wanted(self) -> list[str]:
        """The columns whose values the scan counts: the QIs, then the attacked columns."""
        return self.qi + [c for c in self.attacked if c not in self.qi]


@dataclass(frozen=True)
class ColumnFigures:
    """What the scan tells: the records, each wanted column's values (first seen) with their counts, the types."""

    records: int
    values: dict[str, tuple[np.ndarray, np.ndarray]]
    types: dict[str, str]
    na_values: tuple[str, ...]

    def is_numeric(self, column: str) -> bool:
        return self.types[column] in NUMERIC_TYPES


@dataclass(frozen=True)
class WeightedRows:
    """The merged frequency data: each row a distinct combination of QI leaf codes and attacked columns' value
    codes, standing for ``weights[i]`` records."""

    qi_codes: np.ndarray  # row -> QI leaf codes (int32)
    sens_codes: np.ndarray  # row -> a value code per attacked column
    weights: np.ndarray  # row -> records
    first_rows: np.ndarray  # row -> its first input row
    freq: FrequencySet  # the distinct QI tuples (inverse: row -> tuple)
    domains: dict[str, WeightedDomain]  # attacked column -> its values over the rows

    def domain_over(self, column: str, codes: np.ndarray, weights: np.ndarray) -> WeightedDomain:
        """``column``'s domain over other weighted rows (``codes``: a value code per attacked column, in the
        domains' order), with the whole input's distribution."""
        d = self.domains[column]
        return WeightedDomain(column, d.values, codes[:, list(self.domains).index(column)], d.table_counts,
                              d.numeric, weights=weights)


@dataclass(frozen=True)
class ResultClasses:
    """The result over the weighted rows: its recoding, what is suppressed, the classes."""

    recoding: FullDomainRecoding | CellRecoding
    suppressed: np.ndarray  # weighted row -> suppressed
    row_class: np.ndarray  # weighted row -> class (-1: suppressed)
    sizes: np.ndarray  # records per class
    cells: tuple[np.ndarray, list] | None  # a cell recoding's (weighted row -> cell codes, labels per QI)

    def suppressed_records(self, weights: np.ndarray) -> int:
        return int(weights[self.suppressed].sum())


@dataclass(frozen=True)
class AttackRows:
    """The rows the attack report lists: class -> its first input rows (at most ``limit``)."""

    rows: dict[int, list[int]]
    limit: int


@dataclass(frozen=True)
class PublishedClasses:
    """What the gate checked on the published rows, merged: records, the '*' rows kept, the classes an attacker
    sees (distinct published QI cells) with the weighted published rows' sensitive codes, each QI's values."""

    records: int
    suppressed: int  # suppressed records published as '*' rows
    sizes: np.ndarray
    row_class: np.ndarray  # published weighted row -> class
    codes: np.ndarray  # published weighted row -> a value code per attacked column
    weights: np.ndarray  # published weighted row -> records
    values: dict[str, tuple[np.ndarray, np.ndarray]]  # QI -> (values, counts) published


# ---- an out-of-core run's chunk summaries: weighted data counted chunk by chunk and partition by partition -----
@dataclass(frozen=True)
class CountedClasses:
    """Classes counted a partition at a time (every class lies whole in one partition): the size histogram
    (``count[i]`` classes of ``size[i]`` records), the smallest class, and per attacked column the attack report
    of every partition (attack.report_part)."""

    size: np.ndarray
    count: np.ndarray
    smallest: int
    attack: list[list[dict]]

    def class_sizes(self) -> np.ndarray:
        """One size per class (~n/k integers, never one per record)."""
        return np.repeat(self.size, self.count)


@dataclass(frozen=True)
class CountedLabels:
    """A cell recoding written chunk by chunk, summarized per QI: the input's records per leaf, the output labels
    (numbered as first written) with their records, and the distinct (label, leaf) pairs (key ``label *
    len(leaves) + leaf``) with their records: weighted rows of one QI each, what the loss figures add up."""

    leaf_counts: list[np.ndarray]
    labels: list[np.ndarray]
    label_counts: list[np.ndarray]
    pairs: list[tuple[np.ndarray, np.ndarray]]


class LabelCounter:
    """Counts the CountedLabels of a cell recoding as its output is written chunk by chunk: per QI, a stable id per
    distinct output cell (string identity, numbered as first written), the rows per id and the distinct (id,
    input leaf) pairs with their rows. ``leaves``: per QI, its hierarchy's number of leaves."""

    def __init__(self, leaves: list[int]):
        self.leaves = leaves
        self.ids: list[dict] = [{} for _ in leaves]
        self.counts = [np.zeros(0, dtype=np.int64) for _ in leaves]
        self.pairs = [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)) for _ in leaves]

    def add(self, j: int, factorized: tuple[np.ndarray, pd.Index], leaf: np.ndarray) -> np.ndarray:
        """Count QI ``j``'s cells of a chunk (``factorized``: factorize_cells of the written cells; ``leaf``: each
        row's input leaf); returns each row's label id."""
        codes, distinct = factorized
        ids = self.ids[j]
        keys = np.array([ids.setdefault(v, len(ids)) for v in distinct], dtype=np.int64)[codes]
        grown = np.zeros(len(ids), dtype=np.int64)
        grown[:len(self.counts[j])] = self.counts[j]
        self.counts[j] = grown + np.bincount(keys, minlength=len(ids))
        self.pairs[j] = _merge_pairs(self.pairs[j], keys * self.leaves[j] + leaf.astype(np.int64))
        return keys

    def summary(self, leaf_counts: list[np.ndarray]) -> CountedLabels:
        """The counted labels, with the input's rows per leaf of every QI."""
        labels = []
        for ids in self.ids:
            ordered = np.empty(len(ids), dtype=object)
            for label, i in ids.items():
                ordered[i] = label
            labels.append(ordered)
        return CountedLabels(leaf_counts, labels, self.counts, self.pairs)


def _merge_pairs(acc: tuple[np.ndarray, np.ndarray], keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys with their counts, accumulated over chunks."""
    uniq, counts = np.unique(keys, return_counts=True)
    if not len(acc[0]):
        return uniq, counts.astype(np.int64)
    merged, inverse = np.unique(np.concatenate([acc[0], uniq]), return_inverse=True)
    return merged, np.bincount(inverse, weights=np.concatenate([acc[1], counts]),
                               minlength=len(merged)).astype(np.int64)
