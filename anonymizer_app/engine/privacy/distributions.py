"""Sensitive values per equivalence class: the data every attribute-disclosure model works on.

A :class:`SensitiveDomain` encodes one sensitive column (its distinct values, a code per row, the
table's distribution over all N records, the value order for ordered distance and the column's own
hierarchy for hierarchical distance). Class-level histograms are dense ``classes x values`` count
matrices, summed from rows (``row_class``) or from the distinct QI tuples of the frequency set
(``tuple_class``, using per-tuple histograms kept as (tuple, value, count) triplets).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError
from ..model.cells import ColumnDictionary, factorize_cells
from ..model.hierarchy import Hierarchy
from ..model.missing import MISSING

# Marker spellings, compared after trimming, lower-casing and turning runs of spaces, '_' and '-' into
# one '-' ("Non member" = "non_member" = "non-member"). A missing cell (NaN, None) reads as empty.
MARKER_IN = ("1", "1.0", "true", "t", "yes", "y", "x", "in", "member", "research")
MARKER_OUT = ("0", "0.0", "false", "f", "no", "n", "", "out", "non-member", "nonmember", "population")
_MARKERS = {**{w: True for w in MARKER_IN}, **{w: False for w in MARKER_OUT}}


def _normalize(value: object) -> str:
    return "-".join(str(value).strip().lower().replace("_", " ").replace("-", " ").split())


def parse_marker(values: pd.Series, column: str) -> np.ndarray:
    """Per row, whether the research-subset marker ``values`` (a column named ``column``) puts the record
    in the research subset. In: 1, true, t, yes, y, x, in, member, research; out: 0, false, f, no, n,
    empty, out, non-member (nonmember), population; any case, surrounding spaces ignored. Anything else
    raises InputError naming the column, the first unknown value and its row (1 = the first data row)."""
    raw = values if isinstance(values, pd.Series) else pd.Series(values)
    codes, uniques = pd.factorize(raw, use_na_sentinel=True)
    verdict = np.empty(len(uniques) + 1, dtype=np.int8)  # the last slot: missing cells (code -1)
    verdict[-1] = 0
    for i, u in enumerate(uniques):
        marker = _MARKERS.get(_normalize(u))
        verdict[i] = -1 if marker is None else int(marker)
    flags = verdict[codes]
    unknown = flags < 0
    if unknown.any():
        row = int(np.argmax(unknown))
        raise InputError(
            f"research-subset column {column!r}, row {row + 1}: {raw.iloc[row]!r} is not a marker value "
            f"(in the research subset: {'/'.join(w for w in MARKER_IN if '.' not in w)}; "
            f"not in it: {'/'.join(w or 'empty' for w in MARKER_OUT if '.' not in w)})")
    return flags.astype(bool)


@dataclass
class SensitiveDomain:
    column: str
    values: np.ndarray  # distinct values (str), in order (numeric order for numeric columns)
    codes: np.ndarray  # N: row -> index into values
    table_counts: np.ndarray  # distribution over all N records (counts)
    numeric: bool = False
    hierarchy: Hierarchy | None = None
    leaf_of_value: np.ndarray | None = None  # value -> leaf code in hierarchy
    _tuple_cache: dict = field(default_factory=dict, repr=False)

    @property
    def m(self) -> int:
        return len(self.values)

    @property
    def table_distribution(self) -> np.ndarray:
        total = self.table_counts.sum()
        return self.table_counts / total if total else self.table_counts.astype(float)

    # -- histograms ---------------------------------------------------------------------------------
    def from_rows(self, row_class: np.ndarray, n_classes: int | None = None) -> np.ndarray:
        """classes x values counts; rows with class -1 (suppressed) are left out."""
        row_class = np.asarray(row_class, dtype=np.int64)
        kept = row_class >= 0
        if n_classes is None:
            n_classes = int(row_class.max()) + 1 if kept.any() else 0
        flat = row_class[kept] * self.m + self.codes[kept]
        return np.bincount(flat, weights=self.row_weights(kept), minlength=n_classes * self.m).reshape(
            n_classes, self.m).astype(np.int64)

    def row_weights(self, kept: np.ndarray | None = None) -> np.ndarray | None:
        """How many records each row of ``codes`` stands for (None: one each); ``kept`` selects rows. A
        domain over a weighted frequency set (engine.backends.dask) says otherwise."""
        return None

    def tuple_triplets(self, tuple_of_row: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(tuple, value, count) of the sparse per-tuple histograms (cached per frequency set)."""
        key = id(tuple_of_row)
        hit = self._tuple_cache.get(key)
        if hit is not None and hit[0] is tuple_of_row:
            return hit[1]
        pair = np.asarray(tuple_of_row, dtype=np.int64) * self.m + self.codes
        weights = self.row_weights()
        if weights is None:
            uniq, counts = _count_pairs(pair, self.m)
        else:
            uniq, inverse = np.unique(pair, return_inverse=True)
            counts = np.bincount(inverse.reshape(-1), weights=weights, minlength=len(uniq))
        trip = (uniq // self.m, uniq % self.m, counts.astype(np.int64))
        self._tuple_cache.clear()
        self._tuple_cache[key] = (tuple_of_row, trip)
        return trip

    def tuple_rows(self, tuple_of_row: np.ndarray, n_tuples: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The per-tuple histograms as compressed rows: tuple t's (value, count) pairs are
        ``values[start[t]:start[t + 1]]`` and ``counts[...]`` (cached with the triplets)."""
        t, v, c = self.tuple_triplets(tuple_of_row)
        hit = self._tuple_cache.get("rows")
        if hit is not None and hit[0] is t and len(hit[1]) == n_tuples + 1:
            return hit[1], v, c
        start = np.zeros(n_tuples + 1, dtype=np.int64)
        np.cumsum(np.bincount(t, minlength=n_tuples), out=start[1:])  # triplets are sorted by tuple
        self._tuple_cache["rows"] = (t, start)
        return start, v, c

    def tuple_matrix(self, tuple_of_row: np.ndarray, n_tuples: int, limit: int = 4_000_000) -> np.ndarray | None:
        """The tuples x values counts as a dense matrix when it has at most ``limit`` cells (cached)."""
        if n_tuples * self.m > limit:
            return None
        t, v, c = self.tuple_triplets(tuple_of_row)
        hit = self._tuple_cache.get("matrix")
        if hit is not None and hit[0] is t and len(hit[1]) == n_tuples:
            return hit[1]
        dense = np.zeros((n_tuples, self.m), dtype=np.int64)
        dense[t, v] = c
        self._tuple_cache["matrix"] = (t, dense)
        return dense

    def from_tuple_sets(self, tuple_of_row: np.ndarray, n_tuples: int, sets: list[np.ndarray]) -> np.ndarray:
        """len(sets) x values counts, one row per set of frequency-set tuples (each tuple whole), summed
        from those tuples' histograms only (not a pass over the whole table)."""
        dense = self.tuple_matrix(tuple_of_row, n_tuples)
        if dense is not None:  # small domains: rows of the tuples x values matrix
            out = np.empty((len(sets), self.m), dtype=np.int64)
            for i, s in enumerate(sets):
                out[i] = dense[s].sum(axis=0)
            return out
        start, v, c = self.tuple_rows(tuple_of_row, n_tuples)
        idx = np.concatenate(sets) if len(sets) > 1 else np.asarray(sets[0])
        lo = start[idx]
        lens = start[idx + 1] - lo
        total = int(lens.sum())
        ends = np.cumsum(lens)
        pos = np.arange(total, dtype=np.int64) + np.repeat(lo - (ends - lens), lens)
        which = np.repeat(np.repeat(np.arange(len(sets), dtype=np.int64), [len(s) for s in sets]), lens)
        flat = which * self.m + v[pos]
        return np.bincount(flat, weights=c[pos], minlength=len(sets) * self.m).reshape(
            len(sets), self.m).astype(np.int64)

    def from_tuples(self, tuple_of_row: np.ndarray, tuple_class: np.ndarray, n_classes: int) -> np.ndarray:
        """classes x values counts from the class of every distinct QI tuple (-1: suppressed tuple)."""
        t, v, c = self.tuple_triplets(tuple_of_row)
        cls = np.asarray(tuple_class, dtype=np.int64)[t]
        kept = cls >= 0
        flat = cls[kept] * self.m + v[kept]
        return np.bincount(flat, weights=c[kept], minlength=n_classes * self.m).reshape(
            n_classes, self.m).astype(np.int64)


def _count_pairs(pair: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(pair, return_counts=True) of (tuple x m + value) pairs, as one count per (tuple, value) cell
    when the cells are at most 4 per pair (4M at least): no sort of N pairs (nor hashing, slower than the sort
    when the distinct pairs are many)."""
    cells = (int(pair.max()) // m + 1) * m if len(pair) and pair.min() >= 0 else -1
    if 0 <= cells <= max(4 * len(pair), 1 << 22):
        every = np.bincount(pair, minlength=cells)
        present = np.flatnonzero(every > 0)  # (nonzero of a bool array: several times faster than of counts)
        return present, every[present]
    distinct, counts = np.unique(pair, return_counts=True)
    return distinct, counts


def numeric_order(values: np.ndarray) -> np.ndarray | None:
    """The values' order when every present one is a number; the missing value (engine.model.missing: an empty
    cell) comes after every number (definitions.md, "Missing values")."""
    # (the array itself, not a Series of it: the same parse of each str value, without the Series' overhead)
    nums = np.asarray(pd.to_numeric(np.asarray(values, dtype=object), errors="coerce"), dtype=float)
    missing = np.array([str(v) == MISSING for v in values], dtype=bool)
    if missing.all() or np.isnan(nums[~missing]).any():
        return None
    return np.argsort(nums, kind="stable")  # NaN, the missing value, last


def sensitive_domain(frame: pd.DataFrame, column: str, hierarchy: Hierarchy | None = None,
                     numeric: bool | None = None, dictionary: ColumnDictionary | None = None) -> SensitiveDomain:
    """Encode ``column`` of ``frame``; values ordered numerically when they all parse as numbers.
    ``dictionary``: the column's codes into its str categories (Table.dictionaries), used when they still
    describe its cells (the same domain, without hashing a cell per row)."""
    if column not in frame.columns:
        raise InputError(f"unknown sensitive column {column!r}")
    cells = frame[column]
    category_code: np.ndarray | None = None  # per category of ``dictionary``: its value's code (below)
    if dictionary is not None and cells.dtype == object and dictionary.describes(cells.to_numpy(dtype=object)) \
            and all(type(v) is str for v in dictionary.categories):
        # every cell is the str object its code names (astype(str) keeps its value): the present categories
        # told apart by value; each row's code is its category's, taken once the codes are final
        category_rows = dictionary.counts
        present = np.flatnonzero(category_rows > 0)
        by_value, distinct = pd.factorize(pd.Series(dictionary.categories[present], dtype=object))
        category_code = np.zeros(len(dictionary.categories), dtype=np.int64)
        category_code[present] = by_value
        rows = dictionary.codes
    else:
        raw = cells.astype(str).to_numpy()
        # hashing, not np.unique's sort of N Python strings (20x slower on 1M rows), by object first (the
        # reader's cells share one object per value: cells.factorize_cells)
        rows, distinct = factorize_cells(raw)
    # then the few distinct values sorted, as pd.factorize(raw, sort=True) sorts them (whatever order they
    # were found in: they are distinct); ``final``: a distinct value's code in that order
    uniq = np.asarray(distinct, dtype=object)
    by_value = np.argsort(uniq, kind="stable")
    final = np.empty(len(uniq), dtype=np.int64)
    final[by_value] = np.arange(len(uniq), dtype=np.int64)
    uniq = uniq[by_value]
    order = numeric_order(uniq)
    is_numeric = order is not None if numeric is None else (numeric and order is not None)
    if order is not None:
        remap = np.empty(len(uniq), dtype=np.int64)
        remap[order] = np.arange(len(uniq))
        uniq, final = uniq[order], remap[final]
    if category_code is not None:  # one take per row, the records per value from the categories' counts
        final = final[category_code]
        codes = final[rows]
        counts = np.bincount(final[present], weights=category_rows[present], minlength=len(uniq)).astype(np.int64)
    else:
        codes = final[rows]
        counts = np.bincount(codes, minlength=len(uniq)).astype(np.int64)
    dom = SensitiveDomain(column, uniq.astype(object), np.asarray(codes, dtype=np.int64).reshape(-1), counts,
                          is_numeric)
    if hierarchy is not None:
        index = hierarchy.leaf_index
        missing = [v for v in uniq if v not in index]
        if missing:
            raise InputError(f"the hierarchy of sensitive column {column!r} lacks the value(s) "
                             f"{', '.join(map(repr, missing[:5]))}")
        dom.hierarchy = hierarchy
        dom.leaf_of_value = np.array([index[v] for v in uniq], dtype=np.int64)
    return dom


def membership_domain(frame: pd.DataFrame, column: str) -> SensitiveDomain:
    """The research-subset marker of δ-presence as a two-value domain: 0 = population only, 1 = in the
    research subset, read by the one parser of marker values (parse_marker: 1/0,
    true/false, yes/no, in/out, ...; anything else is refused with its row)."""
    if column not in frame.columns:
        raise InputError(f"unknown research-subset column {column!r}")
    flags = parse_marker(frame[column], column)
    codes = flags.astype(np.int64)
    return SensitiveDomain(column, np.array(["0", "1"], dtype=object), codes,
                           np.bincount(codes, minlength=2).astype(np.int64), True)


def mark_research_subset(population: pd.DataFrame, research: pd.DataFrame | np.ndarray,
                         column: str = "research subset") -> pd.DataFrame:
    """The population table with a ``column`` reading 1 for the research records, 0 for the others.

    ``research`` is a boolean mask over the population rows or a DataFrame of research records (rows
    matched on all columns they share with the population, each research row used once)."""
    out = population.copy()
    if isinstance(research, pd.DataFrame):
        cols = [c for c in research.columns if c in population.columns]
        pop_key = population[cols].astype(str).agg("\x1f".join, axis=1)
        want = research[cols].astype(str).agg("\x1f".join, axis=1).value_counts()
        rank = pop_key.groupby(pop_key).cumcount()
        mask = (rank < pop_key.map(want).fillna(0)).to_numpy()
    else:
        mask = np.asarray(research, dtype=bool)
        if len(mask) != len(population):
            raise InputError("the research-subset mask must have one entry per population row")
    out[column] = np.where(mask, "1", "0")
    return out


def domain_for(model, frame: pd.DataFrame, hierarchies: dict | None = None, numeric: bool | None = None):
    """The encoding a model's column needs: the model says which (``SensitiveModel.domain``)."""
    return model.domain(frame, hierarchies, numeric)
