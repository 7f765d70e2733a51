"""The models on sensitive values with a research subset (δ-presence or k-map against a population table): each
counts the sensitive values of the published (research) records only, with the research subset's table
distribution (definitions.md, "The unit counted: the published record").

A population of 26 records, 15 of them in the research subset, two QIs (age: 20/25/30/35 -> 20-29/30-39 -> *;
sex: F/M -> *), a numeric sensitive column whose population-only records add values (and the value 9, which no
research record has). Every bottom class is diverse when its population records are counted, some are one-valued on
their research records, and age 35 holds no research record at all (frequency-set tuples counting 0, and classes
counting 0 at every node that keeps the age). The
expected outcome is recomputed here by brute force in plain Python over the 6 nodes of the lattice: the node the
run publishes satisfies the model on the research records and no node below it does, and the published table is
exactly that node's generalization of the research records.

Before the fix, a search grouping the frequency set by counting (Flash on 512 tuples or more) dropped the classes
of the tuples counting 0 and rolled the sensitive histograms up through an unset mapping: bincount raised
"'list' argument must have no negative elements" (or counted the values into a wrong class)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import replace

import pandas as pd
import pytest

from anonymizer_app.engine import Table, parse_hierarchy
from anonymizer_app.engine import privacy as P
from anonymizer_app.engine.errors import InputError, UnsatisfiableError, VerificationError
from anonymizer_app.engine.run import gate, pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.search import lattice

# (age, sex, sal, in research subset)
ROWS = [
    ("20", "F", "1", "1"), ("20", "F", "1", "1"), ("20", "F", "2", "0"), ("20", "F", "9", "0"),
    ("20", "M", "2", "1"), ("20", "M", "2", "1"), ("20", "M", "1", "0"),
    ("25", "F", "1", "1"), ("25", "F", "3", "0"),
    ("25", "M", "3", "1"), ("25", "M", "3", "1"), ("25", "M", "9", "0"),
    ("30", "F", "4", "1"), ("30", "F", "4", "1"), ("30", "F", "1", "0"),
    ("30", "M", "2", "1"), ("30", "M", "9", "0"), ("30", "M", "3", "0"),
    ("35", "F", "3", "0"), ("35", "F", "1", "0"), ("35", "F", "4", "0"),
    ("35", "M", "2", "0"), ("35", "M", "9", "0"),
    ("20", "M", "4", "1"), ("30", "F", "2", "1"), ("25", "F", "4", "1"),
]
AGE = {0: {"20": "20", "25": "25", "30": "30", "35": "35"},
       1: {"20": "20-29", "25": "20-29", "30": "30-39", "35": "30-39"},
       2: {"20": "*", "25": "*", "30": "*", "35": "*"}}
SEX = {0: {"F": "F", "M": "M"}, 1: {"F": "*", "M": "*"}}
NODES = [(a, s) for a in range(3) for s in range(2)]
POPULATION = {"delta": lambda: P.DeltaPresence(0.0, 1.0, "res"), "kmap": lambda: P.KMapPopulationTable(1, "res")}


def frame() -> pd.DataFrame:
    return pd.DataFrame(ROWS, columns=["age", "sex", "sal", "res"])


def hierarchies() -> dict:
    return {"age": parse_hierarchy("20;20-29;*\n25;20-29;*\n30;30-39;*\n35;30-39;*\n", "age"),
            "sex": parse_hierarchy("F;*\nM;*\n", "sex")}


def table() -> Table:
    return Table(frame(), {"age": "qi", "sex": "qi", "sal": "sensitive", "res": "insensitive"})


# -- the models in plain Python: shares of the research records, the table's over every research record ------------

RESEARCH = [r for r in ROWS if r[3] == "1"]
TABLE = Counter(r[2] for r in RESEARCH)
VALUES = sorted(TABLE, key=float)  # the research subset's values, in numeric order (9 is not among them)
P_TABLE = {v: TABLE[v] / len(RESEARCH) for v in VALUES}


def shares(vals: list[str]) -> dict[str, float]:
    c = Counter(vals)
    return {v: c[v] / len(vals) for v in VALUES}


def distinct(l):  # noqa: E741
    return lambda vals: len(set(vals)) >= l


def entropy(l):  # noqa: E741
    return lambda vals: -sum(q * math.log(q) for q in shares(vals).values() if q > 0) >= math.log(l) - 1e-9


def recursive(c, l):  # noqa: E741
    def holds(vals):
        r = sorted(Counter(vals).values(), reverse=True)
        return len(r) >= l and r[0] < c * sum(r[l - 1:])
    return holds


def t_equal(t):
    return lambda vals: 0.5 * sum(abs(shares(vals)[v] - P_TABLE[v]) for v in VALUES) <= t + 1e-9


def t_ordered(t):
    def holds(vals):
        q, run, total = shares(vals), 0.0, 0.0
        for v in VALUES:
            run += q[v] - P_TABLE[v]
            total += abs(run)
        return total / (len(VALUES) - 1) <= t + 1e-9
    return holds


def beta(b):
    return lambda vals: all(q <= (1 + min(b, -math.log(P_TABLE[v]))) * P_TABLE[v] + 1e-9
                            for v, q in shares(vals).items())


def delta_disclosure(d):
    return lambda vals: all(abs(math.log(q / P_TABLE[v])) < d - 1e-9 for v, q in shares(vals).items() if q > 0)


CASES = {
    "distinct-2": (lambda: P.DistinctLDiversity(2, "sal"), distinct(2)),
    "entropy-2": (lambda: P.EntropyLDiversity(2.0, "sal"), entropy(2)),
    "recursive-2-2": (lambda: P.RecursiveCLDiversity(2.0, 2, "sal"), recursive(2.0, 2)),
    "t-equal-0.25": (lambda: P.TCloseness(0.25, "equal", "sal"), t_equal(0.25)),
    "t-ordered-0.15": (lambda: P.TCloseness(0.15, "ordered", "sal"), t_ordered(0.15)),
    "beta-1": (lambda: P.BetaLikeness(1.0, "enhanced", "sal"), beta(1.0)),
    "delta-disclosure-1.2": (lambda: P.DeltaDisclosure(1.2, "sal"), delta_disclosure(1.2)),
}


def research_classes(node) -> dict[tuple, list[str]]:
    """The node's classes of research records: generalized (age, sex) -> their sensitive values."""
    classes: dict[tuple, list[str]] = defaultdict(list)
    for age, sex, sal, _ in RESEARCH:
        classes[(AGE[node[0]][age], SEX[node[1]][sex])].append(sal)
    return classes


