"""What a worker does with one partition of the table (plain pandas/numpy: no dask here).

Each function takes the partition as a DataFrame of text cells (input order) and returns small
figures; none keeps the partition. The driver (:mod:`.backend`) merges the figures exactly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ...errors import InputError, VerificationError
from ...model.hierarchy import ROOT, Hierarchy
from ...model.missing import normalize_frame
from ...model.table import group_rows
from ...run.gate import check_published_partition


def checked(part: pd.DataFrame, columns: list[str], index: int, na_values: tuple[str, ...]) -> pd.DataFrame:
    """The partition as a Table holds its frame: text cells, every missing cell (an NA marker, a null)
    written MISSING (engine.model.missing.normalize_frame)."""
    if [str(c) for c in part.columns] != columns:
        raise InputError(f"partition {index} of the table has the columns {list(part.columns)}, expected {columns}")
    part = part.reset_index(drop=True)
    for c in columns:
        kind = part[c].dtype.kind
        if kind in "iub":  # whole numbers and booleans read as the text a CSV would hold
            part[c] = part[c].astype(str).astype(object)
        elif kind != "O":
            raise InputError(f"column {c!r} of the Parquet table is {part[c].dtype}: a cluster run reads text columns "
                             f"(as the web app stores tables); write it as strings")
    return normalize_frame(part, na_values)


@dataclass
class Scan:
    """One partition's rows and, per column asked for, its distinct values in order of first
    appearance with their counts."""

    rows: int
    values: dict[str, tuple[np.ndarray, np.ndarray]]


def scan(part: pd.DataFrame, columns: list[str], wanted: list[str], na_values: tuple[str, ...], index: int,
         offset: int = 0) -> Scan:
    part = checked(part, columns, index, na_values)
    out = {}
    for c in wanted:
        codes, uniques = pd.factorize(part[c], sort=False)  # first-appearance order
        out[c] = (np.asarray(uniques, dtype=object), np.bincount(codes, minlength=len(uniques)).astype(np.int64))
    return Scan(len(part), out)


def encode_sensitive(values: pd.Series, domain_values: np.ndarray) -> np.ndarray:
    codes = pd.Index(domain_values).get_indexer(pd.Index(values.astype(str)))
    if (codes < 0).any():  # the scan saw every value: a partition read differently the second time
        raise VerificationError(f"value {values[codes < 0].iloc[0]!r} of {values.name!r} was not in the first pass")
    return codes.astype(np.int32)


def combinations(part: pd.DataFrame, columns: list[str], qi: list[str], hierarchies: list[Hierarchy],
                 attacked: list[str], domains: list[np.ndarray], na_values: tuple[str, ...], index: int,
                 offset: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The partition's distinct (QI leaf codes, attacked sensitive codes) with their counts and the
    table row of each one's first record."""
    part = checked(part, columns, index, na_values)
    cols = [h.encode(part[c], c) for c, h in zip(qi, hierarchies)]
    cols += [encode_sensitive(part[c], d) for c, d in zip(attacked, domains)]
    matrix = np.column_stack(cols).astype(np.int32) if cols else np.zeros((len(part), 0), np.int32)
    if not len(matrix):
        return matrix, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    first, _, counts = group_rows(matrix.astype(np.int64))
    return matrix[first], counts.astype(np.int64), first.astype(np.int64) + offset


@dataclass
class Recipe:
    """How every partition is published: the chosen levels, the classes (generalized QI codes) whose
    records are suppressed, what happens to those records, and the columns that leave."""

    columns: list[str]  # the input's
    out_columns: list[str]  # the published ones (identifying columns removed)
    qi: list[str]
    hierarchies: list[Hierarchy]
    levels: list[int]
    suppressed_classes: np.ndarray  # rows x q generalized codes
    keep_suppressed: bool
    attacked: list[str]
    domains: list[np.ndarray]
    target_classes: np.ndarray  # rows x q generalized codes whose rows the attack report lists
    limit: int = 200
    numeric: list[bool] | None = None
    na_values: tuple[str, ...] = ()
    # local/multidimensional recoding (Mondrian): the output cells of every distinct QI tuple
    cells: "TupleCells | None" = None


