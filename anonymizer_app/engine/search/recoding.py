"""Local and multidimensional recoding: output labels of groups of records.

A group (a Mondrian partition, a cluster) is written with one label per QI:
- numeric QIs: the value itself when the group holds one value, else the inclusive range
  ``[lo-hi]`` of its values (lo and hi written as in the input);
- other QIs: the lowest common ancestor (LCA) in the hierarchy of the group's values, i.e. the
  label at the lowest level where every value of the group has the same ancestor.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model.hierarchy import ROOT, Hierarchy


class QISpace:
    """Per QI: the ancestor matrix of the leaves and, for numeric QIs, the leaves' numeric values."""

    def __init__(self, hierarchies: list[Hierarchy], numeric: list[bool], codes: np.ndarray | None = None,
                 present: list[np.ndarray] | None = None):
        """``codes`` (rows x q) or ``present`` (per QI, which leaves occur) give each numeric QI's
        span over the values that occur; without either, over all leaves."""
        self.hierarchies = hierarchies
        self.numeric = list(numeric)
        self.q = len(hierarchies)
        # anc[j][leaf, level] = code of the leaf's ancestor at that level
        self.anc = [np.stack(h.maps, axis=1).astype(np.int32) for h in hierarchies]
        self.heights = [h.height for h in hierarchies]
        self.values: list[np.ndarray | None] = []
        self.span: list[float] = []
        for j, h in enumerate(hierarchies):
            if self.numeric[j]:
                v = pd.to_numeric(pd.Series(h.leaves, dtype=object), errors="coerce").to_numpy(dtype=float)
                if present is not None:
                    occurs = np.asarray(present[j], dtype=bool)
                elif codes is not None:
                    occurs = np.bincount(codes[:, j], minlength=len(v)) > 0
                else:
                    occurs = np.ones(len(v), dtype=bool)
                ok = occurs & ~np.isnan(v)
                span = float(v[ok].max() - v[ok].min()) if ok.any() else 0.0
                self.values.append(v)
                self.span.append(span)
            else:
                self.values.append(None)
                self.span.append(0.0)

    def value_array(self, j: int) -> np.ndarray:
        """The numeric values of QI j's leaves (NaN where a leaf is no number); numeric QIs only."""
        values = self.values[j]
        if values is None:
            raise ValueError(f"quasi-identifier {j} is not numeric")
        return values

    def sortable_values(self, j: int) -> np.ndarray:
        """QI j's leaf values with a missing value (no number) one column span above the maximum: it
        sorts after every number and lies at least a span away from each, so median cuts and distances
        keep missing records apart from the others (their label is decided by group_labels)."""
        values = self.value_array(j)
        missing = np.isnan(values)
        if not missing.any():
            return values
        ok = values[~missing]
        top = float(ok.max()) + (self.span[j] or 1.0) if len(ok) else 0.0
        return np.where(missing, top, values)

    def lca_level(self, j: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Level of the lowest common ancestor of leaf codes a and b (broadcast)."""
        anc = self.anc[j]
        return np.argmax(anc[a] == anc[b], axis=-1)


def _segments(group: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Order sorting by group, start of each group's run, and the group ids in that order."""
    order = np.argsort(group, kind="stable")
    g = group[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if len(g) else np.zeros(0, dtype=np.int64)
    return order, starts, g[starts] if len(g) else g


def group_labels(space: QISpace, leaf_codes: np.ndarray, group: np.ndarray, n_groups: int) -> list[np.ndarray]:
    """Per QI an object array of n_groups labels; ``leaf_codes`` (items x q) with ``group`` per item."""
    out = []
    order, starts, gids = _segments(group)
    codes = leaf_codes[order]
    for j, h in enumerate(space.hierarchies):
        col = codes[:, j]
        labels = np.full(n_groups, ROOT, dtype=object)
        anc = space.anc[j]
        lo_code = np.minimum.reduceat(col, starts) if len(col) else col
        hi_code = np.maximum.reduceat(col, starts) if len(col) else col
        single = lo_code == hi_code
        if space.numeric[j]:
            v = space.value_array(j)[col]
            # a group holding a missing value (NaN) beside numbers is written as the root: the lowest
            # common ancestor of (null) and any number (definitions.md, "Missing values")
            with_missing = np.maximum.reduceat(np.isnan(v), starts) if len(col) else np.zeros(0, dtype=bool)
            vmin = np.fmin.reduceat(v, starts) if len(col) else v
            vmax = np.fmax.reduceat(v, starts) if len(col) else v
            # the leaf written for each bound: the first leaf of the group holding that value
            pos = np.arange(len(col))
            seg = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(col)]))
            first_min = np.full(len(starts), len(col))
            np.minimum.at(first_min, seg[v == vmin[seg]], pos[v == vmin[seg]])
            first_max = np.full(len(starts), len(col))
            np.minimum.at(first_max, seg[v == vmax[seg]], pos[v == vmax[seg]])
            leaves = h.leaves
            # one value: its label at level 0 (the leaf itself unless level 0 groups leaves)
            least = h.labels[0][h.maps[0]]
            lab = np.empty(len(starts), dtype=object)
            for i in range(len(starts)):
                if single[i]:
                    lab[i] = least[lo_code[i]]
                elif with_missing[i]:
                    lab[i] = ROOT
                else:
                    lab[i] = f"[{leaves[col[first_min[i]]]}-{leaves[col[first_max[i]]]}]"
            labels[gids] = lab
        else:
            level = np.zeros(len(starts), dtype=np.int64)
            done = single.copy()
            # from level 0: a group of leaves sharing a level-0 label (a hierarchy whose level 0 groups leaves)
            for lv in range(0 if not np.array_equal(h.maps[0], np.arange(len(h.maps[0]))) else 1, h.level_count):
                a = anc[col, lv]
                same = np.minimum.reduceat(a, starts) == np.maximum.reduceat(a, starts)
                newly = same & ~done
                level[newly] = lv
                done |= same
            rep = col[starts]
            lab = np.empty(len(starts), dtype=object)
            for lv in np.unique(level):
                sel = level == lv
                lab[sel] = h.labels[lv][anc[rep[sel], lv]]
            labels[gids] = lab
        out.append(labels)
    return out


