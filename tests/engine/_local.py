"""Helpers of the local/multidimensional recoding tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonymizer_app.engine import KAnonymity, Table, parse_hierarchy
from anonymizer_app.engine.algorithms.base import Problem
from anonymizer_app.engine.model.table import frequency_set

ZONE = "a1;a;*\na2;a;*\na3;a;*\nb1;b;*\nb2;b;*\nc1;c;*\n"


def mixed_table(n: int, seed: int = 0) -> tuple[Table, dict]:
    """n records: age (numeric), zone (categorical, 3-level hierarchy), disease (sensitive)."""
    rng = np.random.default_rng(seed)
    zones = ["a1", "a2", "a3", "b1", "b2", "c1"]
    frame = pd.DataFrame({
        "age": rng.integers(18, 90, n).astype(str),
        "zone": rng.choice(zones, n, p=[0.3, 0.2, 0.1, 0.2, 0.15, 0.05]),
        "disease": rng.choice(["flu", "cold", "cancer"], n),
    })
    table = Table(frame, {"age": "qi", "zone": "qi", "disease": "sensitive"})
    return table, {"zone": parse_hierarchy(ZONE, "zone")}


def problem_of(table: Table, given: dict, k: int, options: dict | None = None) -> Problem:
    hs = table.hierarchies(given)
    ordered = [hs[c] for c in table.qi]
    codes = table.encode(hs)
    freq = frequency_set(codes, np.array([len(h.leaves) for h in ordered], dtype=np.int64))
    return Problem(table, ordered, codes, freq, [KAnonymity(k)], 0.0, 0, dict(options or {}))
