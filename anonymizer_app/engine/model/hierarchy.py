"""Generalization hierarchies: a tree per quasi-identifier, stored as one lookup array per level.

Level 0 holds the leaves (the original values), level H the root. ``maps[level][leaf_code]`` is the
code of the leaf's ancestor in ``labels[level]``, so generalizing a whole column to a level is one
fancy-indexing operation on its integer codes.
"""

from __future__ import annotations

import codecs
import csv
import io
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence, cast

import numpy as np
import pandas as pd

from ..errors import HierarchyError
from .cells import factorize_cells
from .missing import MISSING, NULL_LABEL, is_marker

ROOT = "*"
CONFLICT_POLICIES = ("error", "lift", "first")
# Size limits of a hierarchy file (the web app passes its settings HIERARCHY_MAX_LABEL_CHARS and
# HIERARCHY_MAX_LEVELS; the CLI uses these): a label longer than any cell, or thousands of levels, is
# no generalization anyone meant, and every page and lattice would pay for it.
MAX_LABEL_CHARS = 1000
MAX_LEVELS = 64
MAX_LISTED = 8
DICT_LOOKUP_MAX = 512  # leaf_codes_of looks up at most this many str values in a dict (more: pandas' indexer)


@dataclass(frozen=True)
class Conflict:
    """A label that the file generalizes in more than one way (the file is not a tree there).

    ``level`` 0: a leaf (value) with several paths, ``paths`` its paths and ``lines`` the line of each.
    ``level`` >= 1: a label above the leaves with several parents; ``paths`` holds, per parent, the
    first path above the label that goes through it (the parent first) and ``lines`` its first line."""

    value: str
    lines: tuple[int, ...]
    paths: tuple[tuple[str, ...], ...]
    level: int = 0

    def describe(self) -> str:
        shown = " vs ".join(";".join(p) for p in self.paths[:3])
        lines = ", ".join(str(n) for n in self.lines[:4])
        if self.level == 0:
            return f"{self.value!r} (lines {lines}: {shown})"
        parents = ", ".join(f"{p[0]!r} (line {n})" for p, n in zip(self.paths[:4], self.lines))
        return f"{self.value!r} at level {self.level} has parents {parents}"