def cells_from_groups(space: QISpace, codes: np.ndarray, group_of_row: np.ndarray,
                      tuple_of_row: np.ndarray | None = None) -> list[np.ndarray]:
    """Per QI the output label of every row from its group (-1: suppressed, written '*')."""
    n = len(group_of_row)
    kept = group_of_row >= 0
    n_groups = int(group_of_row.max()) + 1 if kept.any() else 0
    if tuple_of_row is not None and n:
        # one item per distinct (group, tuple) pair: far fewer than the rows
        m = int(tuple_of_row.max()) + 1
        key = group_of_row[kept].astype(np.int64) * m + tuple_of_row[kept]
        uniq, first = np.unique(key, return_index=True)
        item_rows = np.flatnonzero(kept)[first]
        item_group = (uniq // m).astype(np.int64)
    else:
        item_rows = np.flatnonzero(kept)
        item_group = group_of_row[kept].astype(np.int64)
    labels = group_labels(space, codes[item_rows], item_group, n_groups)
    everyone = bool(kept.all())
    groups = group_of_row if everyone else group_of_row[kept]  # gathered once for every QI
    cells = []
    for lab in labels:
        if everyone:  # no suppressed row: each row's label taken straight into a new column
            cells.append(lab.take(groups))
            continue
        col = np.full(n, ROOT, dtype=object)
        col[kept] = lab.take(groups)
        cells.append(col)
    return cells


def parse_range(label: str) -> tuple[float, float] | None:
    """'[lo-hi]' -> (lo, hi); None when the label is not such a range."""
    if not (isinstance(label, str) and len(label) >= 5 and label[0] == "[" and label[-1] == "]"):
        return None
    body = label[1:-1]
    for i in range(1, len(body) - 1):
        if body[i] == "-":
            try:
                return float(body[:i]), float(body[i + 1:])
            except ValueError:
                continue
    return None
