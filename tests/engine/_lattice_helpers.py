"""Random small tables with hierarchies, and a brute-force lattice optimum that does not use the
lattice engine (only engine.search.lattice.equivalence_classes and engine.measure.metrics, as the final report)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from anonymizer_app.engine import Hierarchy, Table
from anonymizer_app.engine.measure.metrics import loss_figures
from anonymizer_app.engine.model.table import frequency_set
from anonymizer_app.engine.search.lattice import equivalence_classes

KEYS = {"discernibility": "discernibility", "height": "generalization_height", "ncp": "ncp",
        "entropy": "non_uniform_entropy"}


def make_hierarchy(name: str, leaves: list[str], height: int, fan: int) -> Hierarchy:
    rows = []
    for i, leaf in enumerate(leaves):
        row = [leaf]
        for lv in range(1, height):
            row.append(f"{name}{lv}_{i // fan**lv}")
        row.append("*")
        rows.append(row)
    return Hierarchy.from_rows(rows, name)


@st.composite
def small_tables(draw, max_rows: int = 40):
    q = draw(st.integers(2, 3))
    n = draw(st.integers(4, max_rows))
    cols, hs = {}, {}
    for j in range(q):
        d = draw(st.integers(2, 6))
        numeric = draw(st.booleans())
        leaves = [str(10 * (i + 1)) if numeric else f"v{j}{i}" for i in range(d)]
        height = draw(st.integers(1, 3))
        fan = draw(st.integers(2, 3))
        name = f"q{j}"
        hs[name] = make_hierarchy(name, leaves, height, fan)
        cols[name] = [leaves[draw(st.integers(0, d - 1))] for _ in range(n)]
    cols["s"] = ["x"] * n
    frame = pd.DataFrame(cols, dtype=object)
    roles = {c: "quasi-identifying" for c in hs}
    roles["s"] = "insensitive"
    types = {c: ("integer" if hs[c].leaves[0][0].isdigit() else "string") for c in hs}
    return Table(frame, roles, types=types), hs


def brute_force(table: Table, hs: dict, k: int, suppression: float, metric: str):
    """min over every node whose records in classes below k fit the budget; None if none does."""
    ordered = [hs[c] for c in table.qi]
    codes = table.encode(hs)
    freq = frequency_set(codes)
    n = table.n
    budget = math.floor(suppression * n + 1e-9)
    numeric = [table.is_numeric(c) for c in table.qi]
    best = None
    for levels in itertools.product(*[range(h.height + 1) for h in ordered]):
        inverse, sizes = equivalence_classes(freq.codes, freq.counts, ordered, list(levels))
        failing = sizes < k
        if sizes[failing].sum() > budget:
            continue
        sup = failing[inverse][freq.inverse]
        if metric == "discernibility":
            value = int(np.sum(sizes[~failing] ** 2)) + int(sup.sum()) * n
        else:
            value = loss_figures(ordered, numeric, codes, list(levels), sup)[KEYS[metric]]
        if best is None or value < best[0]:
            best = (value, levels)
    return best