@dataclass
class Hierarchy:
    """A generalization hierarchy of one column."""

    name: str
    leaves: np.ndarray  # object array of str, unique
    labels: list[np.ndarray]  # labels[level]: object array of the level's distinct labels
    maps: list[np.ndarray]  # maps[level][leaf_code] -> code in labels[level]
    source: str = ""
    notes: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    kind: str = "file"  # "file", "intervals" or "flat" (defaults built from the data)
    # level -> {label: level where that label is a node of its own}: labels put below their own
    # level by the 'lift' resolution, so that they count the leaves of the node they stand for.
    lifted: dict[int, dict[str, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Refuse anything but a tree: every label of a level has exactly one parent one level up
        (the lattice rolls classes up from finer nodes, local recoding takes lowest common ancestors:
        both need it), the labels of a level are distinct and every leaf has a code on every level."""
        where = self._where()
        if not self.maps or len(self.maps) != len(self.labels):
            raise HierarchyError(f"hierarchy {where}: {len(self.labels)} label levels for {len(self.maps)} maps")
        n = len(self.leaves)
        for level, (m, lab) in enumerate(zip(self.maps, self.labels)):
            m = np.asarray(m)
            if m.shape != (n,) or (n and (m.min() < 0 or m.max() >= len(lab))):
                raise HierarchyError(f"hierarchy {where}: level {level} does not give every leaf a label")
            if len(lab) > 1 and not _distinct(lab):
                raise HierarchyError(f"hierarchy {where}: a label occurs twice on level {level}")
        for level in range(len(self.maps) - 1):
            child, up = np.asarray(self.maps[level]), np.asarray(self.maps[level + 1])
            parent = np.full(len(self.labels[level]), -1, dtype=np.int64)
            parent[child] = up
            bad = np.flatnonzero(parent[child] != up)
            if len(bad):
                other = int(np.flatnonzero(child == child[bad[0]])[0])  # first leaf of that label
                i = int(np.flatnonzero((child == child[other]) & (up != up[other]))[0])
                raise HierarchyError(
                    f"hierarchy {where} is not a tree: the label {str(self.labels[level][child[i]])!r} at "
                    f"level {level} has two parents, {str(self.labels[level + 1][up[other]])!r} and "
                    f"{str(self.labels[level + 1][up[i]])!r} (leaves {str(self.leaves[other])!r} and "
                    f"{str(self.leaves[i])!r})"
                )

    # ---- shape ---------------------------------------------------------------------------
    @property
    def height(self) -> int:
        return len(self.maps) - 1

    @property
    def level_count(self) -> int:
        return len(self.maps)

    def labels_at(self, level: int) -> np.ndarray:
        return self.labels[level]

    def map_to(self, level: int) -> np.ndarray:
        return self.maps[level]

    def ancestor(self, value: str, level: int) -> str:
        idx = self.leaf_index.get(value)
        if idx is None:
            raise HierarchyError(f"{self._where()}: value {value!r} is not a leaf of the hierarchy")
        return str(self.labels[level][self.maps[level][idx]])

    @property
    def leaf_index(self) -> dict[str, int]:
        cached = getattr(self, "_leaf_index", None)
        if cached is None:
            cached = {str(v): i for i, v in enumerate(self.leaves)}
            self._leaf_index = cached
        return cached

    def leaf_numbers(self) -> np.ndarray:
        """Each leaf as a number, NaN where it is none (pd.to_numeric(leaves, errors="coerce") as floats):
        parsed once per hierarchy, on first use (the NCP of a numeric QI needs them, for every QI and node
        it is asked for; nothing else does), and kept read-only on the object as leaf_index is."""
        cached = getattr(self, "_leaf_numbers", None)
        if cached is None:
            cached = numbers_of(self.leaves)
            cached.flags.writeable = False
            self._leaf_numbers = cached
        return cached

    def leaf_counts(self, level: int) -> np.ndarray:
        """Number of hierarchy leaves under each label of a level."""
        counts = np.bincount(self.maps[level], minlength=len(self.labels[level]))
        for label, natural in self.lifted.get(level, {}).items():
            here = self.label_code(level, label)
            counts[here] = np.bincount(self.maps[natural])[self.label_code(natural, label)]
        return counts

    def label_code(self, level: int, label: str) -> int:
        return int(np.flatnonzero(self.labels[level] == label)[0])

    # ---- data ----------------------------------------------------------------------------
    def missing_values(self, values: Iterable[str]) -> list[str]:
        """Data values that are not leaves of this hierarchy, in first-seen order. Missing cells (blank or
        an NA marker: engine.model.missing) are never listed: a run gives them their own leaf (with_missing)."""
        index = self.leaf_index
        return [str(v) for v in pd.unique(pd.Series(list(values), dtype=object))
                if str(v) not in index and not is_marker(str(v))]

    def encode(self, values: pd.Series, column: str | None = None) -> np.ndarray:
        """Leaf codes (int32) of a column; every value must be a leaf."""
        # each distinct value looked up among the leaves once (the column hashed by object, then value)
        by_value, distinct = factorize_cells(np.asarray(values, dtype=object))
        leaf_of = self.leaf_codes_of(distinct)
        codes = np.full(len(by_value), -1, dtype=np.int32)
        found = by_value >= 0
        codes[found] = leaf_of[by_value[found]]
        if (codes < 0).any():
            missing = pd.unique(values[codes < 0])
            listed = ", ".join(repr(str(v)) for v in missing[:MAX_LISTED])
            more = f" and {len(missing) - MAX_LISTED} more" if len(missing) > MAX_LISTED else ""
            col = column or self.name
            raise HierarchyError(
                f"column {col!r}: {len(missing)} value(s) not covered by the hierarchy "
                f"{self._where()}: {listed}{more}"
            )
        return codes

    def leaf_codes_of(self, distinct) -> np.ndarray:
        """The leaf code (int32) of each of a few distinct values; -1 where no leaf is the value."""
        values = np.asarray(distinct, dtype=object)
        if not pd.get_option("future.infer_string") and all(type(v) is str for v in values):
            # what pd.Categorical(values, dtype=dtype).codes looks up (its categories' indexer), without the
            # checks of its construction (str values pass its datetime inference unchanged); a few str values
            # among str leaves in a dict of the leaves (equal str, equal hash: the indexer's own test)
            by_str = self._leaf_dict() if len(values) <= DICT_LOOKUP_MAX else None
            if by_str is not None:
                return np.fromiter((by_str.get(v, -1) for v in values), dtype=np.int32, count=len(values))
            # (the categories' dtype, which checks the leaves distinct, is built only on the paths that use it)
            return self._leaf_dtype().categories.get_indexer_for(cast(Any, values)).astype(np.int32)
        return pd.Categorical(values, dtype=self._leaf_dtype()).codes.astype(np.int32)

    def _leaf_dtype(self) -> pd.CategoricalDtype:
        """The leaves as categories (built once per leaves array, not per encoded column; checks uniqueness)."""
        cached = getattr(self, "_leaf_categories", None)
        if cached is None or cached[0] is not self.leaves:
            cached = (self.leaves, pd.CategoricalDtype(categories=cast(Any, self.leaves)))  # as given (no list)
            self._leaf_categories = cached
        return cached[1]

    def _leaf_dict(self) -> dict[str, int] | None:
        """{leaf: code} when every leaf is a str, else None; built on first use (a 100,000-leaf hierarchy's
        lookups of 100,000 values go through the indexer, which needs no dict)."""
        cached = getattr(self, "_leaf_by_str", None)
        if cached is None or cached[0] is not self.leaves:
            by_str = ({v: i for i, v in enumerate(self.leaves)} if all(type(v) is str for v in self.leaves)
                      else None)
            cached = (self.leaves, by_str)
            self._leaf_by_str = cached
        return cached[1]

    def level_summary(self, sample: int = 6) -> list[dict]:
        """Per level: number of labels and a few of them, for display."""
        return [
            {"level": lv, "count": len(lab), "sample": [str(x) for x in lab[:sample]]}
            for lv, lab in enumerate(self.labels)
        ]

    # ---- rows in the one-row-per-leaf layout ---------------------------------------------
    def to_rows(self) -> list[list[str]]:
        cols = [self.labels[lv][self.maps[lv]] for lv in range(self.level_count)]
        return [[str(c[i]) for c in cols] for i in range(len(self.leaves))]

    def to_csv(self, delimiter: str = ";") -> str:
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
        writer.writerows(self.to_rows())
        return buf.getvalue()

    def _where(self) -> str:
        return self.source or f"of column {self.name!r}"

    # ---- construction ---------------------------------------------------------------------
    @classmethod
    def from_rows(
        cls,
        rows: Sequence[Sequence[str]],
        name: str,
        source: str = "",
        on_conflict: str = "error",
        line_numbers: Sequence[int] | None = None,
        kind: str = "file",
    ) -> "Hierarchy":
        """Build from one row per leaf: ``leaf, level1, ..., levelH``.

        The rows must describe a tree: every label of a level has one parent on the next level.
        Identical duplicate rows are accepted. A label with two different parents is a conflict: a
        leaf (value) with two paths, or a label above the leaves (e.g. level-1 label A under X on one
        line and under Y on another). Conflicts are refused by default, naming the values and labels,
        their level and the lines, or resolved explicitly, level by level from the leaves up:

        - ``lift``: the label keeps its own name, and on the levels above it, up to the lowest level
          where all its paths agree, it takes that agreed label (an ambiguous value: its ancestors;
          a label above the leaves: the ancestors of its whole subtree). The agreed label then also
          stands on lower levels for the node it names (``lifted``, for the leaf counts of NCP).
        - ``first``: the label keeps the path above it of its first line.

        Labels above the leaves are resolved first (on every distinct line of the file), then the
        values, then the labels above the leaves again (a lifted value can put a label below its
        own level). A note says what was resolved, and ``conflicts`` lists it.
        """
        if on_conflict not in CONFLICT_POLICIES:
            raise HierarchyError(
                f"unknown conflict resolution {on_conflict!r}; choose one of {', '.join(CONFLICT_POLICIES)}"
            )
        where = source or f"hierarchy of {name!r}"
        if line_numbers is None:
            line_numbers = range(1, len(rows) + 1)
        width = None
        distinct: list[list[str]] = []  # every distinct row, in file order
        distinct_lines: list[int] = []
        seen: set[tuple[str, ...]] = set()
        for row, lineno in zip(rows, line_numbers):
            if width is None:
                width = len(row)
            elif len(row) != width:
                raise HierarchyError(
                    f"{where}, line {lineno}: {len(row)} values where the first line has {width} "
                    f"(every line must give a leaf and all its generalizations)"
                )
            key = tuple(row)
            if key not in seen:
                seen.add(key)
                distinct.append(list(row))
                distinct_lines.append(lineno)
        if width is None:
            raise HierarchyError(f"{where}: the hierarchy is empty")

        conflicts = _leaf_conflicts(distinct, distinct_lines)
        if on_conflict == "error":
            inner = _inner_conflicts(distinct, distinct_lines)
            if conflicts or inner:
                raise conflict_error(where, conflicts, inner)

        lifted: dict[int, dict[str, int]] = {}
        # labels above the leaves first (this never changes a leaf's parent, so the ambiguous
        # values stay those found above), then the values, then the labels again
        inner = _resolve_inner(distinct, distinct_lines, on_conflict, lifted)
        paths: dict[str, list[tuple[str, ...]]] = {}
        first_line: dict[str, int] = {}
        for row, lineno in zip(distinct, distinct_lines):
            known = paths.setdefault(row[0], [])
            first_line.setdefault(row[0], lineno)
            if tuple(row[1:]) not in known:
                known.append(tuple(row[1:]))
        leaves = list(paths)
        table: list[list[str]] = []
        for leaf in leaves:
            options = paths[leaf]
            if len(options) == 1 or on_conflict == "first":
                table.append([leaf, *options[0]])
            else:
                path, agree = _lift(options)
                table.append([leaf, *path])
                for level in range(1, agree + 1):
                    lifted.setdefault(level, {})[path[level - 1]] = agree + 1
        notes: list[str] = []
        if conflicts:
            how = "lifted to the lowest level where their paths agree" if on_conflict == "lift" else (
                "given their first path"
            )
            notes.append(f"{len(conflicts)} ambiguous value(s) {how}")
        again = _resolve_inner(table, [first_line[leaf] for leaf in leaves], on_conflict, lifted)
        known_inner = {(c.level, c.value) for c in inner}
        inner += [c for c in again if (c.level, c.value) not in known_inner]
        if inner:
            how = ("kept, with their ancestors lifted to the lowest level where their paths agree"
                   if on_conflict == "lift" else "given their first parent (the path of their first line)")
            listed = ", ".join(f"{c.value!r} (level {c.level})" for c in inner[:MAX_LISTED])
            more = f" and {len(inner) - MAX_LISTED} more" if len(inner) > MAX_LISTED else ""
            notes.append(f"{len(inner)} label(s) above the leaves with several parents {how}: {listed}{more}")

        columns = list(zip(*table))
        if len(set(columns[-1])) > 1 or width == 1:
            columns.append(tuple(ROOT for _ in leaves))
            notes.append(f"root level '{ROOT}' added above the file's top level")
        labels: list[np.ndarray] = []
        maps: list[np.ndarray] = []
        for col in columns:
            codes, uniques = pd.factorize(pd.Series(col, dtype=object), sort=False)
            labels.append(np.asarray(uniques, dtype=object))
            maps.append(codes.astype(np.int32))
        lifted = _settle_lifted(lifted, labels)
        return cls(name, np.asarray(leaves, dtype=object), labels, maps, source, notes, conflicts + inner, kind,
                   lifted)


def numbers_of(values: np.ndarray) -> np.ndarray:
    """pd.to_numeric(pd.Series(values), errors="coerce") as floats. Plain ASCII digit strings of up to 15
    digits (codes, ages, ZIP codes: most numeric leaves) are read as whole numbers in a few array passes,
    exact as floats below 10**15, the very numbers pandas gives; anything else goes to pandas (str values
    parsed as an array, without building a Series)."""
    values = np.asarray(values, dtype=object)
    if not all(type(v) is str for v in values):
        return pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
    digits = _digit_numbers(values)
    if digits is not None:
        return digits
    return np.asarray(pd.to_numeric(values, errors="coerce"), dtype=float)


def _digit_numbers(values: np.ndarray) -> np.ndarray | None:
    """The whole numbers written by str values made of 1 to 15 ASCII digits each, or None when any is not."""
    if not len(values):
        return None
    try:
        raw = values.astype("S")  # ASCII bytes, zero-padded to the longest (others raise)
    except UnicodeEncodeError:
        return None
    width = raw.dtype.itemsize
    if not 0 < width <= 15:
        return None
    grid = raw.view(np.uint8).reshape(len(values), width)
    length = np.count_nonzero(grid, axis=1)
    # no empty value, no zero byte inside or at the end of one (padding only), digits only
    if length.min() < 1 or int(length.sum()) != sum(map(len, values)):
        return None
    inside = np.arange(width) < length[:, None]
    if not np.array_equal(grid != 0, inside):
        return None
    grid = grid - np.uint8(48)  # '0'..'9' -> 0..9; anything else wraps to > 9
    if (grid[inside] > 9).any():
        return None
    number = np.zeros(len(values), dtype=np.int64)
    for p in range(width):  # Horner's rule column by column, each value over its own digits
        number = np.where(inside[:, p], number * 10 + grid[:, p], number)
    return number.astype(np.float64)


def _leaf_conflicts(rows: Sequence[Sequence[str]], numbers: Sequence[int]) -> list[Conflict]:
    """Values (leaves) with more than one parent, each with all its distinct paths and their lines."""
    paths: dict[str, list[tuple[str, ...]]] = {}
    lines: dict[str, list[int]] = {}
    for row, n in zip(rows, numbers):
        known = paths.setdefault(row[0], [])
        if tuple(row[1:]) not in known:
            known.append(tuple(row[1:]))
            lines.setdefault(row[0], []).append(n)
    return [Conflict(v, tuple(lines[v]), tuple(p)) for v, p in paths.items()
            if len({q[0] for q in p if q}) > 1]


def conflict_error(where: str, leaves: list[Conflict], inner: list[Conflict]) -> HierarchyError:
    """The refusal of a file that is not a tree: ambiguous values, then labels with several parents."""
    parts, listed = [], []
    for found, what in ((leaves, "value(s) have contradictory generalizations"),
                        (inner, "label(s) above the leaves have more than one parent")):
        if found:
            parts.append(f"{len(found)} {what}")
            more = f" and {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else ""
            listed.append("; ".join(c.describe() for c in found[:MAX_LISTED]) + more)
    subject = "value or label" if leaves and inner else ("label" if inner else "value")
    err = HierarchyError(
        f"{where}: {' and '.join(parts)}, so the file is not a tree: {'; '.join(listed)}. Choose a "
        f"resolution: 'lift' (generalize each such {subject} to the lowest level where all its paths "
        f"agree) or 'first' (keep the first path)."
    )
    err.conflicts = leaves + inner  # type: ignore[attr-defined]
    return err


def _inner_conflicts(table: Sequence[Sequence[str]], numbers: Sequence[int], only: int | None = None) -> list[Conflict]:
    """Labels above the leaves (level >= 1) with more than one parent, level by level (or on level
    ``only``), each in the order its rows come.

    ``table``: one row per leaf path (leaf, level 1, ..., top), ``numbers`` the file line of each."""
    width = len(table[0]) if table else 0
    out: list[Conflict] = []
    for level in range(1, width - 1) if only is None else [only]:
        seen: dict[str, dict[str, tuple[int, tuple[str, ...]]]] = {}
        for row, n in zip(table, numbers):
            ups = seen.setdefault(row[level], {})
            if row[level + 1] not in ups:
                ups[row[level + 1]] = (n, tuple(row[level + 1:]))
        for label, ups in seen.items():
            if len(ups) > 1:
                out.append(Conflict(label, tuple(n for n, _ in ups.values()), tuple(p for _, p in ups.values()),
                                    level))
    return out


def _resolve_inner(table: list[list[str]], numbers: Sequence[int], policy: str,
                   lifted: dict[int, dict[str, int]]) -> list[Conflict]:
    """Make the rows a tree above the leaves, in place; returns the labels that had several parents.

    Level by level from the leaves up, each label with several parents at that level:
    ``first`` gives all its rows the path above it of its first row (rows are in file order);
    ``lift`` keeps the label and writes, on the levels above it below the lowest level where all its
    paths agree, that agreed label (as for an ambiguous leaf; recorded in ``lifted``). Either way the
    level has no such label afterwards and the levels below are untouched, so one pass per level."""
    found: list[Conflict] = []
    width = len(table[0]) if table else 0
    for level in range(1, width - 1):
        here = _inner_conflicts(table, numbers, only=level)
        if not here:
            continue
        if policy not in ("lift", "first"):  # never reached for files (refused before); rows from code
            raise HierarchyError(f"label {here[0].value!r} at level {level} has several parents")
        found.extend(here)
        wanted = {c.value for c in here}
        rows_of: dict[str, list[int]] = {}
        for r, row in enumerate(table):
            if row[level] in wanted:
                rows_of.setdefault(row[level], []).append(r)
        for c in here:
            rows = rows_of[c.value]
            if policy == "first":
                upper = table[rows[0]][level + 1:]
                for r in rows:
                    table[r][level + 1:] = upper
                continue
            options = list(dict.fromkeys(tuple(table[r][level + 1:]) for r in rows))
            lifted_path, agree = _lift(options)
            for r in rows:
                table[r][level + 1:] = lifted_path
            for lv in range(level + 1, level + 1 + agree):
                lifted.setdefault(lv, {})[lifted_path[0]] = level + 1 + agree
    return found


def _settle_lifted(lifted: dict[int, dict[str, int]], labels: list[np.ndarray]) -> dict[int, dict[str, int]]:
    """Lifted labels with the level where each is a node of its own (following lifts of lifts); entries
    whose label is no longer on its level (overwritten by a later lift) are dropped."""
    top = len(labels) - 1
    present = [set(map(str, lab)) for lab in labels]
    out: dict[int, dict[str, int]] = {}
    for level, found in lifted.items():
        for label, natural in found.items():
            if level > top or label not in present[level]:
                continue
            seen = {level}
            while natural <= top and label in lifted.get(natural, {}) and natural not in seen:
                seen.add(natural)
                natural = lifted[natural][label]
            natural = min(natural, top)
            while natural > level and label not in present[natural]:
                natural -= 1
            if natural > level:
                out.setdefault(level, {})[label] = natural
    return out


def _lift(options: list[tuple[str, ...]]) -> tuple[tuple[str, ...], int]:
    """Path of an ambiguous leaf: below the first path index where every path agrees, that label.

    Returns the path and that index (len(path) when only the added root agrees)."""
    depth = len(options[0])
    agree = depth
    for i in range(depth):
        if all(p[i:] == options[0][i:] for p in options):
            agree = i
            break
    label = options[0][agree] if agree < depth else ROOT
    return tuple(label if i < agree else options[0][i] for i in range(depth)), agree


# ---- file reading --------------------------------------------------------------------------
def head_lines(text: str, count: int) -> list[str]:
    """text.splitlines()[:count] without splitting the whole text: the lines of a growing head of it, once
    the head holds more than ``count`` lines (its last line may be cut; the ones before it are whole)."""
    size = 4096
    while size < len(text):
        lines = text[:size].splitlines()
        if len(lines) > count:
            return lines[:count]
        size *= 8
    return text.splitlines()[:count]


def _distinct(labels: np.ndarray) -> bool:
    """len(pd.unique(labels)) == len(labels): by a set where the labels are str (a set merges what pd.unique
    merges, equal objects; it keeps apart NaN objects pd.unique merges, so other labels take pandas' path)."""
    items = labels.tolist()
    if len(set(items)) != len(items):
        return False
    return all(type(x) is str for x in items) or len(pd.unique(pd.Series(labels, dtype=object))) == len(labels)


def sniff_hierarchy_delimiter(text: str) -> str:
    """';' (ARX), ',' (Datafly exercise files) or tab: the one that splits the first lines evenly,
    else the most frequent one (so that a ragged line is reported, not read as one column)."""
    first = [ln for ln in head_lines(text, 50) if ln.strip()]
    best, best_key = ";", (False, 0)
    for d in (";", ",", "\t"):
        counts = [ln.count(d) for ln in first]
        if not counts or sum(counts) == 0:
            continue
        key = (len(set(counts)) == 1, sum(counts))
        if key > best_key:
            best, best_key = d, key
    return best


def parse_hierarchy(
    text: str,
    name: str,
    source: str = "",
    delimiter: str | None = None,
    on_conflict: str = "error",
) -> Hierarchy:
    """Parse the one-row-per-leaf layout (no header)."""
    where = source or f"hierarchy of {name!r}"
    if "\x00" in text:
        raise HierarchyError(f"{where}: binary content, not a text hierarchy file")
    text = text.lstrip("\ufeff")
    if "\r" in text and "\n" not in text:
        text = text.replace("\r", "\n")  # old Mac line ends: lines as people see them
    delimiter = delimiter or sniff_hierarchy_delimiter(text)
    if on_conflict in CONFLICT_POLICIES:
        clean = _parse_tree_text(text, name, where, delimiter)
        if clean is not None:
            return clean
    rows: list[list[str]] = []
    numbers: list[int] = []
    try:
        for row in csv.reader(io.StringIO(text), delimiter=delimiter, strict=True):
            numbers.append(len(numbers) + 1)
            rows.append(row)
    except csv.Error as exc:
        why = str(exc)
        if "new-line character" in why:
            why = "a carriage return inside an unquoted value (mixed line ends?)"
        elif "unexpected end of data" in why:
            why = "a quoted value is not closed before the end of the file"
        raise HierarchyError(f"{where}, line {len(numbers) + 1}: {why}") from exc
    kept = [(r, n) for r, n in zip(rows, numbers) if r and any(c.strip() for c in r)]
    for row, n in kept:
        if any(c == "" for c in row):
            raise HierarchyError(f"{where}, line {n}: an empty value")
    return Hierarchy.from_rows(
        [r for r, _ in kept], name, where, on_conflict, [n for _, n in kept]
    )


def _parse_tree_text(text: str, name: str, where: str, delimiter: str) -> Hierarchy | None:
    """parse_hierarchy's result for a file that is plainly a tree, from array operations on its UTF-8 bytes;
    None for any other file, which then takes the row-by-row path (so every error and every conflict
    resolution, with its message naming the file, line and value, comes from that one code).

    Plainly a tree: an ASCII delimiter, no quote character and no carriage return but in CR-LF line ends (so
    csv.reader would make one record per line, split at every delimiter), no line over csv's field size
    limit, every non-blank line of the same width with no empty value, identical lines for one leaf, one
    parent per label on every level above the leaves. from_rows then keeps the first line of each leaf in
    file order, resolves nothing and numbers each level's labels in order of first appearance, which is
    what this does per level column (a 100,000-leaf file: tens of ms, not the ~2.5 s of the row-by-row path)."""
    if len(delimiter) != 1 or delimiter in '"\r\n' or ord(delimiter) > 127 or '"' in text:
        return None
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (text not decoded from a file)
        return None
    if len(encoded) <= SMALL_TREE_BYTES:
        return _small_tree(text, name, where, delimiter)
    return _vector_tree(text, encoded, name, where, delimiter)


# up to this many bytes a file is parsed by _small_tree: a few dozen lines take less time in plain Python than the
# array operations' fixed costs (Adult's hierarchies: 0.1 ms instead of 0.4 ms each)
SMALL_TREE_BYTES = 16_384


def _small_tree(text: str, name: str, where: str, delimiter: str) -> Hierarchy | None:
    """_vector_tree's result (the same Hierarchy, or None in the same cases) of a small file, line by line."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # no record after a final line end (csv.reader over io.StringIO)
    if "\r" in text:  # CR only before an LF; the line then ends before it
        if text.count("\r") != text.count("\r\n"):
            return None
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    if not lines or max(len(ln.encode("utf-8")) for ln in lines) > csv.field_size_limit():
        return None
    rows = [ln.split(delimiter) for ln in lines if ln.replace(delimiter, "").strip()]
    if not rows:
        return None
    width = len(rows[0])
    if any(len(r) != width or "" in r for r in rows):
        return None  # ragged lines or an empty value
    columns = []
    for j in range(width):
        numbered: dict[str, int] = {}
        codes = [numbered.setdefault(r[j], len(numbered)) for r in rows]
        uniques = np.empty(len(numbered), dtype=object)
        uniques[:] = list(numbered)
        columns.append((codes, uniques))
    leaf_codes, leaves = columns[0]
    first: dict[int, int] = {}
    for line, leaf in enumerate(leaf_codes):
        first.setdefault(leaf, line)
    if len(first) < len(rows):  # a leaf on several lines: the same line each time, or a conflict
        for line, leaf in enumerate(leaf_codes):
            if rows[line] != rows[first[leaf]]:
                return None
    for (child, _), (up, _) in zip(columns[1:-1], columns[2:]):
        parent: dict[int, int] = {}
        for c, u in zip(child, up):
            if parent.setdefault(c, u) != u:
                return None  # a label with two parents
    at = list(first.values())  # each leaf's first line, leaves in code order
    maps = [np.array([codes[i] for i in at], dtype=np.int32) for codes, _ in columns]
    return _tree_of(name, where, leaves, [uniques for _, uniques in columns], maps)


def _vector_tree(text: str, encoded: bytes, name: str, where: str, delimiter: str) -> Hierarchy | None:
    """_parse_tree_text by array operations on the file's UTF-8 bytes (``encoded``)."""
    raw = np.frombuffer(encoded, dtype=np.uint8)
    lines = _text_lines(raw)
    if lines is None:
        return None
    starts, ends = lines
    if not len(starts) or int((ends - starts).max()) > csv.field_size_limit():
        return None
    starts, ends = _non_blank(raw, starts, ends, delimiter)
    if not len(starts):
        return None
    fields = _field_bounds(raw, starts, ends, ord(delimiter))
    if fields is None:
        return None
    field_starts, field_ends = fields
    if (field_ends == field_starts).any():
        return None  # an empty value
    if len(raw) == len(text):
        char_of = None  # ASCII: byte offsets are character offsets
    else:  # the character a byte starts: UTF-8 lead bytes before it
        char_of = np.concatenate(([0], np.cumsum((raw & 0xC0) != 0x80)))
    columns = [_factorize_fields(raw, text, field_starts[:, j], field_ends[:, j], char_of)
               for j in range(field_starts.shape[1])]
    leaf_codes, leaves = columns[0]
    first = _first_seen(leaf_codes)  # each leaf's first line
    if len(first) < len(leaf_codes):  # a leaf on several lines: the same line each time, or a conflict
        of_leaf = first[leaf_codes]
        if any((codes != codes[of_leaf]).any() for codes, _ in columns[1:]):
            return None
    for (child, child_labels), (up, _) in zip(columns[1:-1], columns[2:]):
        parent = np.full(len(child_labels), -1, dtype=np.int64)
        parent[child] = up
        if (parent[child] != up).any():
            return None  # a label with two parents
    maps = [codes[first].astype(np.int32) for codes, _ in columns]
    return _tree_of(name, where, leaves, [uniques for _, uniques in columns], maps)


def _tree_of(name: str, where: str, leaves: np.ndarray, labels: list[np.ndarray], maps: list[np.ndarray]
             ) -> Hierarchy:
    """The Hierarchy of a plainly-tree file's level columns (both parsers'), a root level added above a top level
    of more than one label (or above the leaves alone)."""
    notes: list[str] = []
    if len(labels[-1]) > 1 or len(labels) == 1:
        labels.append(np.array([ROOT], dtype=object))
        maps.append(np.zeros(len(leaves), dtype=np.int32))
        notes.append(f"root level '{ROOT}' added above the file's top level")
    return Hierarchy(name, leaves.copy(), labels, maps, where, notes)


def _text_lines(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Start and end byte of each line (without its LF or CR-LF), as csv.reader over io.StringIO(text) reads
    them: no record after a final line end. None when a CR stands anywhere but before an LF."""
    breaks = np.flatnonzero(raw == 10)
    starts = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks, [len(raw)]))
    if not len(raw) or raw[-1] == 10:
        starts, ends = starts[:-1], ends[:-1]
    returns = np.flatnonzero(raw == 13)
    if len(returns):
        if returns[-1] + 1 >= len(raw) or (raw[returns + 1] != 10).any():
            return None
        crlf = np.zeros(len(ends), dtype=bool)
        crlf[ends > starts] = raw[ends[ends > starts] - 1] == 13
        ends = ends - crlf
    return starts, ends


# the bytes a line can start with and still be blank: ASCII whitespace (str.isspace()) and the first bytes of
# the UTF-8 of the other whitespace characters (U+0085 and U+00A0: C2; U+1680: E1; U+2000-U+205F: E2; U+3000: E3)
_MAY_BE_SPACE = np.zeros(256, dtype=bool)
_MAY_BE_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 0xC2, 0xE1, 0xE2, 0xE3]] = True


def _non_blank(raw: np.ndarray, starts: np.ndarray, ends: np.ndarray, delimiter: str
               ) -> tuple[np.ndarray, np.ndarray]:
    """The lines parse_hierarchy keeps: those with a value that is not blank (str.strip()). A line that
    starts with a character that is neither whitespace nor the delimiter has one (most lines); the others
    (blank, or led by a space or by a character whose first byte a Unicode space shares) are decided by
    str.strip() itself, one by one."""
    lead = raw[np.minimum(starts, len(raw) - 1)]
    keep = (ends > starts) & ~_MAY_BE_SPACE[lead] & (lead != ord(delimiter))
    if keep.all():
        return starts, ends
    for i in np.flatnonzero(~keep):
        line = bytes(raw[starts[i]:ends[i]]).decode("utf-8")
        keep[i] = bool(line.replace(delimiter, "").strip())
    return starts[keep], ends[keep]


def _field_bounds(raw: np.ndarray, starts: np.ndarray, ends: np.ndarray, delimiter: int
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """Start and end byte of every value, one row per line and one column per level; None when the lines
    are not all of the same width."""
    marks = np.flatnonzero(raw == delimiter)
    per_line = np.searchsorted(marks, ends) - np.searchsorted(marks, starts)
    if (per_line != per_line[0]).any():
        return None
    if len(marks) != len(starts) * int(per_line[0]):  # some on skipped blank lines
        line_of = np.searchsorted(starts, marks, side="right") - 1
        marks = marks[(line_of >= 0) & (marks < ends[np.maximum(line_of, 0)])]
    marks = marks.reshape(len(starts), int(per_line[0]))
    return (np.concatenate((starts[:, None], marks + 1), axis=1),
            np.concatenate((marks, ends[:, None]), axis=1))


def _factorize_fields(raw: np.ndarray, text: str, starts: np.ndarray, ends: np.ndarray,
                      char_of: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """pd.factorize of the values of one column (codes in order of first appearance, the distinct values as
    an object array of str), from their bytes: each value's bytes zero-padded to a multiple of 8 and folded
    8 at a time into one 64-bit key (exact for values of up to 8 bytes); equal keys are checked byte by byte,
    and a collision is settled by np.unique on the padded bytes. Only the distinct values become str."""
    lengths = ends - starts
    words = _padded_words(raw, starts, lengths)
    codes = pd.factorize(_fold_words(words), sort=False)[0]
    first = _first_seen(codes)
    if words.shape[1] > 1 and (words != words[first[codes]]).any():  # two values with one key
        padded = np.ascontiguousarray(words).view(f"V{8 * words.shape[1]}").ravel()
        _, first, codes = np.unique(padded, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # numbered by first appearance
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        codes, first = rank[codes.ravel()], first[order]
    lo, hi = (starts[first], ends[first]) if char_of is None else (char_of[starts[first]], char_of[ends[first]])
    uniques = np.empty(len(first), dtype=object)
    uniques[:] = [text[a:b] for a, b in zip(lo.tolist(), hi.tolist())]
    return codes.astype(np.int64, copy=False), uniques


def _fold_words(words: np.ndarray) -> np.ndarray:
    """One 64-bit key per row of words: the word itself for one word, else a polynomial of them (wrapping)."""
    key = words[:, 0].copy()
    for j in range(1, words.shape[1]):
        key = key * np.uint64(0x100000001B3) + words[:, j]
    return key


# _BYTE_MASKS[n]: the first n bytes of a little-endian 64-bit word
_BYTE_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)


def _padded_words(raw: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each value's bytes as little-endian 64-bit words, zero beyond its length (one row per value): the 8
    bytes at each start read as one word (a view of the text at every byte offset), masked to the value."""
    count = -(-int(lengths.max()) // 8)
    padded = np.concatenate((raw, np.zeros(8 * count, dtype=np.uint8)))
    at = np.ndarray((len(raw) + 8 * (count - 1) + 1,), dtype="<u8", buffer=padded, strides=(1,))
    words = np.empty((len(starts), count), dtype=np.uint64)
    for j in range(count):
        words[:, j] = at[starts + 8 * j] & _BYTE_MASKS[np.clip(lengths - 8 * j, 0, 8)]
    return words


def _first_seen(codes: np.ndarray) -> np.ndarray:
    """Where each code first occurs, for codes numbered by first appearance (0, then 0 or 1, ...)."""
    if not len(codes):
        return np.zeros(0, dtype=np.int64)
    seen = np.maximum.accumulate(codes)
    return np.flatnonzero(np.concatenate(([True], codes[1:] > seen[:-1])))


def decode_hierarchy(raw: bytes, where: str) -> str:
    """The text of a hierarchy file: UTF-8 (BOM or not), UTF-16 (BOM, or the NUL pattern of plain ASCII
    text without one), else Latin-1. Other content with NUL or control bytes is refused as binary."""
    for bom, encoding in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                          (codecs.BOM_UTF16_BE, "utf-16-be")):
        if raw.startswith(bom):
            try:
                return raw[len(bom):].decode(encoding)
            except UnicodeDecodeError as exc:
                raise HierarchyError(f"{where}: starts with a {encoding.upper()} byte-order mark but byte "
                                     f"{exc.start + len(bom)} is not {encoding.upper()}") from None
    head = raw[:4096]
    if b"\x00" in head:
        half = max(1, len(head) // 2)
        for encoding, zeros in (("utf-16-le", head[1::2]), ("utf-16-be", head[0::2])):
            if zeros.count(0) >= 0.9 * half:
                try:
                    text = raw.decode(encoding)
                except UnicodeDecodeError:
                    break
                if "\x00" not in text:
                    return text
        raise HierarchyError(f"{where}: binary content, not a text hierarchy file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    head_text = text[:4096]
    control = sum(1 for ch in head_text if ch < " " and ch not in "\t\r\n")
    # C1 controls (U+0080-U+009F) are what high bytes of a binary file become as Latin-1; a Windows-1252
    # text read as Latin-1 has a few (curly quotes, dashes), not one character in five (random high bytes: one in four)
    c1 = sum(1 for ch in head_text if "\x7f" <= ch <= "\x9f")
    if control > max(2, len(head_text) // 100) or control + c1 > max(8, len(head_text) // 5):
        raise HierarchyError(f"{where}: binary content, not a text hierarchy file")
    return text


def check_size(h: Hierarchy, where: str, max_label_chars: int = MAX_LABEL_CHARS, max_levels: int = MAX_LEVELS
               ) -> None:
    """Refuse a hierarchy beyond the size limits, naming the level and the label."""
    if h.level_count > max_levels:
        raise HierarchyError(f"{where}: {h.level_count} levels (the values and {h.height} generalizations), "
                             f"more than the limit of {max_levels}")
    for lv in range(h.level_count):
        lengths = [len(str(x)) for x in h.labels[lv]]
        if lengths and max(lengths) > max_label_chars:
            label = str(h.labels[lv][int(np.argmax(lengths))])
            raise HierarchyError(f"{where}: a label of {len(label):,} characters at level {lv} "
                                 f"({label[:30]!r}…), more than the limit of {max_label_chars:,}")


# ---- missing values (engine.model.missing) ----------------------------------------------------------
MISSING_NOTE = "missing values (empty cells and NA markers)"


def with_missing(h: Hierarchy) -> Hierarchy:
    """The hierarchy with the missing value (MISSING, an empty cell) as a leaf: under the path of a
    leaf the file wrote for missing values (``(null)``, ``NA``, ``?``...) when there is one, else under
    ``(null)`` on every level below the root and the root on top. The same object when it has one."""
    if MISSING in h.leaf_index:
        return h
    marked = next((i for i, v in enumerate(h.leaves) if str(v) == NULL_LABEL), None)
    if marked is None:
        marked = next((i for i, v in enumerate(h.leaves) if is_marker(str(v))), None)
    labels = [np.asarray(lab, dtype=object) for lab in h.labels]
    maps = [np.asarray(m) for m in h.maps]
    for level in range(h.level_count):
        if level == 0:  # the leaf itself: a level-0 cell shows the input as it was, missing
            code = len(labels[0])
            labels[0] = np.append(labels[0], np.array([MISSING], dtype=object))
        elif marked is not None:
            code = int(maps[level][marked])
        else:
            wanted = MISSING if level == 0 else (NULL_LABEL if level < h.height else str(h.labels[level][0]))
            if level == h.height and len(labels[level]) != 1:
                wanted = ROOT
            hits = np.flatnonzero(labels[level] == wanted)
            if level > 0 and len(hits):
                code = int(hits[0])
            else:
                code = len(labels[level])
                labels[level] = np.append(labels[level], np.array([wanted], dtype=object))
        maps[level] = np.append(maps[level], np.int32(code)).astype(np.int32)
    # one note per column, naming it: a run lists the notes of every QI's hierarchy together
    note = (f"column {h.name!r}: {MISSING_NOTE} generalized as the leaf {str(h.leaves[marked])!r}"
            if marked is not None else f"column {h.name!r}: {MISSING_NOTE}: a leaf of their own, "
            f"{NULL_LABEL} below the root")
    leaves = np.append(np.asarray(h.leaves, dtype=object), np.array([MISSING], dtype=object))
    try:
        return Hierarchy(h.name, leaves, labels, maps, h.source, [*h.notes, note], list(h.conflicts), h.kind,
                         dict(h.lifted))
    except HierarchyError:  # a (null) label of the file sits elsewhere in the tree: its first path wins
        rows = h.to_rows() + [[MISSING] + [NULL_LABEL] * (h.height - 1) + [ROOT]]
        out = Hierarchy.from_rows(rows, h.name, h.source, on_conflict="first", kind=h.kind)
        out.notes[:0] = [*h.notes, note]
        return out


def without_missing(h: Hierarchy) -> Hierarchy:
    """The hierarchy without the missing value's leaf (and the labels only it used): what a library, a file
    or the tree editor keeps (a file's leaf cannot be empty; a run adds the leaf again: with_missing)."""
    index = h.leaf_index.get(MISSING)
    if index is None or len(h.leaves) == 1:
        return h
    keep = np.arange(len(h.leaves)) != index
    labels, maps = [], []
    for lab, m in zip(h.labels, h.maps):
        used, codes = np.unique(np.asarray(m)[keep], return_inverse=True)
        labels.append(np.asarray(lab, dtype=object)[used])
        maps.append(codes.reshape(-1).astype(np.int32))
    notes = [n for n in h.notes if MISSING_NOTE not in n]
    return Hierarchy(h.name, np.asarray(h.leaves, dtype=object)[keep], labels, maps, h.source, notes,
                     list(h.conflicts), h.kind, dict(h.lifted))


def nice_width(span: float, bins: int = 10, integral: bool = True) -> float:
    """Smallest width of the form 1, 2 or 5 x 10^n that covers ``span`` in at most ``bins`` bins."""
    if span <= 0:
        return 1.0
    raw = span / bins
    exp = math.floor(math.log10(raw))
    for base in (1, 2, 5, 10):
        w = base * 10**exp
        if w >= raw:
            break
    if integral:
        w = max(1, round(w))
    return float(w)


def format_number(x: float) -> str:
    x = round(float(x), 9)
    return str(int(x)) if x.is_integer() else f"{x:.10g}"


def interval_label(lo: float, hi: float) -> str:
    """[20-30); with a negative bound [-10, -5) so that the minus signs stay readable."""
    if lo < 0 or hi < 0:
        return f"[{format_number(lo)}, {format_number(hi)})"
    return f"[{format_number(lo)}-{format_number(hi)})"


def interval_hierarchy(name: str, distinct_values: Sequence[str], bins: int = 10, fanout: int = 2) -> Hierarchy:
    """value -> [a-b) of a 'nice' width -> intervals `fanout` times wider ... -> '*'."""
    strings = [str(v) for v in distinct_values]
    nums = pd.to_numeric(pd.Series(strings), errors="coerce")
    bad = [s for s, n in zip(strings, nums) if pd.isna(n)]
    if bad:
        raise HierarchyError(f"column {name!r}: value {bad[0]!r} is not a number")
    order = np.argsort(nums.to_numpy(dtype=float), kind="stable")  # labels listed low to high
    strings = [strings[i] for i in order]
    arr = nums.to_numpy(dtype=float)[order]
    lo, hi = float(arr.min()), float(arr.max())
    if not (math.isfinite(lo) and math.isfinite(hi) and abs(lo) <= 1e300 and abs(hi) <= 1e300):
        # as builders.MAX_BOUND: 1e308 - (-1e308) overflows to infinity
        raise HierarchyError(f"column {name!r}: values from {strings[0]!r} to {strings[-1]!r} are beyond ±1e+300, "
                             f"the largest magnitude laid out in intervals; build intervals with lower and upper")
    integral = bool(np.all(np.mod(arr, 1) == 0))
    width = nice_width(hi - lo, bins, integral)
    origin = math.floor(lo / width) * width
    columns = [strings]
    while True:
        # rounding first: (0.7 - 0.1) / 0.1 is 5.999..., whose floor would put 0.7 in [0.6-0.7)
        start = origin + np.floor(np.round((arr - origin) / width, 9)) * width
        if len(np.unique(start)) <= 1:
            break
        columns.append([interval_label(a, a + width) for a in start])
        width *= fanout
    columns.append([ROOT] * len(strings))
    rows = [list(r) for r in zip(*columns)]
    return Hierarchy.from_rows(rows, name, f"default interval hierarchy of {name!r}", kind="intervals")
