"""Build an engine Problem the way engine.api does (for running a search directly)."""

from __future__ import annotations

import math

import numpy as np


def problem_for(engine, table, hs, k, suppression, options):
    from anonymizer_app.engine.algorithms.base import Problem
    from anonymizer_app.engine.table import frequency_set

    h = table.hierarchies(hs)
    ordered = [h[c] for c in table.qi]
    codes = table.encode(h)
    freq = frequency_set(codes, np.array([len(x.leaves) for x in ordered], dtype=np.int64))
    return Problem(table, ordered, codes, freq, [engine.KAnonymity(k)], suppression,
                   math.floor(suppression * table.n + 1e-9), options)