def satisfying(holds) -> set[tuple]:
    return {node for node in NODES if all(holds(v) for v in research_classes(node).values())}


def all_rows_satisfying(holds) -> set[tuple]:
    """What counting every population record would accept (only to show the table tells the two apart)."""
    ok = set()
    for node in NODES:
        classes: dict[tuple, list[str]] = defaultdict(list)
        for age, sex, sal, _ in ROWS:
            classes[(AGE[node[0]][age], SEX[node[1]][sex])].append(sal)
        if all(holds(v) for v in classes.values()):
            ok.add(node)
    return ok


def below(a, b) -> bool:
    return a != b and all(x <= y for x, y in zip(a, b))


def test_the_table_tells_research_records_from_population_records():
    assert VALUES == ["1", "2", "3", "4"] and len(RESEARCH) == 13
    for name, (_, holds) in CASES.items():  # every model leaves some node to find and refuses the bottom
        assert satisfying(holds) and (0, 0) not in satisfying(holds), name
        if name != "entropy-2":  # counting the population records would accept other nodes
            assert satisfying(holds) != all_rows_satisfying(holds), name
    # age 35 has no research record: its classes count 0 records at every node that keeps age
    assert not any(age == "35" for age, *_ in RESEARCH)


@pytest.fixture(params=["sorted", "counted"])
def grouping(request, monkeypatch):
    """Flash groups the frequency set by sorting (small sets) or by counting (DENSE_MIN tuples or more, the path
    that failed): both are run."""
    if request.param == "counted":
        monkeypatch.setattr(lattice, "DENSE_MIN", 1)
    return request.param


