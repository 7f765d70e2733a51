"""Generalization hierarchies: a tree per quasi-identifier, stored as one lookup array per level.

Level 0 holds the leaves (the original values), level H the root. ``maps[level][leaf_code]`` is the
code of the leaf's ancestor in ``labels[level]``, so generalizing a whole column to a level is one
fancy-indexing operation on its integer codes.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .errors import HierarchyError

ROOT = "*"
CONFLICT_POLICIES = ("error", "lift", "first")
MAX_LISTED = 8


@dataclass(frozen=True)
class Conflict:
    """A leaf that the file generalizes in more than one way (the file is not a tree there)."""

    value: str
    lines: tuple[int, ...]
    paths: tuple[tuple[str, ...], ...]

    def describe(self) -> str:
        shown = " vs ".join(";".join(p) for p in self.paths[:3])
        lines = ", ".join(str(n) for n in self.lines[:4])
        return f"{self.value!r} (lines {lines}: {shown})"


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
        """Data values that are not leaves of this hierarchy, in first-seen order."""
        index = self.leaf_index
        return [str(v) for v in pd.unique(pd.Series(list(values), dtype=object)) if str(v) not in index]

    def encode(self, values: pd.Series, column: str | None = None) -> np.ndarray:
        """Leaf codes (int32) of a column; every value must be a leaf."""
        codes = pd.Categorical(values, categories=self.leaves).codes.astype(np.int32)
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

        Identical duplicate rows are accepted. A leaf with two different paths is a conflict:
        refused by default, or resolved by ``lift`` (the value is generalized, below the lowest
        level where all its paths agree, to that agreed ancestor) or ``first`` (first path wins).
        """
        if on_conflict not in CONFLICT_POLICIES:
            raise HierarchyError(
                f"unknown conflict resolution {on_conflict!r}; choose one of {', '.join(CONFLICT_POLICIES)}"
            )
        where = source or f"hierarchy of {name!r}"
        if line_numbers is None:
            line_numbers = range(1, len(rows) + 1)
        width = None
        paths: dict[str, list[tuple[str, ...]]] = {}
        lines: dict[str, list[int]] = {}
        for row, lineno in zip(rows, line_numbers):
            if width is None:
                width = len(row)
            elif len(row) != width:
                raise HierarchyError(
                    f"{where}, line {lineno}: {len(row)} values where the first line has {width} "
                    f"(every line must give a leaf and all its generalizations)"
                )
            leaf, path = row[0], tuple(row[1:])
            known = paths.get(leaf)
            if known is None:
                paths[leaf] = [path]
                lines[leaf] = [lineno]
            elif path not in known:
                known.append(path)
                lines[leaf].append(lineno)
        if width is None:
            raise HierarchyError(f"{where}: the hierarchy is empty")

        conflicts = [
            Conflict(v, tuple(lines[v]), tuple(p)) for v, p in paths.items() if len(p) > 1
        ]
        notes: list[str] = []
        if conflicts and on_conflict == "error":
            listed = "; ".join(c.describe() for c in conflicts[:MAX_LISTED])
            more = f" and {len(conflicts) - MAX_LISTED} more" if len(conflicts) > MAX_LISTED else ""
            err = HierarchyError(
                f"{where}: {len(conflicts)} value(s) have contradictory generalizations, so the file "
                f"is not a tree: {listed}{more}. Choose a resolution: 'lift' (generalize each such "
                f"value to the lowest level where all its paths agree) or 'first' (keep the first path)."
            )
            err.conflicts = conflicts  # type: ignore[attr-defined]
            raise err

        leaves = list(paths)
        table = []
        lifted: dict[int, dict[str, int]] = {}
        for leaf in leaves:
            options = paths[leaf]
            if len(options) == 1 or on_conflict == "first":
                table.append((leaf, *options[0]))
            else:
                path, agree = _lift(options)
                table.append((leaf, *path))
                for level in range(1, agree + 1):
                    lifted.setdefault(level, {})[path[level - 1]] = agree + 1
        if conflicts:
            how = "lifted to the lowest level where their paths agree" if on_conflict == "lift" else (
                "given their first path"
            )
            notes.append(f"{len(conflicts)} ambiguous value(s) {how}")

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
        for level in range(1, len(maps) - 1):
            pairs = np.unique(np.stack([maps[level], maps[level + 1]]), axis=1)
            if pairs.shape[1] > len(np.unique(maps[level])):
                many = np.flatnonzero(np.bincount(pairs[0]) > 1)
                notes.append(
                    f"not a tree at level {level}: {len(many)} label(s) have several parents, e.g. "
                    f"{labels[level][many[0]]!r}"
                )
        return cls(name, np.asarray(leaves, dtype=object), labels, maps, source, notes, conflicts, kind,
                   lifted)


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
def sniff_hierarchy_delimiter(text: str) -> str:
    """';' (ARX), ',' (Datafly exercise files) or tab: the one that splits the first lines evenly,
    else the most frequent one (so that a ragged line is reported, not read as one column)."""
    first = [ln for ln in text.splitlines()[:50] if ln.strip()]
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
    delimiter = delimiter or sniff_hierarchy_delimiter(text)
    rows, numbers = [], []
    try:
        for row in csv.reader(io.StringIO(text), delimiter=delimiter, strict=True):
            numbers.append(len(numbers) + 1)
            rows.append(row)
    except csv.Error as exc:
        raise HierarchyError(f"{where}, line {len(numbers) + 1}: {exc}") from exc
    kept = [(r, n) for r, n in zip(rows, numbers) if r and any(c.strip() for c in r)]
    for row, n in kept:
        if any(c == "" for c in row):
            raise HierarchyError(f"{where}, line {n}: an empty value")
    return Hierarchy.from_rows(
        [r for r, _ in kept], name, where, on_conflict, [n for _, n in kept]
    )


