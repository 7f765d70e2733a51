"""Property test: random small tables and hierarchies, random k and suppression limit."""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from anonymizer_app.engine import InputError, Table, UnsatisfiableError, anonymize, parse_hierarchy

from . import _reference as ref

# Hypothesis' plugin caches "local constants" under ./.hypothesis while collecting (before any fixture
# runs): keep that cache out of the checkout. database=None below stores no failing examples either.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "anonymizer-tests-hypothesis")


@st.composite
def problems(draw):
    q = draw(st.integers(2, 3))
    names = [f"q{j}" for j in range(q)]
    hierarchy_rows = {}
    for name in names:
        leaves = [f"{name}v{i}" for i in range(draw(st.integers(1, 8)))]
        depth = draw(st.integers(1, 3))  # levels written in the file above the leaves
        paths = {leaf: [leaf] for leaf in leaves}
        labels = list(leaves)
        for lv in range(1, depth + 1):
            groups = draw(st.integers(1, len(labels)))
            parent = {lab: f"{name}L{lv}g{draw(st.integers(0, groups - 1))}" for lab in labels}
            for path in paths.values():
                path.append(parent[path[-1]])
            labels = sorted(set(parent.values()))
        hierarchy_rows[name] = [paths[leaf] for leaf in leaves]
    n = draw(st.integers(1, 60))
    rows = [
        {name: draw(st.sampled_from([p[0] for p in hierarchy_rows[name]])) for name in names}
        for _ in range(n)
    ]
    k = draw(st.integers(1, 8))
    limit = draw(st.integers(0, 100)) / 100
    return names, hierarchy_rows, rows, k, limit


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_datafly_properties(problem):
    names, hierarchy_rows, rows, k, limit = problem
    n = len(rows)
    frame = pd.DataFrame([[r[c] for c in names] + [str(i % 3)] for i, r in enumerate(rows)],
                         columns=[*names, "s"])
    table = Table(frame, {**{c: "qi" for c in names}, "s": "sensitive"})
    hs = {c: parse_hierarchy("".join(";".join(p) + "\n" for p in hierarchy_rows[c]), c) for c in names}
    budget = math.floor(limit * n + 1e-9)
    try:
        result = anonymize(table, hs, k=k, suppression_limit=limit)
    except InputError:
        assert k > n and budget < n
        event("k larger than the table")
        return
    except UnsatisfiableError:
        assert budget < n  # with only k-anonymity, the top of every hierarchy is one class of n
        return

    out = result.output
    sup = result.suppressed
    event("some records suppressed" if sup.any() else "nothing suppressed")
    event("generalized" if any(result.transformation.values()) else "input already k-anonymous")
    assert len(out) == n
    assert int(sup.sum()) <= budget
    assert out["s"].tolist() == frame["s"].tolist()

    # ancestors from the rows written above (plus the '*' root the engine may add)
    ancestors = {c: {p[0]: set(p) | {"*"} for p in hierarchy_rows[c]} for c in names}
    for i, r in enumerate(rows):
        for c in names:
            cell = out.at[i, c]
            if sup[i]:
                assert cell == "*"
            else:
                assert cell in ancestors[c][r[c]], (i, c, cell)

    classes = Counter(tuple(out.loc[i, names]) for i in range(n) if not sup[i])
    assert all(size >= k for size in classes.values())
    assert result.metrics["equivalence_classes"] == len(classes)
    assert result.metrics["suppressed"] == int(sup.sum())
    assert result.metrics["discernibility"] == sum(s * s for s in classes.values()) + int(sup.sum()) * n

    # and exactly what the independent reference Datafly does
    hier = {c: ref.resolve({p[0]: [tuple(p[1:])] for p in hierarchy_rows[c]}) for c in names}
    expected = ref.datafly(rows, names, hier, k, limit)
    assert result.transformation == expected["levels"]
    assert sup.tolist() == expected["suppressed"]
    assert [tuple(r) for r in out[names].itertuples(index=False)] == ref.output_rows(rows, names, names, expected)