@pytest.mark.parametrize("population", sorted(POPULATION))
@pytest.mark.parametrize("case", sorted(CASES))
def test_flash_publishes_a_minimal_node_that_holds_on_the_research_records(grouping, case, population):
    make, holds = CASES[case]
    spec = RunSpec.build(table(), hierarchies(), "flash", models=[POPULATION[population](), make()])
    pub = pipeline.run(spec)
    node = (int(pub.result.transformation["age"]), int(pub.result.transformation["sex"]))
    ok = satisfying(holds)
    assert node in ok
    assert not any(below(other, node) for other in ok)
    # the published table: the research records, in input order, generalized to that node, and nothing else
    expected = [(AGE[node[0]][a], SEX[node[1]][s], v) for a, s, v, _ in RESEARCH]
    assert list(pub.table.columns) == ["age", "sex", "sal"]
    assert list(pub.table.itertuples(index=False, name=None)) == expected
    assert all(c["holds"] for c in pub.report["model_checks"])


@pytest.mark.parametrize("population", sorted(POPULATION))
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_published_class_holds_with_suppression(grouping, case, population):
    """With a suppression budget the search may leave classes out: each published class (recounted from the
    published rows alone) still holds on its research records."""
    make, holds = CASES[case]
    spec = RunSpec.build(table(), hierarchies(), "flash", models=[POPULATION[population](), make()],
                         suppression_limit=0.3)
    pub = pipeline.run(spec)
    assert len(pub.table) <= len(RESEARCH)
    assert len(RESEARCH) - len(pub.table) <= int(0.3 * len(RESEARCH))
    classes: dict[tuple, list[str]] = defaultdict(list)
    for age, sex, sal in pub.table.itertuples(index=False, name=None):
        classes[(age, sex)].append(sal)
    assert classes and all(holds(v) for v in classes.values())


@pytest.mark.parametrize("algorithm", ["datafly", "mondrian"])
@pytest.mark.parametrize("case", ["distinct-2", "t-ordered-0.15", "delta-disclosure-1.2"])
def test_other_algorithms_publish_classes_that_hold_on_the_research_records(algorithm, case):
    make, holds = CASES[case]
    spec = RunSpec.build(table(), hierarchies(), algorithm, models=[P.DeltaPresence(0.0, 1.0, "res"), make()],
                         suppression_limit=0.3)
    try:
        pub = pipeline.run(spec)
    except InputError:  # no solution found: nothing published, which is also correct
        return
    classes: dict[tuple, list[str]] = defaultdict(list)
    for age, sex, sal in pub.table.itertuples(index=False, name=None):
        classes[(age, sex)].append(sal)
    assert all(holds(v) for v in classes.values())


@pytest.mark.parametrize("case,node", [("distinct-2", (0, 0)), ("recursive-2-2", (1, 0)), ("beta-1", (1, 0))])
def test_the_gate_refuses_a_class_that_holds_only_with_its_population_records(case, node):
    """A result at a node where δ-presence alone holds, presented with a model that every class of the node meets
    on its population records but not on its research records: the gate's recheck refuses it."""
    make, holds = CASES[case]
    spec = RunSpec.build(table(), hierarchies(), "full-domain", models=[P.DeltaPresence(0.0, 1.0, "res")],
                         options={"levels": f"{node[0]},{node[1]}"})
    pub = pipeline.run(spec)
    assert len(pub.table) == len(RESEARCH)
    assert node in all_rows_satisfying(holds) and node not in satisfying(holds)
    model = make()
    with_model = replace(spec, models=spec.models + (model,))
    result = replace(pub.result, models=list(pub.result.models) + [model])
    with pytest.raises(VerificationError, match="does not hold"):
        gate.publish(result, with_model, spec.table, pub.result.hierarchies)
    # the same node asked for through the pipeline is refused, not published: its research records that fail
    failing = sum(len(v) for v in research_classes(node).values() if not holds(v))
    with pytest.raises(UnsatisfiableError, match=f": {failing} record\\(s\\) would have to be suppressed"):
        pipeline.run(with_model)


def test_the_gate_accepts_the_brute_force_node():
    """...and publishes the node the brute force finds for distinct 2-diversity on the research records."""
    holds = CASES["distinct-2"][1]
    good = sorted(satisfying(holds))[0]
    spec = RunSpec.build(table(), hierarchies(), "full-domain",
                         models=[P.DeltaPresence(0.0, 1.0, "res"), P.DistinctLDiversity(2, "sal")],
                         options={"levels": f"{good[0]},{good[1]}"})
    pub = pipeline.run(spec)
    assert list(pub.table.itertuples(index=False, name=None)) == [
        (AGE[good[0]][a], SEX[good[1]][s], v) for a, s, v, _ in RESEARCH]
