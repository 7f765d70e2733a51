"""k-map against a population table: every published class matches at least k records of the population, counted
on the population generalized by the same transformation (engine.privacy.k_map_table).

A 12-record population with its research subset marked, counted by hand on every node of its 3 x 2 lattice; the
gate publishes the research rows only and refuses a tampered table; Flash equals the exhaustive search and the
lattice tags equal an independent recount (pandas) on random populations, with and without suppression."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import (
    InputError,
    Table,
    UnsatisfiableError,
    VerificationError,
    anonymize,
    parse_hierarchy,
)
from anonymizer_app.engine.algorithms import ALGORITHMS
from anonymizer_app.engine.privacy import (
    DeltaPresence,
    KAnonymity,
    KMapPopulationTable,
    check_feasible,
    make_model,
    research_column,
)
from anonymizer_app.engine.run import gate, pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.run.stages import compute
from anonymizer_app.engine.search import solution_lattice

# age, sex, in the research subset (r); rows 0, 3 and 6 are the research subset
POPULATION = [("20", "M", "1"), ("20", "M", "0"), ("21", "M", "0"), ("21", "F", "1"), ("30", "F", "0"),
              ("30", "F", "0"), ("31", "F", "1"), ("31", "M", "0"), ("31", "M", "0"), ("30", "M", "0"),
              ("21", "F", "0"), ("31", "F", "0")]
AGE = "20;20-21;*\n21;20-21;*\n30;30-31;*\n31;30-31;*\n"
SEX = "M;*\nF;*\n"


def population() -> tuple[Table, dict]:
    frame = pd.DataFrame(POPULATION, columns=["age", "sex", "r"])
    hs = {"age": parse_hierarchy(AGE, "age"), "sex": parse_hierarchy(SEX, "sex")}
    return Table(frame, {"age": "qi", "sex": "qi", "r": "insensitive"}), hs


def spec(k_map: int, limit: float = 0.0, algorithm: str = "flash", **kw) -> RunSpec:
    table, hs = population()
    return RunSpec.build(table, hs, algorithm, k=1, models=[KMapPopulationTable(k_map, "r")],
                         suppression_limit=limit, **kw)


def test_classes_failing_by_hand():
    m = KMapPopulationTable(3, "r")
    # classes x (population only, research): sizes 3, 2, 1, 1; the last holds no research record
    counts = np.array([[2, 1], [1, 1], [0, 1], [1, 0]])
    sizes = counts.sum(axis=1)
    assert m.classes_failing(sizes, counts, object()).tolist() == [False, True, True, False]
    assert m.card(sizes, counts, object()) == {"value": 1, "value_label": "smallest population class of a published "
                                                                           "class"}
    assert m.card(sizes[3:], counts[3:], object())["value"] is None  # nothing published
    assert m.summary() == "3-map against the population table"
    assert m.to_dict() == {"model": "k-map-population-table", "kmap_table_k": 3, "column": "r"}
    assert make_model("k-map-population-table", kmap_table_k=2, column="r") == KMapPopulationTable(2, "r")
    assert m.is_monotonic(0) and m.is_monotonic(1)  # the budget counts research records (research.py)
    with pytest.raises(InputError, match="kmap_table_k must be at least 1, got 0"):
        KMapPopulationTable(0, "r")
    with pytest.raises(InputError, match="k-map: k=13 but the population table holds only 12 records"):
        check_feasible([KMapPopulationTable(13, "r")], 12, {"r": pd.Series(["1"] * 12)}, 0.0)


# Every node of the lattice (age level, sex level) with k = 3, counted by hand on the population above:
#   (0,0) research classes (20,M) 2, (21,F) 2, (31,F) 2: all fail (6 records to suppress)
#   (1,0) (20-21,M) 0,1,2 = 3; (20-21,F) 3,10 = 2 fails; (30-31,F) 4,5,6,11 = 4; (30-31,M) no research record
#   (0,1) (20,*) 0,1 = 2 fails; (21,*) 2,3,10 = 3; (31,*) 6,7,8,11 = 4; (30,*) no research record
#   (1,1) 5 and 7; (2,0) (*,M) 6 and (*,F) 6; (2,1) 12: hold
# the research records of the failing classes (what suppressing them costs against the budget, a share of the 3
# research records: definitions.md, "The unit counted: the published record")
FAILING_RECORDS = {(0, 0): 3, (1, 0): 1, (0, 1): 1, (1, 1): 0, (2, 0): 0, (2, 1): 0}


@pytest.mark.parametrize("limit,anonymous", [
    (0.0, {(1, 1), (2, 0), (2, 1)}),
    (2 / 12, {(1, 1), (2, 0), (2, 1)}),  # a share of the 3 research records: floor(0.5) = 0 may go
    (1 / 3, {(1, 0), (0, 1), (1, 1), (2, 0), (2, 1)}),  # 1 research record may go: the failing class's
])
def test_every_node_by_hand(limit, anonymous):
    data = solution_lattice.evaluate(spec(3, limit))
    tags = {tuple(int(x) for x in lv.split(",")): tag for lv, tag in zip(data["nodes"]["levels"], data["nodes"]["tag"])}
    assert set(tags) == set(FAILING_RECORDS)
    assert {node for node, tag in tags.items() if tag in "Aa"} == anonymous


def test_k_map_is_not_k_anonymity_on_the_population():
    # k = 2: the raw population holds the research classes (20,M), (21,F), (31,F) with 2 records each, so it is
    # published as is, although (21,M) and (30,M) hold one population record each (no research record)
    pub = pipeline.publish_levels(spec(2), "0,0")
    assert pub.table.to_dict("records") == [{"age": "20", "sex": "M"}, {"age": "21", "sex": "F"},
                                            {"age": "31", "sex": "F"}]
    with pytest.raises(UnsatisfiableError):
        table, hs = population()
        pipeline.publish_levels(RunSpec.build(table, hs, "flash", k=2), "0,0")


def test_the_gate_publishes_the_research_rows_without_the_marker():
    pub = pipeline.publish_levels(spec(3, 1 / 3), "1,0")
    # (20-21,F) fails: rows 3 and 10 suppressed; research rows 0 and 6 published, in population order
    assert pub.rows.tolist() == [0, 6]
    assert pub.table.to_dict("records") == [{"age": "20-21", "sex": "M"}, {"age": "30-31", "sex": "F"}]
    assert pub.report["research_subset"] == {"column": "r", "population_records": 12, "research_records": 3,
                                             "written": 2, "suppressed": 1, "population_suppressed": 2}
    checks = {c["model"]: c for c in pub.report["model_checks"]}
    assert checks["k-map-population-table"]["value"] == 3  # (20-21,M) of 3 population records


def test_flash_chooses_a_node_that_holds():
    pub = pipeline.run(spec(3))
    levels = tuple(pub.result.transformation[c] for c in ("age", "sex"))
    assert FAILING_RECORDS[levels] == 0
    assert sorted(pub.rows.tolist()) == [0, 3, 6]


def test_the_gate_refuses_a_tampered_table():
    s = spec(3)
    table, _ = population()
    result = compute(s)
    gate.publish(result, s, table, result.hierarchies)  # as found: it holds
    for col in ("age", "sex"):  # the raw values back: every research class of 2 population records
        result.output[col] = table.frame[col].to_numpy()
    with pytest.raises(VerificationError, match="3-map against the population table does not hold: 3 equivalence"):
        gate.publish(result, s, table, result.hierarchies)


def test_with_delta_presence_one_marker():
    table, hs = population()
    models = [KMapPopulationTable(3, "r"), DeltaPresence(0.0, 0.5, "r")]
    assert research_column(models) == "r"
    pub = pipeline.run(RunSpec.build(table, hs, "flash", k=1, models=models))
    assert set(pub.rows.tolist()) <= {0, 3, 6}
    other = table.frame.assign(r2=table.frame["r"])
    with pytest.raises(InputError, match="mark the research subset with different columns"):
        pipeline.run(RunSpec.build(Table(other, {"age": "qi", "sex": "qi", "r": "insensitive", "r2": "insensitive"}),
                                   hs, "flash", k=1, models=[KMapPopulationTable(3, "r"), DeltaPresence(0, 1, "r2")]))


def _random(seed: int) -> tuple[Table, dict]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 50))
    files, frame = {}, {}
    for name in ("a", "b"):
        leaves = [f"{name}{i}" for i in range(int(rng.integers(2, 6)))]
        files[name] = "".join(f"{v};{name}g{i % 2};*\n" for i, v in enumerate(leaves))
        frame[name] = rng.choice(leaves, n)
    frame["r"] = rng.choice(["1", "0"], n, p=[0.3, 0.7])
    table = Table(pd.DataFrame(frame), {"a": "qi", "b": "qi", "r": "insensitive"})
    return table, {c: parse_hierarchy(files[c], c) for c in ("a", "b")}


def _records_to_suppress(table: Table, hs: dict, levels: list[int], k: int) -> int:
    """Independent recount: the research records of the classes that hold a research record and fewer than k
    population records."""
    frame = table.frame.copy()
    for col, level in zip(("a", "b"), levels):
        frame[col] = [hs[col].ancestor(v, level) for v in frame[col]]
    grouped = frame.groupby(["a", "b"])["r"].agg(size="size", research=lambda s: int((s == "1").sum()))
    return int(grouped.loc[(grouped["research"] > 0) & (grouped["size"] < k), "research"].sum())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("limit", [0.0, 0.15])
def test_flash_equals_exhaustive_and_the_tags_follow_the_recount(seed, limit):
    table, hs = _random(seed)
    k = 4
    model = KMapPopulationTable(k, "r")
    outcomes = []
    for algorithm in ("flash", "exhaustive"):
        try:
            r = anonymize(table, hs, algorithm, k=1, suppression_limit=limit, models=[model])
            outcomes.append((r.search["optimum_value"], int(r.suppressed.sum())))
        except UnsatisfiableError:
            outcomes.append(None)
    assert outcomes[0] == outcomes[1]
    s = RunSpec.build(table, hs, "flash", models=[KAnonymity(1), model], suppression_limit=limit)
    data = solution_lattice.evaluate(s)
    budget = int(np.floor(limit * int((table.frame["r"] == "1").sum()) + 1e-9))
    for levels, tag in zip(data["nodes"]["levels"], data["nodes"]["tag"]):
        lv = [int(x) for x in levels.split(",")]
        assert (tag in "Aa") == (_records_to_suppress(table, hs, lv, k) <= budget), levels


@pytest.mark.parametrize("algorithm", sorted(a for a in ALGORITHMS if a != "full-domain"))
def test_every_algorithm_honours_or_refuses_it(algorithm):
    """Every algorithm refuses the model (naming those that can) or publishes through the gate; recounted here on
    the whole population's output: the population records sharing each published research row's cells."""
    table, hs = _random(3)
    model = KMapPopulationTable(4, "r")
    spec = RunSpec.build(table, hs, algorithm, k=1, models=[model], suppression_limit=0.1)
    if model.name not in ALGORITHMS[algorithm].models:
        with pytest.raises(InputError, match="algorithms that can"):
            pipeline.run(spec)
        return
    try:
        pub = pipeline.run(spec)
    except UnsatisfiableError:
        return
    research = (table.frame["r"] == "1").to_numpy()
    assert set(pub.rows.tolist()) <= set(np.flatnonzero(research).tolist())
    output = pub.result.output
    released = ~np.asarray(pub.result.suppressed, dtype=bool)
    keys = output["a"].astype(str) + "\x1f" + output["b"].astype(str)
    population_counts = keys[released].value_counts()
    assert all(population_counts[keys.iloc[r]] >= 4 for r in pub.rows), algorithm