@dataclass
class TupleCells:
    """Per distinct QI tuple (sorted by ``keys``, a mixed-radix key of its leaf codes): each QI's cell as an
    index into ``labels[j]``, whether its records are suppressed, and its attack-report target (-1 none)."""

    radices: np.ndarray
    keys: np.ndarray
    cells: np.ndarray  # tuples x q
    labels: list[np.ndarray]
    suppressed: np.ndarray
    target: np.ndarray

    def of_rows(self, leaves: np.ndarray, where: str) -> np.ndarray:
        key = np.zeros(len(leaves), dtype=np.int64)
        for j in range(leaves.shape[1]):
            key = key * int(self.radices[j]) + leaves[:, j]
        pos = np.minimum(np.searchsorted(self.keys, key), max(len(self.keys) - 1, 0))
        if len(key) and (not len(self.keys) or (self.keys[pos] != key).any()):
            raise VerificationError(f"{where}: a QI tuple that was not in the frequency set")
        return pos


def tuple_key_fits(radices: np.ndarray) -> bool:
    return float(np.prod(np.asarray(radices, dtype=float))) < 2.0**62


def _generalized(part: pd.DataFrame, recipe: Recipe) -> np.ndarray:
    return np.column_stack([h.maps[lv][h.encode(part[c], c)] for c, h, lv in
                            zip(recipe.qi, recipe.hierarchies, recipe.levels)]).astype(np.int64)