def read_hierarchy(
    path: str | Path, name: str | None = None, delimiter: str | None = None, on_conflict: str = "error"
) -> Hierarchy:
    path = Path(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return parse_hierarchy(text, name or path.stem, path.name, delimiter, on_conflict)


# ---- default hierarchies built from the data --------------------------------------------
def default_hierarchy(name: str, values: pd.Series, numeric: bool) -> Hierarchy:
    """Integers/decimals: nested intervals; anything else: value -> '*'."""
    distinct = pd.unique(values.astype(str))
    if numeric:
        return interval_hierarchy(name, distinct)
    rows = [[v, ROOT] for v in distinct]
    h = Hierarchy.from_rows(rows, name, f"default hierarchy of {name!r}", kind="flat")
    return h


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


def _fmt(x: float) -> str:
    x = round(float(x), 9)
    return str(int(x)) if x.is_integer() else f"{x:.10g}"


def _interval_label(lo: float, hi: float) -> str:
    """[20-30); with a negative bound [-10, -5) so that the minus signs stay readable."""
    if lo < 0 or hi < 0:
        return f"[{_fmt(lo)}, {_fmt(hi)})"
    return f"[{_fmt(lo)}-{_fmt(hi)})"


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
    integral = bool(np.all(np.mod(arr, 1) == 0))
    width = nice_width(hi - lo, bins, integral)
    origin = math.floor(lo / width) * width
    columns = [strings]
    while True:
        # rounding first: (0.7 - 0.1) / 0.1 is 5.999..., whose floor would put 0.7 in [0.6-0.7)
        start = origin + np.floor(np.round((arr - origin) / width, 9)) * width
        if len(np.unique(start)) <= 1:
            break
        columns.append([_interval_label(a, a + width) for a in start])
        width *= fanout
    columns.append([ROOT] * len(strings))
    rows = [list(r) for r in zip(*columns)]
    return Hierarchy.from_rows(rows, name, f"default interval hierarchy of {name!r}", kind="intervals")
