"""An independent Datafly in plain Python, to cross-check the engine.

Nothing here imports the engine: hierarchies are read with the csv module into plain dicts
(leaf -> tuple of labels, level 0 first), equivalence classes are Counters of label tuples. The
semantics follow ../shared/docs/definitions.md and the Datafly of seed 001 as the product defines
it: generalize the QI with most distinct values (ties: the QI listed first) while the records in
classes below k exceed the suppression budget floor(limit x N), then suppress those records.
"""

from __future__ import annotations

import csv
import math
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

ROOT = "*"


class ReferenceUnsatisfiable(Exception):
    pass


# ---- hierarchies ---------------------------------------------------------------------------------
def read_paths(path: str | Path, delimiter: str = ",") -> dict[str, list[tuple[str, ...]]]:
    """leaf -> its distinct generalization paths (levels 1..H of the file), in order of appearance."""
    paths: dict[str, list[tuple[str, ...]]] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.reader(fh, delimiter=delimiter):
            if not row:
                continue
            leaf, above = row[0], tuple(row[1:])
            known = paths.setdefault(leaf, [])
            if above not in known:
                known.append(above)
    return paths


def ambiguous(paths: dict[str, list[tuple[str, ...]]]) -> list[str]:
    return [leaf for leaf, options in paths.items() if len(options) > 1]


def lift_path(options: list[tuple[str, ...]]) -> tuple[str, ...]:
    """Below the lowest level where every path shows the same label, use that label."""
    depth = len(options[0])
    for i in range(depth):
        labels = {p[i] for p in options}
        if len(labels) == 1:
            (agreed,) = labels
            return tuple(agreed if j <= i else options[0][j] for j in range(depth))
    return tuple(ROOT for _ in range(depth))  # nothing agrees: only the (added) root does


def resolve(paths: dict[str, list[tuple[str, ...]]], policy: str = "first") -> dict[str, tuple[str, ...]]:
    """leaf -> (leaf, level1, ..., levelH), with a '*' root added when the top has several labels."""
    out = {}
    for leaf, options in paths.items():
        if len(options) == 1 or policy == "first":
            out[leaf] = (leaf, *options[0])
        elif policy == "lift":
            out[leaf] = (leaf, *lift_path(options))
        else:
            raise ValueError(policy)
    out = _first_parent_above_leaves(out)
    tops = {p[-1] for p in out.values()}
    if len(tops) > 1 or all(len(p) == 1 for p in out.values()):
        out = {leaf: (*p, ROOT) for leaf, p in out.items()}
    return out


def _first_parent_above_leaves(out: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """An inner label with several parents keeps the path above it of its first leaf (file order),
    level by level from the leaves up: the 'first' resolution of a non-tree file."""
    depth = len(next(iter(out.values()), ()))
    for level in range(1, depth - 1):
        above: dict[str, tuple[str, ...]] = {}
        for path in out.values():
            above.setdefault(path[level], path[level + 1:])
        out = {leaf: (*p[:level + 1], *above[p[level]]) for leaf, p in out.items()}
    return out


def read_hierarchy(path: str | Path, policy: str = "first", delimiter: str = ",") -> dict[str, tuple[str, ...]]:
    return resolve(read_paths(path, delimiter), policy)


def height(h: dict[str, tuple[str, ...]]) -> int:
    return len(next(iter(h.values()))) - 1


# ---- Datafly -------------------------------------------------------------------------------------
def budget(limit: float, n: int) -> int:
    return math.floor(Fraction(repr(limit)) * n)


def datafly(rows: list[dict], qis: list[str], hier: dict[str, dict], k: int, limit: float) -> dict:
    """Run Datafly on rows (dicts of strings); returns levels, steps and the suppressed flags."""
    n = len(rows)
    allowed = budget(limit, n)
    heights = {q: height(hier[q]) for q in qis}
    levels = {q: 0 for q in qis}
    steps = []
    while True:
        gen = [tuple(hier[q][r[q]][levels[q]] for q in qis) for r in rows]
        counts = Counter(gen)
        failing = sum(c for c in counts.values() if c < k)
        distinct = {q: len({hier[q][r[q]][levels[q]] for r in rows}) for q in qis}
        step = {"levels": dict(levels), "distinct": distinct, "equivalence_classes": len(counts),
                "records_in_failing_classes": failing}
        steps.append(step)
        if failing <= allowed:
            break
        candidates = [q for q in qis if levels[q] < heights[q]]
        if not candidates:
            raise ReferenceUnsatisfiable(f"{failing} records fail at the top, budget {allowed}")
        best = candidates[0]
        for q in candidates[1:]:
            if distinct[q] > distinct[best]:
                best = q
        step["generalized"] = best
        levels[best] += 1
    suppressed = [counts[g] < k for g in gen]
    return {"levels": levels, "steps": steps, "suppressed": suppressed, "generalized": gen}


def output_rows(rows: list[dict], columns: list[str], qis: list[str], run: dict) -> list[tuple[str, ...]]:
    """The anonymized rows: given columns in order, QIs generalized, suppressed rows '*' in every QI."""
    out = []
    for r, g, sup in zip(rows, run["generalized"], run["suppressed"]):
        labels = dict(zip(qis, g))
        out.append(tuple((ROOT if sup else labels[c]) if c in labels else r[c] for c in columns))
    return out


def figures(rows: list[dict], run: dict, sensitive: str | None = None) -> dict:
    n = len(rows)
    classes: dict[tuple, list[int]] = defaultdict(list)
    for i, (g, sup) in enumerate(zip(run["generalized"], run["suppressed"])):
        if not sup:
            classes[g].append(i)
    sizes = [len(members) for members in classes.values()]
    n_sup = sum(run["suppressed"])
    out = {
        "suppressed": n_sup,
        "equivalence_classes": len(classes),
        "min_class_size": min(sizes) if sizes else 0,
        "discernibility": sum(s * s for s in sizes) + n_sup * n,
    }
    if sensitive is not None:
        homogeneous = [m for m in classes.values() if len({rows[i][sensitive] for i in m}) == 1]
        out["homogeneous_classes"] = len(homogeneous)
        out["homogeneous_records"] = sum(len(m) for m in homogeneous)
    return out
