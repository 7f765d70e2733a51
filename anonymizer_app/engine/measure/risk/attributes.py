"""Distinction and separation of single QIs and of QI combinations (Motwani & Xu 2007, as ARX shows
them), and identifier suggestions: the combinations whose distinction is near 1.

distinction(A) = distinct value combinations of A / n; separation(A) = share of the n(n-1)/2 record
pairs that differ on A = 1 - Σ_c f_c(f_c - 1) / (n(n - 1)). Combinations are built size by size from
the dense class ids of their prefix, so each costs one pass over the rows (classes.dense_ids).
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np

from ...errors import InputError
from .classes import dense_ids

IDENTIFIER_DISTINCTION = 0.99  # a column or combination this distinct is suggested as an identifier


def combination_count(q: int, up_to: int) -> int:
    """How many combinations of 1..up_to of q QIs there are."""
    return sum(comb(q, s) for s in range(1, min(up_to, q) + 1))


def _figures(columns: tuple[str, ...], ids: np.ndarray, n: int) -> dict:
    sizes = np.bincount(ids)
    pairs = n * (n - 1)
    same = float(np.sum(sizes.astype(float) * (sizes - 1)))
    uniques = int((sizes == 1).sum())
    return {"columns": list(columns), "size": len(columns), "distinct": int(len(sizes)),
            "distinction": len(sizes) / n if n else 0.0, "separation": 1 - same / pairs if pairs else 0.0,
            "uniques": uniques, "uniques_share": uniques / n if n else 0.0}


def attribute_risks(codes: np.ndarray, qi: list[str], up_to: int = 1, limit: int | None = None,
                    identifier_distinction: float = IDENTIFIER_DISTINCTION) -> dict:
    """Distinction and separation of every QI and every combination of up to ``up_to`` QIs (at most
    ``limit`` combinations: a larger request is refused naming the count), best first."""
    n, q = codes.shape
    if up_to < 1:
        raise InputError(f"combinations {up_to}: at least 1 (single QIs)")
    up_to = min(up_to, q)
    total = combination_count(q, up_to)
    if limit is not None and total > limit:
        raise InputError(f"{total:,} combinations of up to {up_to} of {q} QIs: at most {limit:,} "
                         f"(choose a smaller combination size or fewer QIs)")
    ids_of: dict[tuple[int, ...], np.ndarray] = {}
    rows: list[dict] = []
    for size in range(1, up_to + 1):
        for combo in combinations(range(q), size):
            if size == 1:
                ids = dense_ids(codes[:, combo[0]])
            else:
                prefix = ids_of[combo[:-1]]
                col = codes[:, combo[-1]].astype(np.int64)
                ids = dense_ids(prefix * (int(col.max()) + 1) + col)
            if size < up_to:
                ids_of[combo] = ids
            rows.append(_figures(tuple(qi[j] for j in combo), ids, n))
        ids_of = {k: v for k, v in ids_of.items() if len(k) == size}  # only the prefixes of the next size
    order = sorted(rows, key=lambda r: (-r["distinction"], -r["separation"], r["size"], r["columns"]))
    by_uniques = sorted(rows, key=lambda r: (-r["uniques"], r["size"], r["columns"]))
    return {"combinations": up_to, "evaluated": len(rows), "rows": order,
            "most_uniques": [r for r in by_uniques if r["uniques"]][:10],
            "identifier_distinction": identifier_distinction,
            "identifiers": suggest_identifiers(rows, identifier_distinction)}


def suggest_identifiers(rows: list[dict], threshold: float) -> list[dict]:
    """The columns or combinations with distinction >= threshold that hold no smaller such combination."""
    found: list[dict] = []
    for r in sorted(rows, key=lambda r: (r["size"], -r["distinction"], r["columns"])):
        if r["distinction"] >= threshold and not any(set(f["columns"]) <= set(r["columns"]) for f in found):
            found.append(r)
    return found
