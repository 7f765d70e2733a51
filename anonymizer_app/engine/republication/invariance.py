"""The m-invariant release of one table against the history of earlier releases (Xiao & Tao 2007).

Phases (the paper's, on the records of the current table):

1. division: every returning record (one with an entry in the history) goes to the bucket of its signature;
   a bucket with signature S is split in the end into groups holding exactly one record of each value of
   S, so it needs as many groups as its most frequent value has records, and each other value of S a
   record more per missing one: the bucket's *deficits*;
2. balancing: a new record (no history) fills a deficit of its value when the returning record nearest to
   it (normalized QI distance) is in that bucket; it then joins the bucket and takes its signature. This
   keeps a new record where its neighbours are, and uses it instead of a counterfeit only there;
3. assignment: the other new records form groups of m distinct sensitive values (Anatomy's rule: one
   record of each of the m most frequent values left, while m values are left); a record left over joins
   the nearest such group that lacks its value (the group's signature grows by it), else fills a deficit
   its value can fill, else is not published (and stays new for the next release). A group joins the
   bucket of its signature;
4. counterfeits: every deficit still open is a counterfeit record of that value (the paper's "critical
   absence": a deleted record's value must stay in its group's signature);
5. split: each bucket is cut recursively in two along the QI of widest normalized spread (each value's
   records sorted along it, shared in proportion to the halves' group counts) until each part is one
   group: one record or counterfeit per value of the signature, so every group is m-unique;
6. QI generalization (local recoding): each group is published with the box of its real records: numeric
   QIs as the value or the range ``[lo-hi]``, others as their lowest common ancestor. A group holding a
   single real record also covers that record's box in its previous release, so a lone returning record is
   not published with its exact QI values beside counterfeits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import InputError
from ..model.hierarchy import ROOT
from ..search.recoding import QISpace, parse_range
from .history import Entry, History

Heartbeat = Callable[[float, str], None]
# New records are grouped within parts of at least PART_GROUPS * m records: parts that small make groups of near
# records, and large enough that their signatures recur, so a later deletion seldom leaves a value missing (a
# counterfeit). Adult, 3 releases of 15,000 records, m=3 (benchmarks/bench_m_invariance.py): one part gave age
# NCP 0.27/0.27/0.28 with 0/65/91 counterfeits; parts of 2m records 0.10/0.20/0.21 with 0/762/782; 64m (this)
# 0.12/0.21/0.23 with 0/193/229.
PART_GROUPS = 32


@dataclass
class Grouping:
    """The groups of a release: row -> group (-1: not published), and per group its signature, the values
    of its counterfeits and its published QI labels (in QI order)."""

    group: np.ndarray
    signatures: list[tuple[str, ...]]
    counterfeits: list[list[str]]
    labels: list[list[str]]
    info: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def n_groups(self) -> int:
        return len(self.signatures)

    def history_after(self, history: History, keys: list[str], qi: list[str]) -> History:
        """The history extended by this release: every published record's signature and box; records
        absent from it keep their entries (a record that comes back keeps its signature)."""
        release = history.releases + 1
        records = dict(history.records)
        for row in np.flatnonzero(self.group >= 0):
            g = int(self.group[row])
            key = keys[row]
            old = records.get(key)
            records[key] = Entry(self.signatures[g], dict(zip(qi, self.labels[g])),
                                 old.first if old else release, release)
        return History(history.m, history.sensitive, list(qi), release, records)


class _Geometry:
    """Normalized QI coordinates of the rows: distances, spreads and sort keys for the phases."""

    def __init__(self, space: QISpace, codes: np.ndarray):
        self.space = space
        self.codes = codes
        self.numeric: list[np.ndarray | None] = []
        for j in range(space.q):
            if space.numeric[j]:
                span = space.span[j] or 1.0
                self.numeric.append(space.sortable_values(j)[codes[:, j]] / span)
            else:
                self.numeric.append(None)

    def distance(self, row: int, rows: np.ndarray) -> np.ndarray:
        """Normalized distance from ``row`` to each of ``rows`` (numeric |a-b|/span, categorical LCA height)."""
        d = np.zeros(len(rows), dtype=float)
        for j in range(self.space.q):
            x = self.numeric[j]
            if x is not None:
                d += np.abs(x[rows] - x[row])
            elif self.space.heights[j]:
                d += self.space.lca_level(j, self.codes[rows, j], self.codes[row, j]) / self.space.heights[j]
        return d

    def nearest(self, rows: np.ndarray, among: np.ndarray, batch: int = 256) -> tuple[np.ndarray, np.ndarray]:
        """For each of ``rows``: the position in ``among`` of its nearest row, and that distance (as distance())."""
        at = np.zeros(len(rows), dtype=np.int64)
        dist = np.zeros(len(rows), dtype=float)
        for start in range(0, len(rows), batch):
            part = rows[start:start + batch]
            d = np.zeros((len(part), len(among)), dtype=float)
            for j in range(self.space.q):
                x = self.numeric[j]
                if x is not None:
                    d += np.abs(x[part][:, None] - x[among][None, :])
                elif self.space.heights[j]:
                    a = self.codes[part, j][:, None]
                    b = self.codes[among, j][None, :]
                    d += self.space.lca_level(j, a, b) / self.space.heights[j]
            at[start:start + batch] = np.argmin(d, axis=1)
            dist[start:start + batch] = d[np.arange(len(part)), at[start:start + batch]]
        return at, dist

    def spread(self, rows: np.ndarray, j: int) -> float:
        x = self.numeric[j]
        if x is not None:
            v = x[rows]
            return float(v.max() - v.min()) if len(v) else 0.0
        h = self.space.heights[j]
        if not h or not len(rows):
            return 0.0
        anc = self.space.anc[j][self.codes[rows, j]]
        for level in range(anc.shape[1]):
            if (anc[:, level] == anc[0, level]).all():
                return level / h
        return 1.0

    def key(self, rows: np.ndarray, j: int) -> np.ndarray:
        x = self.numeric[j]
        return x[rows] if x is not None else self.codes[rows, j].astype(float)

    def order(self, rows: np.ndarray) -> np.ndarray:
        """``rows`` in lexicographic QI order (a locality order for picking records)."""
        if not len(rows):
            return rows
        keys = [self.key(rows, j) for j in reversed(range(self.space.q))]
        return rows[np.lexsort(keys)]


def m_invariant_groups(space: QISpace, codes: np.ndarray, values: np.ndarray, keys: list[str], history: History,
                       m: int, qi: list[str], heartbeat: Heartbeat | None = None) -> Grouping:
    """The groups of an m-invariant release of the rows (``codes``: N x q leaf codes under ``space``'s
    hierarchies, ``values``: the sensitive value of each row as text, ``keys``: each row's record key)."""
    n = len(values)
    values = np.asarray(values, dtype=object).astype(str)
    beat = heartbeat or (lambda fraction, phase: None)
    seen: dict[str, int] = {}
    for row, key in enumerate(keys):
        if key in seen:
            raise InputError(f"rows {seen[key] + 1} and {row + 1} have the same record id: each record of a "
                             f"release needs its own id")
        seen[key] = row
    geo = _Geometry(space, codes)
    notes: list[str] = []

    # 1. division: returning records by signature; a record whose value left its signature cannot be published
    bucket_of: dict[tuple[str, ...], list[int]] = {}
    changed: list[int] = []
    new: list[int] = []
    for row in range(n):
        entry = history.records.get(keys[row])
        if entry is None:
            new.append(row)
        elif values[row] in entry.signature:
            bucket_of.setdefault(entry.signature, []).append(row)
        else:
            changed.append(row)
    if changed:
        notes.append(f"{len(changed)} returning record(s) now hold a sensitive value outside their signature: "
                     f"not published (their signature is kept for a later release)")
    deficit: dict[tuple[str, ...], dict[str, int]] = {}
    for sig, rows in bucket_of.items():
        counts = {v: 0 for v in sig}
        for r in rows:
            counts[values[r]] += 1
        top = max(counts.values())
        deficit[sig] = {v: top - c for v, c in counts.items()}
    beat(0.1, f"m-invariance: {len(bucket_of)} signature bucket(s) of returning records, {len(new)} new record(s)")

    # 2. balancing: a new record fills a deficit of the bucket of its nearest returning record
    returning = np.array(sorted(r for rows in bucket_of.values() for r in rows), dtype=np.int64)
    sig_of_row = {r: sig for sig, rows in bucket_of.items() for r in rows}
    unplaced: list[int] = []
    filled = 0
    if len(returning) and new:
        at, dist = geo.nearest(np.array(new, dtype=np.int64), returning)
        nearest = sorted(zip(dist.tolist(), new, returning[at].tolist()))
        beat(0.4, f"m-invariance: balancing {len(new):,} new records")
        for _, row, near in nearest:
            sig = sig_of_row[near]
            if deficit[sig].get(values[row], 0) > 0:
                deficit[sig][values[row]] -= 1
                bucket_of[sig].append(row)
                filled += 1
            else:
                unplaced.append(row)
        unplaced.sort()
    else:
        unplaced = list(new)

    # 3. assignment: new records into groups of m distinct values (Anatomy's rule) within QI-local parts
    formed: list[list[int]] = []
    leftovers: list[int] = []
    for chunk in _eligible_parts(geo, np.array(unplaced, dtype=np.int64), values, m):
        made, rest = _anatomy_groups(geo, chunk, values, m)
        formed.extend(made)
        leftovers.extend(rest)
        if len(formed) % 1024 < len(made):
            beat(0.5, f"m-invariance: {len(formed):,} group(s) of new records")
    suppressed: list[int] = list(changed)
    formed_values = [set(values[r] for r in g) for g in formed]
    members = np.array([r for g in formed for r in g], dtype=np.int64)
    member_group = np.array([i for i, g in enumerate(formed) for _ in g], dtype=np.int64)
    for row in leftovers:
        v = values[row]
        if len(members):
            ok = np.array([v not in formed_values[g] for g in member_group], dtype=bool)
            if ok.any():
                d = geo.distance(row, members[ok])
                g = int(member_group[ok][int(np.argmin(d))])
                formed[g].append(row)
                formed_values[g].add(v)
                continue
        # a deficit of this value, in the bucket of the nearest returning record that has one
        open_rows = np.array([r for r in returning if deficit[sig_of_row[int(r)]].get(v, 0) > 0], dtype=np.int64)
        if len(open_rows):
            near = int(open_rows[int(np.argmin(geo.distance(row, open_rows)))])
            sig = sig_of_row[near]
            deficit[sig][v] -= 1
            bucket_of[sig].append(row)
            filled += 1
            continue
        suppressed.append(row)
    if len(suppressed) > len(changed):
        notes.append(f"{len(suppressed) - len(changed)} new record(s) could not join a group of {m} distinct "
                     f"sensitive values: not published (they count as new in the next release)")
    for group_rows in formed:
        sig = tuple(sorted(set(str(values[r]) for r in group_rows)))
        bucket_of.setdefault(sig, []).extend(group_rows)
        deficit.setdefault(sig, {v: 0 for v in sig})
    beat(0.7, f"m-invariance: splitting {len(bucket_of)} bucket(s) into groups")

    # 4-5. counterfeits and split, bucket by bucket in signature order
    group = np.full(n, -1, dtype=np.int64)
    signatures: list[tuple[str, ...]] = []
    counterfeits: list[list[str]] = []
    real_rows: list[np.ndarray] = []
    for sig in sorted(bucket_of):
        in_bucket = np.array(bucket_of[sig], dtype=np.int64)
        per_value = {v: in_bucket[values[in_bucket] == v] for v in sig}
        g_count = max(len(r) for r in per_value.values())
        for one in _split(geo, per_value, g_count):
            signatures.append(sig)
            counterfeits.append([v for v in sig if one[v] is None])
            real_rows.append(np.array([one[v] for v in sig if one[v] is not None], dtype=np.int64))

    # number the groups by their real records' QI order (lowest values first), as the seed's tables read
    order = sorted(range(len(signatures)), key=lambda i: tuple(
        float(geo.key(real_rows[i], j).min()) if len(real_rows[i]) else math.inf for j in range(space.q)))
    signatures = [signatures[i] for i in order]
    counterfeits = [counterfeits[i] for i in order]
    real_rows = [real_rows[i] for i in order]
    for g, members_of_group in enumerate(real_rows):
        group[members_of_group] = g

    # 6. the box of each group
    labels = [_box(space, codes, rows, history, keys, qi) for rows in real_rows]
    info = {"groups": len(signatures), "signatures": len(set(signatures)),
            "returning_records": int(len(returning)), "new_records": len(new),
            "new_records_filling_deficits": filled,
            "counterfeits": sum(len(c) for c in counterfeits),
            "groups_with_counterfeits": sum(1 for c in counterfeits if c),
            "not_published": len(suppressed), "not_published_value_changed": len(changed)}
    beat(0.9, f"m-invariance: {len(signatures):,} group(s), {info['counterfeits']:,} counterfeit(s)")
    return Grouping(group, signatures, counterfeits, labels, info, notes)


def _eligible(rows: np.ndarray, values: np.ndarray, m: int) -> bool:
    """Can ``rows`` all go into groups of m distinct values (Anatomy's eligibility: the most frequent value
    holds at most 1/m of them)?"""
    if len(rows) < m:
        return False
    _, counts = np.unique(values[rows], return_counts=True)
    return len(counts) >= m and int(counts.max()) * m <= len(rows)


def _eligible_parts(geo: _Geometry, rows: np.ndarray, values: np.ndarray, m: int) -> list[np.ndarray]:
    """New records cut at the median of their widest QI (Mondrian's cut) while both halves stay eligible and keep
    PART_GROUPS groups' worth of records, so the groups formed in each part are made of near records; a table
    that is not eligible is one part."""
    if not _eligible(rows, values, m) or len(rows) < 2 * PART_GROUPS * m:
        return [rows]
    dims = sorted(range(geo.space.q), key=lambda d: (-geo.spread(rows, d), d))
    for j in dims:
        if geo.spread(rows, j) == 0:
            break
        ordered = rows[np.argsort(geo.key(rows, j), kind="stable")]
        half = len(ordered) // 2
        left, right = ordered[:half], ordered[half:]
        if _eligible(left, values, m) and _eligible(right, values, m):
            return _eligible_parts(geo, left, values, m) + _eligible_parts(geo, right, values, m)
    return [rows]


def _anatomy_groups(geo: _Geometry, rows: np.ndarray, values: np.ndarray, m: int) -> tuple[list[list[int]], list[int]]:
    """Groups of m distinct values from ``rows``: one record of each of the m most frequent values left, while m
    values are left (records taken in QI order); the records left over."""
    by_value: dict[str, list[int]] = {}
    for row in geo.order(rows).tolist():
        by_value.setdefault(values[row], []).append(row)
    for pile in by_value.values():
        pile.reverse()  # popped from the end: locality order
    order_of_value = sorted(by_value)
    formed: list[list[int]] = []
    while sum(1 for v in order_of_value if by_value[v]) >= m:
        heads = sorted((v for v in order_of_value if by_value[v]), key=lambda v: (-len(by_value[v]), v))[:m]
        formed.append([by_value[v].pop() for v in heads])
    return formed, [r for v in order_of_value for r in by_value[v]]


def _split(geo: _Geometry, per_value: dict[str, np.ndarray], g_count: int) -> list[dict[str, int | None]]:
    """Cut a bucket into ``g_count`` groups: per group, per value, a row or None (a counterfeit)."""
    if g_count == 1:
        return [{v: (int(r[0]) if len(r) else None) for v, r in per_value.items()}]
    everyone = np.concatenate([r for r in per_value.values()]) if per_value else np.zeros(0, np.int64)
    q = geo.space.q
    j = max(range(q), key=lambda d: (geo.spread(everyone, d), -d)) if q else 0
    left_groups = g_count // 2
    left: dict[str, np.ndarray] = {}
    right: dict[str, np.ndarray] = {}
    for v, rows in per_value.items():
        rows = rows[np.argsort(geo.key(rows, j), kind="stable")] if len(rows) else rows
        share = math.floor(len(rows) * left_groups / g_count + 0.5)
        share = min(left_groups, max(len(rows) - (g_count - left_groups), share))
        left[v], right[v] = rows[:share], rows[share:]
    return _split(geo, left, left_groups) + _split(geo, right, g_count - left_groups)


def _box(space: QISpace, codes: np.ndarray, rows: np.ndarray, history: History, keys: list[str],
         qi: list[str]) -> list[str]:
    """The published QI labels of a group of real ``rows``: numeric QIs the value or ``[lo-hi]``, others
    the lowest common ancestor; a single real record's group also covers its previous box."""
    previous: dict[str, str] = {}
    if len(rows) == 1:
        entry = history.records.get(keys[int(rows[0])])
        if entry is not None:
            previous = entry.box
    out = []
    for j, h in enumerate(space.hierarchies):
        col = codes[rows, j]
        old = previous.get(qi[j])
        if space.numeric[j]:
            # (number, text) of every bound: the real values, and the previous box's bounds
            texts = [str(h.leaves[c]) for c in col]
            if old is not None:
                bounds = _range_texts(old)
                if bounds is None:
                    out.append(ROOT)  # the previous label was the root (or not a range): keep it covered
                    continue
                texts.extend(bounds)
            parsed = [_number(t) for t in texts]
            if any(x is None for x in parsed):
                out.append(ROOT if len(set(texts)) > 1 else texts[0])
                continue
            nums = [float(x) for x in parsed if x is not None]
            lo = min(range(len(texts)), key=lambda i: nums[i])
            hi = max(range(len(texts)), key=lambda i: nums[i])
            out.append(texts[lo] if nums[lo] == nums[hi] else f"[{texts[lo]}-{texts[hi]}]")
            continue
        leaves = list(col)
        if old is not None:
            leaf = _leaf_under(h, old)
            if leaf is None:
                out.append(ROOT)
                continue
            leaves.append(leaf)
        anc = space.anc[j][np.array(leaves, dtype=np.int64)]
        level = next(lv for lv in range(anc.shape[1]) if (anc[:, lv] == anc[0, lv]).all())
        out.append(str(h.labels[level][anc[0, level]]))
    return out


def _number(text: str) -> float | None:
    try:
        x = float(text)
    except ValueError:
        return None
    return None if math.isnan(x) else x


def _range_texts(label: str) -> list[str] | None:
    """The bound texts of a published numeric label: ``[lo-hi]`` -> [lo, hi], a single value -> [value]."""
    bounds = parse_range(label)
    if bounds is not None:
        body = label[1:-1]
        for i in range(1, len(body) - 1):
            if body[i] == "-" and _number(body[:i]) == bounds[0] and _number(body[i + 1:]) == bounds[1]:
                return [body[:i], body[i + 1:]]
    return [label] if _number(label) is not None else None


def _leaf_under(h, label: str) -> int | None:
    """A leaf code under the node ``label`` (the lowest level holding it), None when no level has it."""
    for level in range(h.level_count):
        where = np.flatnonzero(np.asarray(h.labels[level], dtype=object) == label)
        if len(where):
            under = np.flatnonzero(np.asarray(h.maps[level]) == int(where[0]))
            return int(under[0]) if len(under) else None
    return None
