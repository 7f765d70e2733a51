"""The solution lattice under the run's full specification: on random tables with l, t and β, the starred
optimum is the pipeline's optimum, every "anonymous" tag equals an independent check of the node under
every model (recounted here with pandas), and a node shown or kept passes the gate."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from anonymizer_app.engine import Table, UnsatisfiableError, parse_hierarchy
from anonymizer_app.engine.privacy import (
    BetaLikeness,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    TCloseness,
)
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.search import solution_lattice

from .test_pipeline import recount

set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "anonymizer-tests-hypothesis")

MODELS = [[DistinctLDiversity(2)], [EntropyLDiversity(1.5)], [TCloseness(0.3)], [BetaLikeness(2.0)],
          [DistinctLDiversity(2), TCloseness(0.4)]]


def _problem(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 60))
    files, frame = {}, {}
    for name in ("a", "b"):
        leaves = [f"{name}{i}" for i in range(int(rng.integers(2, 6)))]
        files[name] = "".join(f"{v};{name}g{i % 2};*\n" for i, v in enumerate(leaves))
        frame[name] = rng.choice(leaves, n)
    frame["s"] = rng.choice(["x", "y", "z"], n, p=[0.5, 0.3, 0.2])
    table = Table(pd.DataFrame(frame), {"a": "qi", "b": "qi", "s": "sensitive"})
    return table, {c: parse_hierarchy(files[c], c) for c in ("a", "b")}


def _node_is_anonymous(table, hs, levels, models, budget) -> bool:
    """Independent: generalize with the hierarchy files' maps, group, recount each class under every
    model; anonymous when the records of the failing classes fit the suppression budget."""
    out = table.frame.copy()
    for col, lv in zip(table.qi, levels):
        h = hs[col]
        codes = h.encode(out[col], col)
        out[col] = np.asarray(h.labels[lv], dtype=object)[h.maps[lv][codes]]
    failing = 0
    for _, group in out.groupby(table.qi, sort=False):
        if recount(group, table.qi, table.frame, models):
            failing += len(group)
    return failing <= budget


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), which=st.integers(0, len(MODELS) - 1), limit=st.sampled_from([0.0, 0.1]))
def test_tags_and_star_follow_every_model(seed, which, limit):
    table, hs = _problem(seed)
    models = [KAnonymity(2), *[type(m)(**{**m.__dict__, "column": "s"}) for m in MODELS[which]]]
    spec = RunSpec.build(table, hs, "flash", models=models, suppression_limit=limit)
    try:
        best = pipeline.run(spec)
    except UnsatisfiableError:
        best = None
    if best is None:
        try:
            solution_lattice.evaluate(spec)
        except UnsatisfiableError:
            return
        raise AssertionError("the lattice found a solution the pipeline did not")
    data = solution_lattice.evaluate(spec)
    budget = int(np.floor(limit * table.n + 1e-9))
    for levels, tag in zip(data["nodes"]["levels"], data["nodes"]["tag"]):
        lv = [int(x) for x in levels.split(",")]
        assert (tag in "Aa") == _node_is_anonymous(table, hs, lv, list(best.result.models), budget), levels
    star = [int(x) for x in data["optimum"].split(",")]
    assert star == [best.result.transformation[c] for c in table.qi]
    # the star, shown or kept, passes the gate with every model
    node = pipeline.publish_levels(spec, data["optimum"])
    assert recount(node.table, table.qi, table.frame, list(node.result.models)) == []
    assert [m.describe() for m in node.result.models] == [m.describe() for m in best.result.models]


def test_a_failing_node_is_refused_as_a_publication():
    for seed in range(50):  # a table whose lattice has nodes that break distinct 3-diversity
        table, hs = _problem(seed)
        spec = RunSpec.build(table, hs, "flash", models=[KAnonymity(2), DistinctLDiversity(3, "s")])
        data = solution_lattice.evaluate(spec)
        failing = [lv for lv, tag in zip(data["nodes"]["levels"], data["nodes"]["tag"]) if tag in "Nn"]
        if failing:
            break
    assert failing
    for levels in itertools.islice(failing, 3):
        try:
            pipeline.publish_levels(spec, levels)
        except UnsatisfiableError as exc:
            assert "distinct 3-diversity" in str(exc)
        else:
            raise AssertionError(f"node {levels} published although tagged not anonymous")


def _weighted_loss_by_hand(table, hs, levels, weights: dict) -> float:
    """ARX's Loss with attribute weights, record by record in plain Python (nothing suppressed): per QI the mean
    share of the hierarchy's leaves under each record's label, normalized by (S - N/L) / (N - N/L), then
    prod (1 + L_j)^(w_j / sum w) - 1 (definitions.md)."""
    n = len(table.frame)
    total = sum(weights.values())
    product = 1.0
    for col, lv in zip(table.qi, levels):
        h = hs[col]
        leaves = [str(x) for x in h.leaves]
        label_of = {leaf: h.labels[lv][h.maps[lv][i]] for i, leaf in enumerate(leaves)}
        under = {lab: sum(1 for leaf in leaves if label_of[leaf] == lab) for lab in label_of.values()}
        s = sum(under[label_of[str(v)]] / len(leaves) for v in table.frame[col])
        low = n / len(leaves)
        loss = max((s - low) / (n - low), 0.0) if n > low else 0.0
        product *= (1.0 + loss) ** (weights[col] / total)
    return product - 1.0


def test_the_lattice_takes_the_runs_attribute_weights():
    """A run with metric loss and weights a=1, b=0.2: every anonymous node's value is the weighted Loss computed
    by hand, the star is the node of least weighted Loss, and the weights are reported; with discernibility the
    weights are left out (it takes none) instead of refusing the evaluation."""
    table, hs = _problem(7)
    spec = RunSpec.build(table, hs, "flash", k=2, options={"metric": "loss", "weights": "a=1,b=0.2"})
    data = solution_lattice.evaluate(spec)
    assert data["metric_label"] == "Loss (ARX)" and data["weights"] == {"a": 1.0, "b": 0.2}
    by_hand = {}
    for levels, tag, value in zip(data["nodes"]["levels"], data["nodes"]["tag"], data["nodes"]["value"]):
        if tag in "Aa":
            lv = [int(x) for x in levels.split(",")]
            by_hand[levels] = _weighted_loss_by_hand(table, hs, lv, {"a": 1.0, "b": 0.2})
            assert value is not None and abs(value - by_hand[levels]) < 1e-12, (levels, value, by_hand[levels])
    assert by_hand[data["optimum"]] == min(by_hand.values())
    unweighted = solution_lattice.evaluate(RunSpec.build(table, hs, "flash", k=2, options={"metric": "loss"}))
    assert "weights" not in unweighted
    assert len(by_hand) >= 3  # several anonymous nodes, and the weights change their values
    assert any(abs(v - by_hand[lv]) > 1e-6 for lv, v in zip(unweighted["nodes"]["levels"], unweighted["nodes"]["value"])
               if lv in by_hand)
    plain = solution_lattice.evaluate(spec, metric="discernibility")
    assert plain["metric"] == "discernibility" and "weights" not in plain
