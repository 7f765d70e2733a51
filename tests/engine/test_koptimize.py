"""k-Optimize against a brute force over the power set of cut points; its interval output verifies."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymizer_app.engine import KAnonymity, UnsatisfiableError, build_output, verify_output
from anonymizer_app.engine.algorithms.base import Problem
from anonymizer_app.engine.algorithms.koptimize import TIME_BUDGET, solve
from anonymizer_app.engine.model.table import frequency_set

from ._lattice_helpers import small_tables


def make_problem(table, hs, k, suppression, time_budget=60.0):
    ordered = [hs[c] for c in table.qi]
    codes = table.encode(hs)
    freq = frequency_set(codes, np.array([len(h.leaves) for h in ordered], dtype=np.int64))
    budget = math.floor(suppression * table.n + 1e-9)
    return Problem(table, ordered, codes, freq, [KAnonymity(k)], suppression, budget,
                   {TIME_BUDGET.name: time_budget})


def brute_force(table, hs, k, suppression):
    """min C_DM over all cut sets, computed row by row with Counters."""
    n = table.n
    budget = math.floor(suppression * n + 1e-9)
    positions = []  # per QI: row -> position of its value among the present values in domain order
    for c in table.qi:
        values = table.frame[c].tolist()
        leaves = [str(x) for x in hs[c].leaves]
        if table.is_numeric(c):
            leaves = sorted(leaves, key=float)
        present = [v for v in leaves if v in set(values)]
        positions.append([present.index(v) for v in values])
    sigma = [(j, p) for j, pos in enumerate(positions) for p in range(1, max(pos) + 1 if pos else 1)]
    sigma = [(j, p) for (j, p) in sigma if p < len(set(positions[j]))]
    best = None
    for r in range(len(sigma) + 1):
        for head in itertools.combinations(sigma, r):
            keys = [tuple(sum(1 for (jj, p) in head if jj == j and p <= positions[j][i]) for j in range(len(positions)))
                    for i in range(n)]
            sizes = Counter(keys).values()
            sup = sum(s for s in sizes if s < k)
            if sup > budget:
                continue
            cost = sum(s * s for s in sizes if s >= k) + sup * n
            best = cost if best is None else min(best, cost)
    return best, len(sigma)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=small_tables(max_rows=30), k=st.integers(2, 4), suppression=st.sampled_from([0.0, 0.1, 0.3, 1.0]))
def test_cost_equals_power_set_search(data, k, suppression):
    table, hs = data
    expected, cuts = brute_force(table, hs, k, suppression)
    if cuts > 11:
        return  # keep the brute force small
    problem = make_problem(table, hs, k, suppression)
    try:
        out = solve(problem)
    except UnsatisfiableError:
        assert expected is None
        return
    assert out["info"]["complete"]
    assert out["info"]["optimum_value"] == expected
    # the interval hierarchies make it a full-domain recoding that verifies from the output rows
    ordered = out["hierarchies"]
    output = build_output(table, ordered, table.encode(dict(zip(table.qi, ordered))), out["levels"],
                          out["suppressed"])
    verify_output(table, dict(zip(table.qi, ordered)), output, out["suppressed"], [KAnonymity(k)], suppression,
                  transformation=dict(zip(table.qi, out["levels"])))
    kept = ~out["suppressed"]
    sizes = output[kept].groupby(list(table.qi)).size().to_numpy()
    assert int(np.sum(sizes ** 2)) + int(out["suppressed"].sum()) * table.n == expected


def test_time_budget_returns_best_so_far():
    table, hs = _big_table()
    out = solve(make_problem(table, hs, 2, 0.0, time_budget=0.0))
    assert out["info"]["complete"] is False
    assert "best found" in out["info"]["result"] and out["notes"]


def _big_table():
    import pandas as pd

    from anonymizer_app.engine import Table

    from ._lattice_helpers import make_hierarchy

    rng = np.random.default_rng(0)
    leaves = [str(i) for i in range(1, 21)]
    frame = pd.DataFrame({"a": rng.choice(leaves, 200), "b": rng.choice(leaves, 200)}, dtype=object)
    hs = {c: make_hierarchy(c, leaves, 2, 4) for c in "ab"}
    return Table(frame, {"a": "quasi-identifying", "b": "quasi-identifying"}, types={"a": "integer", "b": "integer"}), hs


def _small_table(n: int = 40, values: int = 6, seed: int = 0):
    """Two integer QIs with `values` distinct values each: 2 x (values - 1) cut points, few enough for
    the brute force over their power set (2^10 cut sets for 6 values)."""
    import pandas as pd

    from anonymizer_app.engine import Table

    from ._lattice_helpers import make_hierarchy

    rng = np.random.default_rng(seed)
    leaves = [str(10 * (i + 1)) for i in range(values)]
    frame = pd.DataFrame({"a": rng.choice(leaves, n), "b": rng.choice(leaves, n)}, dtype=object)
    hs = {c: make_hierarchy(c, leaves, 2, 3) for c in "ab"}
    return Table(frame, {"a": "quasi-identifying", "b": "quasi-identifying"}, types={"a": "integer", "b": "integer"}), hs


# cost: the brute force's minimum C_DM on _small_table(), pinned so that a change of the brute force shows too
@pytest.mark.parametrize("k, suppression, cost", [(2, 0.0, 138), (3, 0.0, 172), (3, 0.1, 172), (5, 0.2, 276)])
def test_registered_run_is_optimal_within_its_time_budget(k, suppression, cost):
    """The registered algorithm (anonymize -> verified Result) reaches the brute-force optimum, well within
    a small time budget; the published figures are recounted from the output rows."""
    from anonymizer_app.engine import InputError, anonymize
    from anonymizer_app.engine.algorithms.base import FullDomainRecoding

    table, hs = _small_table()
    expected, cuts = brute_force(table, hs, k, suppression)
    assert cuts == 10 and expected == cost
    import dataclasses
    if "hierarchies" not in {f.name for f in dataclasses.fields(FullDomainRecoding)}:
        with pytest.raises(InputError, match="hierarchies"):
            anonymize(table, hs, "koptimize", k=k)
        return
    result = anonymize(table, hs, "koptimize", k=k, suppression_limit=suppression, options={"time_budget": 10.0})
    assert result.verified and result.search["algorithm"] == "koptimize"
    assert result.search["complete"] is True and result.search["result"] == "optimal"
    assert result.search["time_budget"] == 10.0 and result.search["search_seconds"] < 10.0
    assert result.search["cut_points"] == cuts
    assert result.search["optimum_value"] == expected
    # C_DM recounted from the published rows: kept classes |E|^2, suppressed records N each
    n = table.n
    kept = ~np.asarray(result.suppressed)
    sizes = result.output[kept].groupby(list(table.qi)).size().to_numpy()
    assert sizes.min() >= k
    assert int(result.suppressed.sum()) <= math.floor(suppression * n + 1e-9)
    assert int(np.sum(sizes ** 2)) + int(result.suppressed.sum()) * n == expected


def test_a_cancel_stops_the_search_at_its_next_report(monkeypatch):
    """The search reports to the run's progress callback while it runs (here at every node); a callback that
    answers False (a cancelled or deleted job) stops it there, long before its 600 s budget."""
    from anonymizer_app.engine import Cancelled
    from anonymizer_app.engine.algorithms import koptimize

    monkeypatch.setattr(koptimize, "REPORT_SECONDS", 0.0)
    table, hs = _big_table()
    problem = make_problem(table, hs, 2, 0.0, time_budget=600.0)
    calls: list[tuple[float, str]] = []

    def progress(fraction: float, phase: str) -> bool:
        calls.append((fraction, phase))
        return len(calls) < 5  # the fifth report is answered "stop"

    problem.progress = progress
    with pytest.raises(Cancelled):
        solve(problem)
    import re

    assert len(calls) == 5 and calls[0][1] == "k-Optimize: 38 cut points"
    # a report at every unit of work (a node, and each cut point its pruning and reordering try); the fifth
    # call answered "stop": nothing after it
    nodes = [int(re.match(r"k-Optimize: (\d+) nodes searched, best cost \d+$", phase).group(1))
             for _, phase in calls[1:]]
    assert nodes == sorted(nodes) and nodes[0] == 1
    assert all(0.05 <= f < 0.06 for f, _ in calls)  # a few ms of a 600 s budget


def test_reports_are_spaced_in_time_and_follow_the_budget():
    """Without a cancel the search reports at most every REPORT_SECONDS; its fraction is the share of the
    time budget used."""
    from anonymizer_app.engine.algorithms import koptimize

    table, hs = _big_table()
    problem = make_problem(table, hs, 2, 0.0, time_budget=0.6)
    calls: list[float] = []
    problem.progress = lambda fraction, phase: calls.append(fraction) is None
    out = solve(problem)
    assert out["info"]["complete"] is False
    search = out["search"]
    assert search.reports == len(calls) - 1  # the first call is the "cut points" report
    assert 1 <= search.reports <= 0.6 / koptimize.REPORT_SECONDS + 1
    assert calls == sorted(calls) and calls[-1] < 0.95
