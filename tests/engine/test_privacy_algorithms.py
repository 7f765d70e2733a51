"""Every algorithm with every attribute-disclosure model it accepts: verify() passes; refusals name the
algorithms that can; the optimal lattice search under l or t equals an exhaustive search."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from anonymizer_app.engine import InputError, Table, UnsatisfiableError, anonymize, parse_hierarchy
from anonymizer_app.engine.algorithms import ALGORITHMS
from anonymizer_app.engine.privacy import (
    AlphaKAnonymity,
    AverageRisk,
    BetaLikeness,
    DeltaDisclosure,
    DeltaPresence,
    DistinctLDiversity,
    EntropyLDiversity,
    KMap,
    PopulationUniqueness,
    RecursiveCLDiversity,
    TCloseness,
)
from anonymizer_app.engine.privacy.distributions import mark_research_subset

set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "anonymizer-tests-hypothesis")

MODEL_SETS = [
    [DistinctLDiversity(2)],
    [EntropyLDiversity(1.8)],
    [RecursiveCLDiversity(3, 2)],
    [TCloseness(0.35)],
    [TCloseness(0.3, "ordered", "pay")],
    [BetaLikeness(3, "basic")],
    [BetaLikeness(2)],
    [DistinctLDiversity(2), TCloseness(0.4, "ordered", "pay")],
    [AverageRisk(0.2)],
    [AlphaKAnonymity(0.7, 3)],
    [DeltaDisclosure(1.2)],
    [KMap(6, 0.5)],
    [PopulationUniqueness(0.01, 0.1)],
    [DistinctLDiversity(2), AverageRisk(0.15)],
]


def _table(seed: int, n: int = 80) -> Table:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(20, 60, n).astype(str),
        "zip": rng.choice(["z1", "z2", "z3", "z4"], n),
        "dis": rng.choice(["flu", "hiv", "cancer"], n, p=[0.5, 0.25, 0.25]),
        "pay": (rng.integers(1, 6, n) * 1000).astype(str),
    })
    return Table(frame, {"age": "qi", "zip": "qi", "dis": "sensitive", "pay": "insensitive"})


def _accepts(name, models) -> bool:
    return all(m.name in ALGORITHMS[name].models for m in models)


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), which=st.integers(0, len(MODEL_SETS) - 1), limit=st.sampled_from([0.0, 0.1]),
       algorithm=st.sampled_from(sorted(a for a in ALGORITHMS if a not in ("full-domain", "m-invariance"))))  # levels; a history
def test_every_algorithm_honours_the_models_it_accepts(seed, which, limit, algorithm):
    models = MODEL_SETS[which]
    table = _table(seed)
    if not _accepts(algorithm, models):
        with pytest.raises(InputError, match="algorithms that can"):
            anonymize(table, None, algorithm, k=2, suppression_limit=limit, models=models)
        return
    try:
        result = anonymize(table, None, algorithm, k=2, suppression_limit=limit, models=models)
    except UnsatisfiableError:
        return
    assert result.verified  # anonymize() raised otherwise
    assert "dis" in result.report()["attack"]


def _small_problem(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 40))
    names = ["a", "b"]
    rows = {}
    for name in names:
        leaves = [f"{name}{i}" for i in range(int(rng.integers(2, 6)))]
        rows[name] = "".join(f"{v};{name}g{i % 2};*\n" for i, v in enumerate(leaves))
    frame = pd.DataFrame({
        "a": rng.choice([f"a{i}" for i in range(rows['a'].count(chr(10)))], n),
        "b": rng.choice([f"b{i}" for i in range(rows['b'].count(chr(10)))], n),
        "s": rng.choice(["x", "y", "z"], n),
    })
    table = Table(frame, {"a": "qi", "b": "qi", "s": "sensitive"})
    return table, {c: parse_hierarchy(rows[c], c) for c in names}


@settings(max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), limit=st.sampled_from([0.0, 0.2]),
       models=st.sampled_from([[DistinctLDiversity(2)], [EntropyLDiversity(2)], [TCloseness(0.25)],
                               [RecursiveCLDiversity(2, 2)]]))
def test_flash_equals_exhaustive_under_l_and_t(seed, limit, models):
    table, hs = _small_problem(seed)
    outcomes = []
    for algorithm in ("flash", "exhaustive"):
        try:
            r = anonymize(table, hs, algorithm, k=2, suppression_limit=limit, models=models)
            outcomes.append((r.search["optimum_value"], int(r.suppressed.sum())))
        except UnsatisfiableError:
            outcomes.append(None)
    assert outcomes[0] == outcomes[1]


def test_non_monotonic_search_is_exhaustive_and_said_so():
    table = _table(3)
    r = anonymize(table, None, "flash", k=2, suppression_limit=0.1, models=[EntropyLDiversity(1.8)])
    assert r.search["monotonic_models"] is False
    assert "exhaustive" in r.search["strategy"]
    r = anonymize(table, None, "flash", k=2, suppression_limit=0.1, models=[DistinctLDiversity(2)])
    assert r.search["monotonic_models"] is True


def test_refusal_lists_the_algorithms_that_can():
    with pytest.raises(InputError) as err:
        anonymize(_table(1), None, "koptimize", k=2, models=[TCloseness(0.3)])
    message = str(err.value)
    assert "k-Optimize cannot honour t-closeness" in message
    assert "Flash" in message and "Mondrian" in message and "Anatomy" not in message


def test_models_need_a_column():
    frame = _table(1).frame.drop(columns=["dis"])
    table = Table(frame, {"age": "qi", "zip": "qi"})
    with pytest.raises(InputError, match="needs a sensitive column"):
        anonymize(table, None, "flash", k=2, models=[DistinctLDiversity(2)])
    with pytest.raises(InputError, match="quasi-identifier"):
        anonymize(table, None, "flash", k=2, models=[DistinctLDiversity(2, "age")])


def test_combined_models_each_on_its_own_column():
    table = _table(7, 200)
    models = [RecursiveCLDiversity(4, 2), TCloseness(0.3, "ordered", "pay")]
    r = anonymize(table, None, "flash", k=5, suppression_limit=0.05, models=models)
    assert [m.column for m in r.models[1:]] == ["dis", "pay"]
    assert set(r.report()["attack"]) == {"dis", "pay"}


def test_hierarchical_t_closeness_uses_the_sensitive_hierarchy():
    table = _table(5, 120)
    h = parse_hierarchy("flu;infection;*\nhiv;infection;*\ncancer;tumour;*\n", "dis")
    r = anonymize(table, {"dis": h}, "mondrian", k=2, models=[TCloseness(0.2, "hierarchical")])
    assert r.verified
    with pytest.raises(InputError, match="hierarchy"):
        anonymize(table, None, "mondrian", k=2, models=[TCloseness(0.2, "hierarchical")])


def test_delta_presence_on_a_population():
    rng = np.random.default_rng(2)
    pop = pd.DataFrame({"age": rng.integers(20, 60, 200).astype(str), "zip": rng.choice(["a", "b", "c"], 200)})
    frame = mark_research_subset(pop, rng.random(200) < 0.5)
    table = Table(frame, {"age": "qi", "zip": "qi", "research subset": "insensitive"})
    model = DeltaPresence(0.3, 0.7, "research subset")
    for algorithm in ("flash", "datafly", "mondrian", "kmember"):
        r = anonymize(table, None, algorithm, k=2, suppression_limit=0.05, models=[model])
        assert r.verified