def _member(rows: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Which rows of ``rows`` (n x q ints) occur in ``table`` (m x q)."""
    if not len(table) or not len(rows):
        return np.zeros(len(rows), dtype=bool)
    both = np.concatenate([table, rows]).astype(np.int64)
    _, inverse, _ = group_rows(both)
    return np.isin(inverse[len(table):], inverse[:len(table)])


def part_path(folder: str, index: int) -> str:
    return os.path.join(folder, f"part-{index:05d}.parquet")


def rows_path(folder: str, index: int) -> str:
    return os.path.join(folder, f"part-{index:05d}.rows.npy")


def write(part: pd.DataFrame, recipe: Recipe, folder: str, index: int, offset: int) -> dict:
    """Build the partition's output (as api.build_output: QIs at their level, '*' where suppressed),
    keep the published rows, write them to ``folder`` (Parquet, text columns; their input rows beside),
    and list the rows of the attack report's target classes."""
    part = checked(part, recipe.columns, index, recipe.na_values)
    out = part[recipe.out_columns].copy()
    if recipe.cells is not None:  # local/multidimensional recoding: each tuple's cells as the run made them
        tc = recipe.cells
        leaves = np.column_stack([h.encode(part[c], c) for c, h in zip(recipe.qi, recipe.hierarchies)]).astype(np.int64)
        tuple_of = tc.of_rows(leaves, f"partition {index}")
        suppressed = tc.suppressed[tuple_of]
        for j, c in enumerate(recipe.qi):
            cells = tc.labels[j][tc.cells[tuple_of, j]].astype(object)
            cells[suppressed] = ROOT
            out[c] = cells
        target_of = tc.target[tuple_of]
    else:
        gen = _generalized(part, recipe)
        suppressed = _member(gen, recipe.suppressed_classes)
        for j, (c, h, lv) in enumerate(zip(recipe.qi, recipe.hierarchies, recipe.levels)):
            cells = h.labels[lv][gen[:, j]].astype(object)
            cells[suppressed] = ROOT
            out[c] = cells
    published = np.ones(len(part), dtype=bool) if recipe.keep_suppressed else ~suppressed
    frame = out[published].reset_index(drop=True)
    rows = np.flatnonzero(published).astype(np.int64) + offset
    table = pa.Table.from_pandas(frame, preserve_index=False,
                                 schema=pa.schema([(c, pa.string()) for c in recipe.out_columns]))
    pq.write_table(table, part_path(folder, index), compression="zstd")
    np.save(rows_path(folder, index), np.column_stack([rows, suppressed[published]]).astype(np.int64))
    targets: dict[int, list[int]] = {}
    if recipe.cells is not None:
        kept_rows = np.flatnonzero(~suppressed)
        which = target_of[kept_rows]
        for t in np.unique(which[which >= 0]).tolist():
            targets[int(t)] = [int(r) + offset + 1 for r in kept_rows[which == t][:recipe.limit]]
    elif len(recipe.target_classes):
        kept = ~suppressed
        both = np.concatenate([recipe.target_classes, gen[kept]])
        _, inverse, _ = group_rows(both)
        target_of = {int(g): i for i, g in enumerate(inverse[:len(recipe.target_classes)])}
        which = _lookup(inverse[len(recipe.target_classes):], target_of)
        kept_rows = np.flatnonzero(kept) + offset
        for t in np.unique(which[which >= 0]).tolist():
            targets[int(t)] = [int(r) + 1 for r in kept_rows[which == t][:recipe.limit]]
    return {"published": int(published.sum()), "targets": targets}


def _lookup(keys: np.ndarray, table: dict[int, int]) -> np.ndarray:
    src = np.fromiter(table.keys(), dtype=np.int64, count=len(table))
    dst = np.fromiter(table.values(), dtype=np.int64, count=len(table))
    out = np.full(len(keys), -1, dtype=np.int64)
    order = np.argsort(src)
    pos = np.searchsorted(src[order], keys)
    pos = np.minimum(pos, len(src) - 1)
    hit = src[order][pos] == keys
    out[hit] = dst[order][pos[hit]]
    return out


@dataclass
class Checked:
    """The gate's figures of one verified partition: its published classes (each QI's cell as a code:
    its index among the level's labels, ``len(labels)`` for '*' where '*' is no label) with the counts
    of every (class, attacked values) combination, and each QI's published cells in order of first
    appearance with their counts."""

    combos: np.ndarray
    counts: np.ndarray
    cells: dict[str, tuple[np.ndarray, np.ndarray]]
    rows: int
    suppressed: int


def verify(part: pd.DataFrame, recipe: Recipe, folder: str, index: int, offset: int) -> Checked:
    """The publishing gate on one partition, from the file as written: the columns that leave; the
    published rows are input rows of this partition, in order; every QI cell is its input value's
    label at the chosen level ('*' only on a suppressed record kept as such); every other column unchanged."""
    part = checked(part, recipe.columns, index, recipe.na_values)
    written = pq.read_table(part_path(folder, index)).to_pandas()
    meta = np.load(rows_path(folder, index))
    where = f"partition {index}"
    if meta.ndim != 2 or meta.shape[1] != 2:
        raise VerificationError(f"{where}: the row numbers beside the partition are unreadable")
    rows = meta[:, 0] - offset
    flags = meta[:, 1].astype(bool)
    check_published_partition(part, written, rows, flags, recipe.out_columns, recipe.qi, recipe.hierarchies,
                              None if recipe.cells is not None else recipe.levels, recipe.numeric or [False] * len(recipe.qi),
                              recipe.keep_suppressed, where)
    source = part.iloc[rows].reset_index(drop=True)
    codes = []
    cells_seen: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for j, (c, h) in enumerate(zip(recipe.qi, recipe.hierarchies)):
        labels = recipe.cells.labels[j] if recipe.cells is not None else h.labels[recipe.levels[j]]
        # the classes: each distinct published cell looked up once among the run's output values
        fcodes, uniques = pd.factorize(written[c], sort=False)
        cells_seen[c] = (np.asarray(uniques, dtype=object), np.bincount(fcodes, minlength=len(uniques)).astype(np.int64))
        code = pd.Index(labels).get_indexer(pd.Index(uniques))[fcodes] if len(fcodes) else np.zeros(0, np.int64)
        unknown = (code < 0) & ~flags
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise VerificationError(f"{where}: row {i + 1}, column {c!r}: {written[c].iloc[i]!r} is none of the run's "
                                    f"output values")
        codes.append(np.where(code >= 0, code, len(labels)))
    # the sensitive values the models are checked on come from the input, as at the gate
    codes += [encode_sensitive(source[c], d) for c, d in zip(recipe.attacked, recipe.domains)]
    matrix = np.column_stack(codes).astype(np.int64) if len(written) else np.zeros((0, len(codes)), np.int64)
    if len(matrix):
        first, _, counts = group_rows(matrix)
        combos, counts = matrix[first].astype(np.int32), counts.astype(np.int64)
    else:
        combos, counts = matrix.astype(np.int32), np.zeros(0, np.int64)
    return Checked(combos, counts, cells_seen, len(written), int(flags.sum()))


def region_histograms(part: pd.DataFrame, columns: list[str], qi: list[str], hierarchies: list[Hierarchy],
                      na_values: tuple[str, ...], regions: list, index: int, offset: int = 0) -> list[np.ndarray]:
    """Per QI, the partition's record count per (region, leaf code): a ``len(regions) x leaves`` matrix.

    A region of Mondrian's cut tree is a box, one set of leaves per QI (``regions[r][j]``, a boolean mask
    over the leaves of QI ``j``): a record lies in it when each of its QI leaves is in that QI's set."""
    part = checked(part, columns, index, na_values)
    codes = [np.asarray(h.encode(part[c], c), dtype=np.int64) for c, h in zip(qi, hierarchies)]
    out = [np.zeros((len(regions), len(h.leaves)), dtype=np.int64) for h in hierarchies]
    for r, masks in enumerate(regions):
        inside = np.ones(len(part), dtype=bool)
        for j, mask in enumerate(masks):
            inside &= mask[codes[j]]
        for j, h in enumerate(hierarchies):
            out[j][r] = np.bincount(codes[j][inside], minlength=len(h.leaves))
    return out


def tuple_histograms(encoded: tuple, regions: list,
                     sizes: list[int]) -> list[np.ndarray]:
    """region_histograms on a partition already encoded by :func:`combinations` or :func:`kept_codes` (its
    distinct tuples, whose first ``len(sizes)`` columns are the QI leaf codes, and their record counts): per QI a
    ``len(regions) x leaves`` matrix of record counts, the same as region_histograms on the partition's rows.
    The counts are summed as float64 by np.bincount: exact, as every sum is an integer below 2**53."""
    matrix, counts = encoded[0], encoded[1]
    out = [np.zeros((len(regions), size), dtype=np.int64) for size in sizes]
    for r, masks in enumerate(regions):
        inside = np.ones(len(matrix), dtype=bool)
        for j, mask in enumerate(masks):
            inside &= mask[matrix[:, j]]
        weights = counts[inside]
        for j, size in enumerate(sizes):
            out[j][r] = np.bincount(matrix[inside, j], weights=weights, minlength=size).astype(np.int64)
    return out


def kept_codes(encoded: tuple[np.ndarray, np.ndarray, np.ndarray], q: int) -> tuple[np.ndarray, np.ndarray]:
    """What a worker keeps of :func:`combinations`' result for Mondrian's top cuts: the QI leaf codes
    (uint16 when every code fits) and the record counts, without the sensitive codes and first rows."""
    matrix, counts = encoded[0][:, :q], encoded[1]
    small = matrix.size == 0 or int(matrix.max()) < 2**16
    wide = len(counts) and int(counts.max()) >= 2**31
    return (np.ascontiguousarray(matrix, dtype=np.uint16 if small else np.int32),
            counts.astype(np.int64 if wide else np.int32))
