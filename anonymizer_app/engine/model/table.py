"""A table to anonymize: the data as text, a role and a type per column, QIs encoded as integers."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np
import pandas as pd

from ..errors import InputError
from .cells import ColumnDictionary, column_dictionary
from .column_types import COLUMN_TYPES, NUMERIC_TYPES, infer_text_type, infer_type  # noqa: F401  (re-exported)
from .defaults import default_hierarchy
from .hierarchy import Hierarchy, with_missing
from .missing import MISSING, NA_MARKERS, markers_in_use, normalize_dictionary, normalize_frame


class Role(str, Enum):
    IDENTIFYING = "identifying"
    QUASI_IDENTIFYING = "quasi-identifying"
    SENSITIVE = "sensitive"
    INSENSITIVE = "insensitive"
    # several records of one person (definitions.md, "The unit counted: the person"): an identifier, so never
    # published as is, and every privacy model then counts persons, not records
    PERSON = "person id"
    # sdcMicro's roles for risk with sampling weights (definitions.md, "Risk with sampling weights"): neither QIs
    # nor identifiers, published as they are; the weight gives each record's estimated population frequency
    WEIGHT = "sampling weight"
    HOUSEHOLD = "household id"  # a household or cluster: household risk combines its members' risks

    @classmethod
    def parse(cls, value: str) -> "Role":
        aliases = {"qi": cls.QUASI_IDENTIFYING, "quasi": cls.QUASI_IDENTIFYING, "id": cls.IDENTIFYING,
                   "person": cls.PERSON, "person-id": cls.PERSON, "person_id": cls.PERSON,
                   "weight": cls.WEIGHT, "sampling_weight": cls.WEIGHT, "household": cls.HOUSEHOLD,
                   "household_id": cls.HOUSEHOLD, "cluster": cls.HOUSEHOLD}
        try:
            return aliases.get(value) or cls(value)
        except ValueError:
            allowed = ", ".join(r.value for r in cls)
            raise InputError(f"unknown role {value!r}; allowed: {allowed}") from None


def suggest_role(values: pd.Series) -> Role:
    """A column whose value differs on every row identifies people; the rest default to insensitive."""
    n = len(values)
    if n > 1 and values.nunique(dropna=False) == n:
        return Role.IDENTIFYING
    return Role.INSENSITIVE


@dataclass
class Table:
    """The input data (all cells as text) with the user's choices for each column."""

    frame: pd.DataFrame
    roles: dict[str, Role]
    types: dict[str, str] = field(default_factory=dict)
    name: str = "table"
    # cells read as missing in every column (engine.model.missing); each is written MISSING ("") in ``frame``
    na_values: tuple[str, ...] = NA_MARKERS
    # the columns holding a missing cell, found while normalizing (a scan of every row per QI less later)
    holding_missing: set[str] = field(default_factory=set, init=False, repr=False, compare=False)
    # the columns that arrived dictionary-encoded, as codes into their categories (cells.ColumnDictionary)
    dictionaries: dict[str, ColumnDictionary] = field(default_factory=dict, init=False, repr=False, compare=False)
    # what is read once from the input's cells and kept with it (the persons of the person-id column, ...)
    derived: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    # text object columns of QIs and sensitive columns dictionary-encoded on arrival (_object_columns); False reads
    # them row by row: the reference the tests hold the fast path against
    encode_objects: bool = field(default=True, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.holding_missing = set()
        self.dictionaries = self._text_columns()
        self.dictionaries.update(self._object_columns())
        self.frame = normalize_frame(self.frame, self.na_values, self.holding_missing, skip=set(self.dictionaries))
        columns = set(self.frame.columns)
        for col in list(self.roles) + list(self.types):
            if col not in columns:
                raise InputError(f"unknown column {col!r}; the table has: {', '.join(map(str, self.frame.columns))}")
        self.roles = {c: r if isinstance(r, Role) else Role.parse(r) for c, r in self.roles.items()}
        for col in self.frame.columns:
            self.roles.setdefault(col, Role.INSENSITIVE)
            if col not in self.types:
                d = self.dictionaries.get(col)
                # the distinct values decide the type: a dictionary has them (distinct str) without a look at every row
                self.types[col] = (infer_text_type(d.present(), self.na_values) if d is not None
                                   else infer_type(self.frame[col], self.na_values))
            elif self.types[col] not in COLUMN_TYPES:
                raise InputError(f"column {col!r}: unknown type {self.types[col]!r}; allowed: {', '.join(COLUMN_TYPES)}")
        # the codes are kept for the columns the engine encodes (QIs, sensitive columns) only
        self.dictionaries = {c: d for c, d in self.dictionaries.items()
                             if self.roles[c] in (Role.QUASI_IDENTIFYING, Role.SENSITIVE)}

    def _text_columns(self) -> dict[str, ColumnDictionary]:
        """The frame's Categorical columns of text (engine.io.reader.read_table(dictionary=True)) made text
        columns again, their missing cells written MISSING on the categories; their codes kept."""
        frame = self.frame
        if not frame.columns.is_unique or not any(isinstance(t, pd.CategoricalDtype) for t in frame.dtypes):
            return {}
        dictionaries: dict[str, ColumnDictionary] = {}
        for i, col in enumerate(frame.columns):
            values = frame.iloc[:, i]
            if not isinstance(values.dtype, pd.CategoricalDtype):
                continue
            categories = np.asarray(values.cat.categories, dtype=object)
            codes = values.array.codes
            if (codes < 0).any() or not all(type(v) is str for v in categories):
                continue  # not text throughout: made the object column it is, normalized row by row
            d, holds = normalize_dictionary(ColumnDictionary(codes, categories), self.na_values)
            if holds:
                self.holding_missing.add(col)
            dictionaries[col] = d
        if len(dictionaries) == frame.shape[1]:
            # one block of cells, as pandas' parser makes it (a frame of separate columns would be copied into one)
            block = np.empty((frame.shape[1], len(frame)), dtype=object)
            for i, d in enumerate(dictionaries.values()):
                d.cells(out=block[i])
            self.frame = pd.DataFrame(block.T, index=frame.index, columns=frame.columns, copy=False)
        else:
            cells = {i: dictionaries[col].cells() if col in dictionaries else frame.iloc[:, i].to_numpy(dtype=object)
                     if isinstance(frame.dtypes.iloc[i], pd.CategoricalDtype) else frame.iloc[:, i].to_numpy()
                     for i, col in enumerate(frame.columns)}
            self.frame = pd.DataFrame(cells, index=frame.index).set_axis(frame.columns, axis=1)
        return dictionaries

    def _object_columns(self) -> dict[str, ColumnDictionary]:
        """The QI and sensitive columns of text objects, dictionary-encoded as a Categorical column is (one hashing
        pass per column: cells.column_dictionary), their missing cells normalized on the categories: the type,
        the missing values and the leaf codes are then read from the few distinct values instead of every row (a
        like-for-like call against ARX encodes a fresh table of strings every time). A column whose cells are not
        the categories' objects is written again from them (the same values), in a shallow copy of the frame."""
        frame = self.frame
        if not self.encode_objects or not frame.columns.is_unique:
            return {}
        encoded = (Role.QUASI_IDENTIFYING, Role.SENSITIVE)
        wanted = [c for c, r in self.roles.items() if c in frame.columns and c not in self.dictionaries
                  and (r if isinstance(r, Role) else Role.parse(r)) in encoded and frame[c].dtype == object]
        dictionaries: dict[str, ColumnDictionary] = {}
        rewritten: dict[str, np.ndarray] = {}
        for col in wanted:
            found = column_dictionary(frame[col].to_numpy())
            if found is None:
                continue  # not text throughout: normalized row by row
            first, same = found
            d, holds = normalize_dictionary(first, self.na_values)
            if holds:
                self.holding_missing.add(col)
            if d is not first or not same:
                rewritten[col] = d.cells()
            dictionaries[col] = d
        if rewritten:
            frame = frame.copy(deep=False)  # the caller's frame keeps its cells
            for col, cells in rewritten.items():
                frame[col] = cells
            self.frame = frame
        return dictionaries

    def columns_with(self, role: Role) -> list[str]:
        return [c for c in self.frame.columns if self.roles[c] == role]

    @property
    def qi(self) -> list[str]:
        return self.columns_with(Role.QUASI_IDENTIFYING)

    @property
    def sensitive(self) -> list[str]:
        return self.columns_with(Role.SENSITIVE)

    @property
    def identifying(self) -> list[str]:
        """The columns that never leave as they are: the identifying ones and the person id."""
        return [c for c in self.frame.columns if self.roles[c] in (Role.IDENTIFYING, Role.PERSON)]

    @property
    def person(self) -> str | None:
        """The person-id column (one at most), None when each record is its own person."""
        found = self.columns_with(Role.PERSON)
        if len(found) > 1:
            raise InputError(f"only one column can be the person id; {', '.join(map(repr, found))} are")
        return found[0] if found else None

    @property
    def weight(self) -> str | None:
        """The sampling-weight column (one at most), None without one."""
        return self._one_of(Role.WEIGHT)

    @property
    def household(self) -> str | None:
        """The household/cluster column (one at most), None without one."""
        return self._one_of(Role.HOUSEHOLD)

    def _one_of(self, role: Role) -> str | None:
        found = self.columns_with(role)
        if len(found) > 1:
            raise InputError(f"only one column can be the {role.value}; {', '.join(map(repr, found))} are")
        return found[0] if found else None

    @property
    def n(self) -> int:
        return len(self.frame)

    def is_numeric(self, column: str) -> bool:
        return self.types[column] in NUMERIC_TYPES

    def hierarchies(self, given: dict[str, Hierarchy] | None = None) -> dict[str, Hierarchy]:
        """A hierarchy for every QI: the user's where given, the default one otherwise."""
        given = dict(given or {})
        for col in given:
            if col not in self.frame.columns:
                raise InputError(f"hierarchy given for unknown column {col!r}")
        out = {}
        for col in self.qi:
            with markers_in_use((MISSING,)):  # the frame holds its missing cells as MISSING already
                h = given.get(col) or default_hierarchy(col, self.frame[col], self.is_numeric(col), self.types[col])
            # a missing cell generalizes as the missing leaf: (null) up to the root (hierarchy.with_missing)
            out[col] = with_missing(h) if col in self.holding_missing else h
        return out

    def encode(self, hierarchies: dict[str, Hierarchy]) -> np.ndarray:
        """N x q int32 matrix of the QIs' leaf codes (column order = self.qi), C-contiguous."""
        return np.ascontiguousarray(self.encode_columns(hierarchies).T)

    def encode_columns(self, hierarchies: dict[str, Hierarchy]) -> np.ndarray:
        """q x N int32: the QIs' leaf codes one column per row (``encode`` is its transpose), each column
        written whole and contiguous."""
        if not self.qi:
            raise InputError("no quasi-identifier: mark at least one column as quasi-identifying")
        columns = np.empty((len(self.qi), self.n), dtype=np.int32)
        for j, col in enumerate(self.qi):
            values = self.frame[col]
            d = self.dictionaries.get(col)
            if d is not None and d.describes(values.to_numpy(dtype=object)):
                # the few categories looked up among the leaves, then one take per row
                leaf_of = hierarchies[col].leaf_codes_of(d.categories)
                # a value no leaf covers: the row path names it (checked on the categories rows hold)
                if not (leaf_of[d.counts > 0] < 0).any():
                    # the codes index the categories (describes() looked each one up), so 'wrap' takes the
                    # leaf_of[d.codes] of fancy indexing, without the buffered copy mode='raise' makes
                    np.take(leaf_of, d.codes, out=columns[j], mode="wrap")
                    continue
            columns[j] = hierarchies[col].encode(values, col)
        return columns


@dataclass
class FrequencySet:
    """Distinct QI tuples with their counts: what searches run on instead of the N rows."""

    codes: np.ndarray  # m x q leaf codes
    counts: np.ndarray  # m
    inverse: np.ndarray  # N: row -> index of its tuple


def group_rows(matrix: np.ndarray, radices: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group the rows of an int matrix: (index of each group's first row, row -> group, group sizes).

    Rows are packed into one int64 mixed-radix key when the radices allow it, which is much faster
    than a lexicographic unique over rows.
    """
    n, q = matrix.shape
    if q == 0:
        return np.zeros(min(n, 1), dtype=np.int64), np.zeros(n, dtype=np.int64), np.array([n] if n else [], dtype=np.int64)
    if radices is None:
        radices = matrix.max(axis=0).astype(np.int64) + 1 if n else np.ones(q, dtype=np.int64)
    radices = np.maximum(np.asarray(radices, dtype=np.int64), 1)
    if float(np.prod(radices.astype(float))) < 2**62:
        if np.can_cast(matrix.dtype, np.int64, casting="safe"):
            key = matrix[:, 0].astype(np.int64)  # the mixed-radix packing, in place after the first column
            for j in range(1, q):
                key *= radices[j]
                key += matrix[:, j]
        else:
            key = np.zeros(n, dtype=np.int64)
            for j in range(q):
                key = key * radices[j] + matrix[:, j]
        return group_keys(key)
    else:
        _, first, inverse, counts = np.unique(matrix, axis=0, return_index=True, return_inverse=True,
                                              return_counts=True)
    return first, inverse.reshape(-1), counts


def group_keys(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.unique(key, return_index=True, return_inverse=True, return_counts=True) without its sort of
    all N keys: the keys hashed (pd.factorize, distinct keys in first-seen order), then only the
    distinct keys sorted (2-3x faster when rows repeat, as QI tuples do); keys in a small range
    (_group_dense_keys) are counted instead of hashed."""
    if key.dtype == np.int64 and len(key):
        low, high = int(key.min()), int(key.max())
        if low >= 0 and high < max(DENSE_KEYS_PER_ROW * len(key), DENSE_KEYS_MIN):
            return _group_dense_keys(key, high + 1)
        if low >= 0 and RADIX_SORT_MIN <= len(key) <= RADIX_GROUP_MAX_ROWS and high < 2**32:
            return _group_sorted_keys(key)
    codes, uniques = pd.factorize(key)
    u = len(uniques)
    order = sorted_order(uniques)  # distinct keys: every sort gives this order
    rank = np.empty(u, dtype=np.int64)
    rank[order] = np.arange(u, dtype=np.int64)
    inverse = rank[codes]
    # codes in first-seen order: a key's first row is where the running maximum of the codes rises
    starts = np.empty(len(codes), dtype=bool)
    starts[:1] = True
    np.greater(codes[1:], np.maximum.accumulate(codes)[:-1], out=starts[1:])
    return np.flatnonzero(starts)[order], inverse, np.bincount(inverse, minlength=u)


# keys below max(DENSE_KEYS_PER_ROW x rows, DENSE_KEYS_MIN) are grouped by counting (one count per possible key)
DENSE_KEYS_PER_ROW = 2
DENSE_KEYS_MIN = 1 << 16


def _group_dense_keys(key: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """group_keys of non-negative keys below ``span`` (a few per row): one count per possible key, the
    present ones numbered in key order (np.unique's numbering), no hashing; each group's first row from
    the rows put in group order by a stable counting sort."""
    every = np.bincount(key, minlength=span)
    present = np.flatnonzero(every > 0)  # (nonzero of a bool array: several times faster than of counts)
    rank = np.zeros(span, dtype=np.int64)
    rank[present] = np.arange(len(present), dtype=np.int64)
    inverse = rank[key]
    counts = every[present]
    by_group = stable_order(inverse)  # rows of group 0, then of group 1 ...: each group's first row first
    return by_group[np.cumsum(counts) - counts], inverse, counts


# up to this many rows, keys below 2**32 are grouped by a radix sort of all of them (two counting-sort passes,
# cache-resident: 2x faster than hashing them on Adult's 30,162 rows); more rows are hashed (on 1M rows the
# passes' gathers cost as much as the hashing)
RADIX_GROUP_MAX_ROWS = 1 << 18


def _group_sorted_keys(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """group_keys by a stable radix sort of the keys: runs of equal keys are the groups in key order (np.unique's
    numbering), each group's first row the first of its run (the sort is stable)."""
    n = len(key)
    order = _radix_order(key)
    ordered = key[order]
    starts = np.empty(n, dtype=bool)
    starts[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    at = np.flatnonzero(starts)
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return order[at], inverse, np.diff(np.append(at, n))


def stable_order(values: np.ndarray) -> np.ndarray:
    """np.argsort(values, kind="stable") of non-negative int64 values: radix-sorted 16 bits at a time (a
    stable counting sort per digit, least significant first, is a stable sort) when they are many."""
    if values.dtype != np.int64 or len(values) < RADIX_SORT_MIN or int(values.min()) < 0:
        return np.argsort(values, kind="stable")
    return _radix_order(values)


def _radix_order(values: np.ndarray) -> np.ndarray:
    order = np.argsort((values & 0xFFFF).astype(np.uint16), kind="stable")
    for shift in range(16, int(values.max()).bit_length(), 16):  # least significant digit first
        digit = ((values[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
    return order


RADIX_SORT_MIN = 2048  # keys from which sorted_order and stable_order radix-sort (below, np.argsort is as fast)


def sorted_order(keys: np.ndarray) -> np.ndarray:
    """np.argsort(keys) of distinct keys (their one sorted order): non-negative int64 keys, many of them, are
    radix-sorted 16 bits at a time (numpy's stable sort of uint16 is a counting sort: linear, where a
    comparison sort of 20,000 keys costs 4x as much); other keys by np.argsort."""
    if keys.dtype != np.int64 or len(keys) < RADIX_SORT_MIN or int(keys.min()) < 0:
        return np.argsort(keys)
    return _radix_order(keys)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique of an int array, by a sort: numpy's hash-based unique (its default for integers) is 10-50x slower
    when most of a million keys are distinct."""
    values = np.sort(values)
    return values[np.r_[True, values[1:] != values[:-1]]] if len(values) else values


def frequency_set(codes: np.ndarray, radices: np.ndarray | None = None) -> FrequencySet:
    first, inverse, counts = group_rows(codes, radices)
    # np.take on the first axis: codes[first] without fancy indexing's per-row overhead (4x faster)
    return FrequencySet(np.take(codes, first, axis=0), counts, inverse)
